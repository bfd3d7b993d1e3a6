/// The children of a fan-out node, in order, each held by a strong reference that the
/// list took when it was made.
///
/// One headerless buffer instead of an array of references plus an array of unretained
/// copies for calling them: building a fan-out allocates once for its children, and a
/// pass calls them without retaining or releasing them. The node that owns the list
/// releases it once, in its `deinit` (`releaseAll()`); the list is never copied out of
/// that node.
@usableFromInline
struct ChildNodes<A> {
    @usableFromInline
    let nodes: UnsafeMutableBufferPointer<Unmanaged<Node<A>>>

    /// Takes a reference to the node of every diffuser in `diffusers`.
    @inlinable
    init(_ diffusers: [Diffuser<A>]) {
        let nodes = UnsafeMutableBufferPointer<Unmanaged<Node<A>>>.allocate(capacity: diffusers.count)
        diffusers.withUnsafeBufferPointer { source in
            for i in source.indices {
                (nodes.baseAddress! + i).initialize(to: .passRetained(source[i].node))
            }
        }
        self.nodes = nodes
    }

    @inlinable
    var count: Int { nodes.count }

    /// Child `i`, unretained: valid while the owning node lives.
    @inlinable
    subscript(i: Int) -> Unmanaged<Node<A>> { nodes[i] }

    /// Whether every child is a map calling a `Transform` over a gate that identical
    /// values satisfy and that identifies them by one word: the children a fan-out may
    /// run in its own loop (see
    /// `FanOutNode.init(_:mapsCalling:)`). Asked once, when the fan-out is made.
    @inlinable
    func allAreLendingMaps<Transform: TransformFunction>(calling _: Transform.Type) -> Bool
    where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        for child in nodes {
            // The exact class (a map node is final), read without a reference.
            let fits = child._withUnsafeGuaranteedRef { node in
                guard ObjectIdentifier(type(of: node)) == ObjectIdentifier(Map.self),
                      let gate = unsafeDowncast(node, to: Map.self).child.identityGate else { return false }
                return gate._withUnsafeGuaranteedRef { $0.identifiedByOneWord }
            }
            if !fits { return false }
        }
        return true
    }

    /// Calls `body` with every child, in order.
    func forEach(_ body: (AnyNode) -> Void) {
        for child in nodes { body(child.takeUnretainedValue()) }
    }

    /// Drops the references the list took and frees its buffer.
    func releaseAll() {
        for child in nodes { child.release() }
        nodes.deallocate()
    }
}
