/// Which maps hand their parts over as owned, and which gates may keep such a part by
/// exchanging it with their cache (see `Node.Step`).
///
/// A map's part is usually a new value: the closure `{ $0.sections[i] }` returns a copy,
/// which the map destroys after its child ran. A gate that keeps the part would copy it
/// once more, retaining every reference inside it, and the map's destroy would release
/// them all again. A map built with `MapNode(owning:_:)` hands the part over as owned,
/// and a gate built with `GateNode(taking:_:)` exchanges it with its cache instead: the
/// map then destroys the previous cached value where it would have destroyed the part.
/// The semantics are the same: such a gate's `keep` is the identity and calls no user
/// code.
///
/// The two initializers are constrained to these markers, so that only the forms for
/// which the promise holds can make them; the check is done by the compiler, nothing is
/// looked up when a tree is built or run. Other forms (the C ABI's transforms, whose
/// parts are released through their type, its equalities, whose `keep` retains, any
/// `calling:` value) take the ordinary path.

/// A predicate or equality whose `keep` is the value itself.
@usableFromInline
protocol KeepsItself {}

extension StandardEquality: KeepsItself {}
extension ClosureChange: KeepsItself {}
extension Inequality: KeepsItself where Equality: KeepsItself {}

/// A transform whose `select` returns a new value the map owns, and whose `withSelected`
/// is `select`'s result lent to the body and then destroyed.
@usableFromInline
protocol SelectsOwned: TransformFunction {
    /// `select` of the value at `value`, which is lent without a copy. `value` must point
    /// at memory only the run reaches, as a step's value does (see `callInPlace`).
    func select(at value: UnsafePointer<Input>) throws -> Output
}

extension ClosureTransform: SelectsOwned {
    /// The closure gets the value where it lies (`callInPlace`).
    @inlinable
    func select(at value: UnsafePointer<Input>) -> Output {
        callInPlace(body, at: value)
    }
}

extension ThrowingClosureTransform: SelectsOwned {
    /// The closure gets the value where it lies (`callInPlace`).
    @inlinable
    func select(at value: UnsafePointer<Input>) throws -> Output {
        try callInPlace(body, at: value)
    }
}

extension KeyPathTransform: SelectsOwned {
    /// The key path runtime gets the value lent (`withBorrowed`).
    @inlinable
    func select(at value: UnsafePointer<Input>) -> Output {
        withBorrowed(value) { select($0) }
    }
}
