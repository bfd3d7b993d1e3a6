/// The graph bookkeeping every diffuser node shares, independent of its value type.
///
/// A node's `serializer` decides which lock guards its cache; see `Serializer`.
@usableFromInline
class AnyNode {
    /// The serializer of the graph this node belongs to, or `nil` while the node has
    /// never been part of a run. Guarded by `Serializer.graphLock`.
    final var serializer: Serializer?

    @usableFromInline
    init() {}

    /// Calls `body` with every direct child, in order.
    func forEachChild(_ body: (AnyNode) -> Void) {}
}

/// A node of a diffuser tree: something that reacts to a value of type `A`.
///
/// What a node does on a value is its `step`, a function stored in the node rather than
/// an overridden method. Steps are created in each node kind's `@inlinable` initializer,
/// so when a client builds a `Diffuser<Screen>` the steps are compiled for `Screen`: no
/// generic metadata lookups or value-witness calls on the hot path, which a generic
/// class's overridden method would pay on every call.
///
/// Subclasses hold their own state (a cache, a flag); a step is only ever called with
/// the graph's serializer held, so that state needs no further locking. A throwing step
/// aborts the pass: a node that caches leaves its cache unchanged then, so that the next
/// pass retries.
@usableFromInline
class Node<A>: AnyNode {
    @usableFromInline
    typealias Step = (Node<A>, A) throws -> Void

    @usableFromInline
    final let step: Step

    @inlinable
    init(step: @escaping Step) {
        self.step = step
    }

    /// Runs this node on `value`.
    @inlinable
    @inline(__always)
    final func run(_ value: A) throws {
        try step(self, value)
    }
}
