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

    /// The step a fan-out of `Steps` runs over these children, for a binding whose maps
    /// take a few forms of transform: one loop for children that are all maps of one
    /// form (`T1`, `T2`, `T3` or `T4`, in that order of preference) or of one pair
    /// (`T1` or `T2`, `T3` or `T4`), else each child in turn. Chosen once, when the
    /// fan-out is made.
    @inlinable
    func step<Steps: FanOutSteps, T1: TransformFunction, T2: TransformFunction,
              T3: TransformFunction, T4: TransformFunction>(
        of _: Steps.Type, mapsCalling _: (T1.Type, T2.Type), or _: (T3.Type, T4.Type)
    ) -> Node<A>.Step
    where Steps.Value == A, T1.Input == A, T2.Input == A, T3.Input == A, T4.Input == A,
          T1.Output == T2.Output, T3.Output == T4.Output {
        allAreLendingMaps(calling: T1.self) ? Steps.runMaps(calling: T1.self)
            : allAreLendingMaps(calling: T2.self) ? Steps.runMaps(calling: T2.self)
            : allAreLendingMaps(calling: T1.self, or: T2.self) ? Steps.runMaps(calling: T1.self, or: T2.self)
            : allAreLendingMaps(calling: T3.self) ? Steps.runMaps(calling: T3.self)
            : allAreLendingMaps(calling: T4.self) ? Steps.runMaps(calling: T4.self)
            : allAreLendingMaps(calling: T3.self, or: T4.self) ? Steps.runMaps(calling: T3.self, or: T4.self)
            : Steps.runChildren
    }

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
    ///
    /// `childGatesHold` says that every child's gate holds a value, which the loop then
    /// does not ask of each (an empty cache may hold any bytes). Returns whether that is
    /// so after the pass: a fan-out that keeps the answer passes it to later passes.
    @inlinable
    @inline(__always)
    func runLendingMaps<Transform: TransformFunction>(
        _ value: A, calling _: Transform.Type, childGatesHold: Bool
    ) throws -> Bool where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        guard let first = nodes.baseAddress, !nodes.isEmpty else { return true }
        let end = first + nodes.count
        // What every transform would check of the value, once (see
        // `TransformFunction.check(_:)`).
        try Unmanaged<Map>.fromOpaque(first.pointee.toOpaque())._withUnsafeGuaranteedRef { try $0.transform.check(value) }
        // Two copies of the loop, so that the one that runs from the second pass on does
        // not ask each gate whether it holds a value.
        var child = first
        if _fastPath(childGatesHold) {
            repeat {
                try Unmanaged<Map>.fromOpaque(child.pointee.toOpaque())._withUnsafeGuaranteedRef { map in
                    try map.withPart(of: value, checked: true, LentPartGate(gate: map.gate, oneWord: true, holdsValue: true))
                }
                child += 1
            } while child != end
            return true
        }
        repeat {
            try Unmanaged<Map>.fromOpaque(child.pointee.toOpaque())._withUnsafeGuaranteedRef { map in
                try map.withPart(of: value, checked: true, LentPartGate(gate: map.gate, oneWord: true))
            }
            child += 1
        } while child != end
        // The gates that hold a value now always will; most trees are full after one pass.
        child = first
        repeat {
            let holds = Unmanaged<Map>.fromOpaque(child.pointee.toOpaque())._withUnsafeGuaranteedRef { map in
                map.gate._withUnsafeGuaranteedRef { $0.holdsValue }
            }
            if !holds { return false }
            child += 1
        } while child != end
        return true
    }

    /// `runLendingMaps(_:calling:childGatesHold:)` for children each a map calling either
    /// `First` or `Second`, two variants of one kind of transform that check values alike
    /// (see `TransformFunction.check(_:)`): each child's class says which it calls.
    @inlinable
    @inline(__always)
    func runLendingMaps<First: TransformFunction, Second: TransformFunction>(
        _ value: A, calling _: First.Type, or _: Second.Type, childGatesHold: Bool
    ) throws -> Bool where First.Input == A, Second.Input == A, First.Output == Second.Output {
        typealias FirstMap = MapNode<A, First.Output, First>
        typealias SecondMap = MapNode<A, Second.Output, Second>
        guard let start = nodes.baseAddress, !nodes.isEmpty else { return true }
        let end = start + nodes.count
        let firstClass = ObjectIdentifier(FirstMap.self)
        @inline(__always)
        func callsFirst(_ node: Unmanaged<Node<A>>) -> Bool {
            node._withUnsafeGuaranteedRef { ObjectIdentifier(type(of: $0)) } == firstClass
        }
        if callsFirst(start.pointee) {
            try Unmanaged<FirstMap>.fromOpaque(start.pointee.toOpaque())._withUnsafeGuaranteedRef { try $0.transform.check(value) }
        } else {
            try Unmanaged<SecondMap>.fromOpaque(start.pointee.toOpaque())._withUnsafeGuaranteedRef { try $0.transform.check(value) }
        }
        var child = start
        var allHold = true
        repeat {
            let node = child.pointee
            if callsFirst(node) {
                try Unmanaged<FirstMap>.fromOpaque(node.toOpaque())._withUnsafeGuaranteedRef { map in
                    try map.withPart(of: value, checked: true,
                                     LentPartGate(gate: map.gate, oneWord: true, holdsValue: childGatesHold))
                    if !childGatesHold { allHold = allHold && map.gate._withUnsafeGuaranteedRef { $0.holdsValue } }
                }
            } else {
                try Unmanaged<SecondMap>.fromOpaque(node.toOpaque())._withUnsafeGuaranteedRef { map in
                    try map.withPart(of: value, checked: true,
                                     LentPartGate(gate: map.gate, oneWord: true, holdsValue: childGatesHold))
                    if !childGatesHold { allHold = allHold && map.gate._withUnsafeGuaranteedRef { $0.holdsValue } }
                }
            }
            child += 1
        } while child != end
        return allHold
    }

    /// Whether every child is a map calling a `Transform` over a gate that identical
    /// values satisfy and that identifies them by one word: the children a fan-out may
    /// run in its own loop (see `runLendingMaps(_:calling:childGatesHold:)`). Asked once, when the
    /// fan-out is made.
    @inlinable
    func allAreLendingMaps<Transform: TransformFunction>(calling _: Transform.Type) -> Bool
    where Transform.Input == A {
        Transform.lendsParts && nodes.allSatisfy { isLendingMap($0, calling: Transform.self) }
    }

    /// Whether every child is such a map calling `First` or `Second` (each child one or
    /// the other): the children of `runLendingMaps(_:calling:or:childGatesHold:)`.
    @inlinable
    func allAreLendingMaps<First: TransformFunction, Second: TransformFunction>(
        calling _: First.Type, or _: Second.Type
    ) -> Bool where First.Input == A, Second.Input == A {
        First.lendsParts && Second.lendsParts
            && nodes.allSatisfy { isLendingMap($0, calling: First.self) || isLendingMap($0, calling: Second.self) }
    }

    /// Whether `child` is a map calling a `Transform` over a gate that identical values
    /// satisfy and that identifies them by one word.
    @inlinable
    func isLendingMap<Transform: TransformFunction>(_ child: Unmanaged<Node<A>>, calling _: Transform.Type) -> Bool
    where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        // The exact class (a map node is final), read without a reference.
        return child._withUnsafeGuaranteedRef { node in
            guard ObjectIdentifier(type(of: node)) == ObjectIdentifier(Map.self),
                  let gate = unsafeDowncast(node, to: Map.self).child.identityGate else { return false }
            return gate._withUnsafeGuaranteedRef { $0.identifiedByOneWord }
        }
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

/// The steps of a kind of fan-out node, for `ChildNodes.step(of:mapsCalling:or:)` to
/// choose from.
@usableFromInline
protocol FanOutSteps {
    associatedtype Value
    /// The step whose children are all maps calling `Transform`, run in one loop.
    static func runMaps<Transform: TransformFunction>(calling _: Transform.Type) -> Node<Value>.Step
    where Transform.Input == Value
    /// The step whose children are all maps calling `First` or `Second`, run in one loop.
    static func runMaps<First: TransformFunction, Second: TransformFunction>(
        calling _: First.Type, or _: Second.Type
    ) -> Node<Value>.Step where First.Input == Value, Second.Input == Value, First.Output == Second.Output
    /// The step whose children are run one by one.
    static func runChildren(_ node: Node<Value>, _ value: Value) throws
}
