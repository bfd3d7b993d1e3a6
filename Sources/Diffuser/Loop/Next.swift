/// What an update returns for one event: maybe a new model, and the effects to run.
///
/// The name and shape are Mobius's, which the loop was made for:
///
/// ```swift
/// switch event {
/// case .loginClicked:  return .next(model.with(loading: true), effects: [.login(model.user)])
/// case .ignored:       return .noChange
/// case .retry:         return .dispatch([.login(model.user)])
/// }
/// ```
///
/// A `Next` without a model leaves the model as it was and publishes nothing: observers
/// and feedbacks hear only of new models. Its effects still run.
public struct Next<Model, Effect> {
    /// The new model, or `nil` to keep the current one.
    @inlinable
    public var model: Model? { _model }
    /// The model's storage: a loop's step moves the new model out of it rather than
    /// copying it, which would retain every reference inside.
    @usableFromInline
    var _model: Model?
    /// The effects to hand to the effect handlers, in order.
    public let effects: [Effect]

    /// A next with `model` (or none) and `effects`.
    @inlinable
    public init(model: Model?, effects: [Effect] = []) {
        self._model = model
        self.effects = effects
    }

    /// A new model, and optionally effects.
    @inlinable
    public static func next(_ model: consuming Model, effects: consuming [Effect] = []) -> Next {
        Next(model: model, effects: effects)
    }

    /// Effects only: the model stays as it was.
    @inlinable
    public static func dispatch(_ effects: consuming [Effect]) -> Next {
        Next(model: nil, effects: effects)
    }

    /// Neither a new model nor effects.
    @inlinable
    public static var noChange: Next { Next(model: nil, effects: []) }

    /// Whether this next holds a new model.
    @inlinable
    public var hasModel: Bool { model != nil }
}

extension Next: Equatable where Model: Equatable, Effect: Equatable {}

extension Next: CustomStringConvertible {
    public var description: String {
        let part = model.map { "model: \($0)" } ?? "no model"
        return "Next(\(part), effects: \(effects))"
    }
}

/// Reflection (`dump`, `Mirror`, and what prints or compares values through it) shows a
/// next as its public properties, `model` and `effects`, rather than the storage of the
/// model (`_model`), which a step moves the model out of.
extension Next: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["model": model as Any, "effects": effects], displayStyle: .struct)
    }
}

/// Where a loop starts: a model and the effects to run once it is published.
///
/// Mobius's `First`. Start effects typically load what the first model needs.
public struct First<Model, Effect> {
    /// The model the run starts from.
    public let model: Model
    /// The effects handed to the handlers once the model is published, in order.
    public let effects: [Effect]

    /// A start from `model`, with `effects`.
    @inlinable
    public init(_ model: Model, effects: [Effect] = []) {
        self.model = model
        self.effects = effects
    }
}

extension First: Equatable where Model: Equatable, Effect: Equatable {}

extension Next: Sendable where Model: Sendable, Effect: Sendable {}
extension First: Sendable where Model: Sendable, Effect: Sendable {}
