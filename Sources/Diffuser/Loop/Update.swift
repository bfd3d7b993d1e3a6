/// The pure heart of a loop: given the current model and an event, what happens next.
///
/// Two forms, for the two families of users:
/// - Mobius's: `(Model, Event) throws -> Next<Model, Effect>`, a new model (or none)
///   and effects;
/// - Spin's and RaspSwift's reducer: `(Model, Event) -> Model`, which always yields a
///   model and never an effect (feedbacks do the side effects then).
///
/// An update may throw: the loop then keeps its model, reports the error to its
/// inspector and goes on with the next event. It must not have side effects; that is
/// what makes a journal's replay and an `UpdateSpec` mean something.
public struct Update<Model, Event, Effect> {
    /// Computes the next step.
    public let next: (Model, Event) throws -> Next<Model, Effect>

    /// An update in Mobius's form.
    @inlinable
    public init(_ next: @escaping (Model, Event) throws -> Next<Model, Effect>) {
        self.next = next
    }

    /// An update from a reducer: every event yields a model (published even if equal to
    /// the previous one; observers filter with key paths) and no effect.
    @inlinable
    public static func reducer(_ reduce: @escaping (Model, Event) throws -> Model) -> Update {
        Update { model, event in Next(model: try reduce(model, event)) }
    }

    /// An update from a reducer that changes the model in place, like RaspSwift's
    /// `mutating func apply(event:)`.
    @inlinable
    public static func mutating(_ apply: @escaping (inout Model, Event) throws -> Void) -> Update {
        Update { model, event in
            var copy = model
            try apply(&copy, event)
            return Next(model: copy)
        }
    }

    /// Runs the update.
    @inlinable
    public func callAsFunction(_ model: Model, _ event: Event) throws -> Next<Model, Effect> {
        try next(model, event)
    }
}

/// An update is called one step at a time, by the loop that holds it.
extension Update: @unchecked Sendable {}
