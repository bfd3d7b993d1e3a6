/// Feeds its child a part of the value: `map(transform, child)`.
///
/// The transform is called on every value that reaches the node, right before the
/// child runs; gating happens in the child, which gets the part as owned where the
/// transform returns a new value (`init(owning:_:)`). A key path to a stored property needs no
/// call: `FieldNode` reads the part in place instead.
@usableFromInline
final class MapNode<A, Transform: TransformFunction>: Node<A> where Transform.Input == A {
    @usableFromInline
    let transform: Transform
    @usableFromInline
    let child: Node<Transform.Output>

    /// A map of `child` through `transform`, which lends each part to the child
    /// (`transform.withSelected`).
    @inlinable
    convenience init(_ transform: Transform, _ child: Node<Transform.Output>) {
        self.init(transform, child, step: { node, value, _ in
            let me = unsafeDowncast(node, to: MapNode<A, Transform>.self)
            let child = me.child
            try withBorrowed(value) { try me.transform.withSelected($0) { try child.run($0) } }
        })
    }

    /// Called only by `init(_:_:)` and by `init(owning:_:)`, with the step each makes.
    @inlinable
    init(_ transform: Transform, _ child: Node<Transform.Output>, step: @escaping Step) {
        self.transform = transform
        self.child = child
        super.init(step: step)
    }

    override func forEachChild(_ body: (AnyNode) -> Void) { body(child) }
}

extension MapNode where Transform: SelectsOwned {
    /// A map whose transform returns new values: it hands each part to its child as
    /// owned (see `Node.Step`), so that a gate may keep it without a copy, and lends the
    /// transform its input where it lies (`select(at:)`).
    @inlinable
    convenience init(owning transform: Transform, _ child: Node<Transform.Output>) {
        self.init(transform, child, step: { node, value, _ in
            let me = unsafeDowncast(node, to: MapNode<A, Transform>.self)
            try me.child.run(taking: { try me.transform.select(at: value) })
        })
    }
}
