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

    /// Runs every child, in order, on `value`.
    @inlinable
    @inline(__always)
    func run(_ value: A) throws {
        for child in nodes { try child.run(value) }
    }

    /// Runs every child, each a map calling a `Transform` that lends its parts into a
    /// gate that identifies them by one word (`allAreLendingMaps(calling:)` said so), in
    /// one loop: each part is made and checked against its gate right here, and only a
    /// part the gate does not hold goes on to the gate.
    ///
    /// A pass does exactly what calling each map would (the same transform calls, checks
    /// and order; see `MapNode.withPart`), without the call into every map's step: for a
    /// C tree, whose sections are mostly unchanged, that call and its return are most of
    /// what a child costs. The form of the maps must be known where the fan-out is made,
    /// as it is in a binding, so that the loop is compiled for it.
    @inlinable
    @inline(__always)
    func runLendingMaps<Transform: TransformFunction>(_ value: A, calling _: Transform.Type) throws
    where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        guard var child = nodes.baseAddress, !nodes.isEmpty else { return }
        let end = child + nodes.count
        // What every transform would check of the value, once (see
        // `TransformFunction.check(_:)`).
        try Unmanaged<Map>.fromOpaque(child.pointee.toOpaque())._withUnsafeGuaranteedRef { try $0.transform.check(value) }
        repeat {
            try Unmanaged<Map>.fromOpaque(child.pointee.toOpaque())._withUnsafeGuaranteedRef { map in
                try map.withPart(of: value, checked: true, LentPartGate(gate: map.gate, oneWord: true))
            }
            child += 1
        } while child != end
    }

    /// Whether every child is a map calling a `Transform` over a gate that identical
    /// values satisfy and that identifies them by one word: the children a fan-out may
    /// run in its own loop (see `runLendingMaps(_:calling:)`). Asked once, when the
    /// fan-out is made.
    @inlinable
    func allAreLendingMaps<Transform: TransformFunction>(calling _: Transform.Type) -> Bool
    where Transform.Input == A {
        guard Transform.lendsParts else { return false }
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
