/// What a gating node (`GateNode`, `OnceNode`) runs on a value it lets through: a child
/// node, or an effect held in the gating node itself.
///
/// Why an effect is held in place: `into(effect)` is one combinator, and as one node it
/// costs one object instead of two, and a run one call less where the effect runs. A
/// gate over a child node (`intoWhen(_, diffuser)`, `intoAll`) runs the child as any
/// parent does.
@usableFromInline
protocol Downstream {
    associatedtype Value
    /// Runs on the value at `value`, valid and unchanged for the call.
    func run(at value: UnsafePointer<Value>) throws
    /// The child node, if this is one: for the graph's bookkeeping (`AnyNode`).
    var childNode: AnyNode? { get }
}

/// A child node as what a gate runs.
@usableFromInline
struct ChildNode<Value>: Downstream {
    @usableFromInline
    let node: Node<Value>

    @inlinable
    init(_ node: Node<Value>) {
        self.node = node
    }

    @inlinable
    func run(at value: UnsafePointer<Value>) throws {
        try node.run(at: value)
    }

    @inlinable
    var childNode: AnyNode? { node }
}

/// An effect as what a gate runs; the effect borrows the value where it lies
/// (`withBorrowed`), as `EffectNode` lends it.
@usableFromInline
struct CalledEffect<Effect: EffectFunction>: Downstream {
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ effect: Effect) {
        self.effect = effect
    }

    @inlinable
    func run(at value: UnsafePointer<Effect.Value>) throws {
        try withBorrowed(value) { try effect.run($0) }
    }

    @inlinable
    var childNode: AnyNode? { nil }
}
