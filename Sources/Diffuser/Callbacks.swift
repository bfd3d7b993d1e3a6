/// The forms in which a node holds the user code it calls: an effect, a "did change"
/// predicate, an equality, a transform.
///
/// The closure combinators wrap their closures (`ClosureEffect` and friends). The
/// `calling:` combinators take any conforming value instead: a struct holding a C
/// function and its context (what the C ABI does), or a value whose method is the
/// effect. Both forms have the same semantics; only the call differs.

/// A side effect a node runs on a value.
public protocol EffectFunction {
    associatedtype Value
    /// Runs the effect; a throw aborts the run.
    func run(_ value: Value) throws
}

/// Decides whether a change from `old` to `new` is worth reacting to (`intoWhen`).
public protocol ChangeFunction {
    associatedtype Value
    /// Whether `new` differs from `old` in a way the gate should pass; a throw aborts
    /// the run.
    func didChange(_ old: Value, _ new: Value) throws -> Bool
    /// What the gate stores to keep `value` past the run; by default `value` itself.
    /// See `EqualityFunction.keep(_:)`.
    func keep(_ value: Value) throws -> Value
}

extension ChangeFunction {
    /// `value` itself: a Swift value keeps itself.
    @inlinable
    public func keep(_ value: Value) -> Value { value }
}

/// Decides whether a new value equals the previous one, for the gates of `into` and
/// `intoAll`: a value that is not equal passes the gate.
///
/// Whatever it answers, the gate keeps the new value as the one the next run is
/// compared with (`into` is `intoWhen(!=)`). `equals` is called for every comparison:
/// the gate never assumes that a value equals itself.
public protocol EqualityFunction {
    associatedtype Value
    /// Whether `new` equals `old`, the previous run's value; a throw aborts the run.
    func equals(_ old: Value, _ new: Value) throws -> Bool
    /// What the gate stores to keep `value` past the run: by default `value` itself.
    ///
    /// For bindings whose values are only borrowed during a run (the C ABI's values), so
    /// that a gate takes a reference only when it keeps one. A throw aborts the run
    /// there, cache unchanged.
    func keep(_ value: Value) throws -> Value
}

extension EqualityFunction {
    /// `value` itself: a Swift value keeps itself.
    @inlinable
    public func keep(_ value: Value) -> Value { value }
}

/// Selects the part of a value a `map` feeds its child.
public protocol TransformFunction {
    associatedtype Input
    associatedtype Output
    /// The selected part; a throw aborts the run.
    func select(_ value: Input) throws -> Output
    /// Calls `body` with the part `select(value)` would return, and disposes of the part
    /// afterwards: what a `map` does on every run. A throw from either aborts the run.
    ///
    /// The default is `body(select(value))`; a binding whose parts must be released
    /// after use (a C transform's output) releases them here.
    func withSelected(_ value: Input, _ body: (Output) throws -> Void) throws
}

extension TransformFunction {
    /// Lends `select(value)` to `body`, then destroys it.
    @inlinable
    public func withSelected(_ value: Input, _ body: (Output) throws -> Void) throws {
        try body(select(value))
    }
}

/// A Swift closure as an effect.
@usableFromInline
struct ClosureEffect<Value>: EffectFunction {
    @usableFromInline
    let body: (Value) throws -> Void

    @inlinable
    init(_ body: @escaping (Value) throws -> Void) {
        self.body = body
    }

    @inlinable
    func run(_ value: Value) throws {
        try body(value)
    }
}

/// A Swift closure as a "did change" predicate.
@usableFromInline
struct ClosureChange<Value>: ChangeFunction {
    @usableFromInline
    let body: (Value, Value) throws -> Bool

    @inlinable
    init(_ body: @escaping (Value, Value) throws -> Bool) {
        self.body = body
    }

    @inlinable
    func didChange(_ old: Value, _ new: Value) throws -> Bool {
        try body(old, new)
    }
}

/// A Swift closure as a transform: `map(transform, ...)`.
///
/// Separate from `ThrowingClosureTransform` because a call that cannot throw lets the
/// optimizer have the closure write its part straight where the map's child reads it
/// (`Node.run(taking:)`): after a call that may throw, the part is copied there instead.
@usableFromInline
struct ClosureTransform<Input, Output>: TransformFunction {
    @usableFromInline
    let body: (Input) -> Output

    @inlinable
    init(_ body: @escaping (Input) -> Output) {
        self.body = body
    }

    @inlinable
    func select(_ value: Input) -> Output {
        body(value)
    }
}

/// A Swift closure that may throw as a transform: `map(throwing: transform, ...)`.
@usableFromInline
struct ThrowingClosureTransform<Input, Output>: TransformFunction {
    @usableFromInline
    let body: (Input) throws -> Output

    @inlinable
    init(_ body: @escaping (Input) throws -> Output) {
        self.body = body
    }

    @inlinable
    func select(_ value: Input) throws -> Output {
        try body(value)
    }
}

/// A key path as a transform: `map(\.title, ...)`.
@usableFromInline
struct KeyPathTransform<Input, Output>: TransformFunction {
    @usableFromInline
    let keyPath: KeyPath<Input, Output>

    @inlinable
    init(_ keyPath: KeyPath<Input, Output>) {
        self.keyPath = keyPath
    }

    @inlinable
    func select(_ value: Input) -> Output {
        value[keyPath: keyPath]
    }
}

/// `==` of an `Equatable` type: the equality of the Swift API's `into` and `intoAll`.
///
/// `==` decides every comparison, also of two values with the same bits: `Equatable`
/// does not make every value equal to itself (`Double.nan != .nan`).
@usableFromInline
struct StandardEquality<Value: Equatable>: EqualityFunction {
    @inlinable
    init() {}

    @inlinable
    func equals(_ old: Value, _ new: Value) -> Bool {
        old == new
    }
}
