/// Where a gate may keep a new value by moving it instead of copying it.
///
/// A map's part is usually a new value: the closure `{ $0.sections[i] }` returns a copy,
/// which the map destroys after its child ran. A gate that keeps the part would copy it
/// once more, retaining every reference inside it, and the map's destroy would release
/// them all again. When the map hands the part over as owned (`Node.run(taking:)`), a
/// gate whose predicate keeps values as they are moves it into its cache instead. The
/// semantics are the same: such a `keep` is the identity and calls no user code.
///
/// Both sides say so by conforming here; each check folds to a constant once a node is
/// specialized for its types. Other forms (the C ABI's transforms, whose parts are
/// released through their type, and its equalities, whose `keep` retains) take the
/// ordinary path.

/// A predicate whose `keep` is the value itself.
@usableFromInline
protocol KeepsItself {}

extension StandardEquality: KeepsItself {}
extension ClosureChange: KeepsItself {}
extension Inequality: KeepsItself where Equality: KeepsItself {}

/// A transform whose `select` returns a new value the map owns, and whose `withSelected`
/// is `select`'s result lent to the body and then destroyed.
@usableFromInline
protocol SelectsOwned {}

extension ClosureTransform: SelectsOwned {}
extension KeyPathTransform: SelectsOwned {}
