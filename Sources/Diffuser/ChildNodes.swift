/// The children of a fan-out node, in order, each held by a strong reference that the
/// list took when it was made.
///
/// One headerless buffer instead of an array of references plus an array of unretained
/// copies for calling them: building a fan-out allocates once for its children, and a
/// pass calls them without retaining or releasing them. The node that owns the list
/// releases it once, in its `deinit` (`releaseAll()`); the list is never copied out of
/// that node.
///
/// **Lanes.** A fan-out whose children are all maps of one form of transform, each over
/// a gate (see `fanOut(_:of:mapsCalling:or:)`), keeps no map: `nodes` holds the gates, and
/// `transforms` a copy of each map's transform, in the same order. A pass does with each
/// transform and gate what the map would do with them. A map holds no state, so nothing
/// is lost; it costs its own allocation, which was most of the memory of a C leaf (an
/// 80-byte block, against 16 bytes for a field map's transform here).
@usableFromInline
struct ChildNodes<A> {
    /// The children, or in lanes the gates of the maps that were the children (of
    /// `Node<Transform.Output>`, which only the step knows).
    @usableFromInline
    let nodes: UnsafeMutableBufferPointer<Unmanaged<AnyNode>>
    /// In lanes, the transforms, one per gate (a `TransformLanes<Transform>`); `nil`
    /// otherwise.
    @usableFromInline
    let transforms: AnyObject?

    /// Takes a reference to the node of every diffuser in `diffusers`.
    @inlinable
    init(_ diffusers: [Diffuser<A>]) {
        let nodes = UnsafeMutableBufferPointer<Unmanaged<AnyNode>>.allocate(capacity: diffusers.count)
        diffusers.withUnsafeBufferPointer { source in
            for i in source.indices {
                (nodes.baseAddress! + i).initialize(to: .passRetained(source[i].node))
            }
        }
        self.nodes = nodes
        self.transforms = nil
    }

    /// Lanes for `diffusers`, every one a map calling `Transform` over a gate
    /// (`isLendingMap(_:calling:)`): takes a reference to each map's gate and a copy of
    /// its transform.
    @inlinable
    init<Transform: TransformFunction>(lanesOf diffusers: [Diffuser<A>], calling _: Transform.Type)
    where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        let count = diffusers.count
        let nodes = UnsafeMutableBufferPointer<Unmanaged<AnyNode>>.allocate(capacity: count)
        let transforms = TransformLanes<Transform>.make(count: count) { transforms in
            for i in 0..<count {
                let map = unsafeDowncast(diffusers[i].node, to: Map.self)
                (nodes.baseAddress! + i).initialize(to: .passRetained(map.child))
                (transforms + i).initialize(to: map.transform)
            }
        }
        self.nodes = nodes
        self.transforms = transforms
    }

    @inlinable
    var count: Int { nodes.count }

    /// The children of a fan-out of `Steps` over `diffusers`, and the step it runs, for a
    /// binding whose maps take a few forms of transform: lanes for children that are all
    /// maps of one form (`T1`, `T2`, `T3` or `T4`, in that order of preference), one loop
    /// over the maps for children that are all maps of one pair (`T1` or `T2`, `T3` or
    /// `T4`), else each child in turn. Chosen once, when the fan-out is made.
    @inlinable
    static func fanOut<Steps: FanOutSteps, T1: TransformFunction, T2: TransformFunction,
                       T3: TransformFunction, T4: TransformFunction>(
        _ diffusers: [Diffuser<A>], of _: Steps.Type, mapsCalling _: (T1.Type, T2.Type), or _: (T3.Type, T4.Type)
    ) -> (children: ChildNodes<A>, step: Node<A>.Step)
    where Steps.Value == A, T1.Input == A, T2.Input == A, T3.Input == A, T4.Input == A,
          T1.Output == T2.Output, T3.Output == T4.Output {
        // Plain tests rather than `??` over optional results: a step passed through a
        // generic `Optional` would be called through reabstraction thunks ever after.
        func all(_ test: (Node<A>) -> Bool) -> Bool {
            !diffusers.isEmpty && diffusers.allSatisfy { test($0.node) }
        }
        func lanesFit<T: TransformFunction>(_: T.Type) -> Bool where T.Input == A {
            T.lendsParts && all { Self.isLendingMap($0, calling: T.self) }
        }
        func mapsFit<F: TransformFunction, S: TransformFunction>(_: F.Type, _: S.Type) -> Bool
        where F.Input == A, S.Input == A {
            F.lendsParts && S.lendsParts
                && all { Self.isLendingMap($0, calling: F.self) || Self.isLendingMap($0, calling: S.self) }
        }
        if lanesFit(T1.self) { return (ChildNodes(lanesOf: diffusers, calling: T1.self), Steps.runLanes(calling: T1.self)) }
        if lanesFit(T2.self) { return (ChildNodes(lanesOf: diffusers, calling: T2.self), Steps.runLanes(calling: T2.self)) }
        if mapsFit(T1.self, T2.self) { return (ChildNodes(diffusers), Steps.runMaps(calling: T1.self, or: T2.self)) }
        if lanesFit(T3.self) { return (ChildNodes(lanesOf: diffusers, calling: T3.self), Steps.runLanes(calling: T3.self)) }
        if lanesFit(T4.self) { return (ChildNodes(lanesOf: diffusers, calling: T4.self), Steps.runLanes(calling: T4.self)) }
        if mapsFit(T3.self, T4.self) { return (ChildNodes(diffusers), Steps.runMaps(calling: T3.self, or: T4.self)) }
        return (ChildNodes(diffusers), Steps.runChildren)
    }

    /// Child `i`, unretained: valid while the owning node lives. Not in lanes.
    @inlinable
    subscript(i: Int) -> Unmanaged<Node<A>> { Unmanaged.fromOpaque(nodes[i].toOpaque()) }

    /// Runs every child, in order, on `value`. Not in lanes.
    @inlinable
    @inline(__always)
    func run(_ value: A) throws {
        for child in nodes { try Unmanaged<Node<A>>.fromOpaque(child.toOpaque()).run(value) }
    }

    /// Runs lanes of maps calling a `Transform` that lends its parts, each into a gate
    /// that identifies them by one word, in one loop: each part is made and checked
    /// against its gate right here, and only a part the gate does not hold goes on to the
    /// gate.
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
    func runLanes<Transform: TransformFunction>(
        _ value: A, calling _: Transform.Type, childGatesHold: Bool
    ) throws -> Bool where Transform.Input == A {
        typealias Gate = GateNode<Transform.Output, Transform.Output?>
        guard let first = nodes.baseAddress, !nodes.isEmpty else { return true }
        let transforms = unsafeDowncast(self.transforms.unsafelyUnwrapped, to: TransformLanes<Transform>.self).elements
        // What every transform would check of the value, once (see
        // `TransformFunction.check(_:)`).
        try transforms.pointee.check(value)
        // Two copies of the loop, so that the one that runs from the second pass on does
        // not ask each gate whether it holds a value.
        let end = first + nodes.count
        var gate = first, transform = transforms
        if _fastPath(childGatesHold) {
            repeat {
                let use = LentPartGate(gate: Unmanaged<Gate>.fromOpaque(gate.pointee.toOpaque()), oneWord: true, holdsValue: true)
                try Transform.withPart(of: value, lentFrom: transform, use)
                gate += 1
                transform += 1
            } while gate != end
            return true
        }
        repeat {
            let use = LentPartGate(gate: Unmanaged<Gate>.fromOpaque(gate.pointee.toOpaque()), oneWord: true)
            try Transform.withPart(of: value, lentFrom: transform, use)
            gate += 1
            transform += 1
        } while gate != end
        // The gates that hold a value now always will; most trees are full after one pass.
        for child in nodes where !Unmanaged<Gate>.fromOpaque(child.toOpaque())._withUnsafeGuaranteedRef({ $0.holdsValue }) {
            return false
        }
        return true
    }

    /// `runLanes(_:calling:childGatesHold:)` for children (not lanes) each a map calling
    /// either `First` or `Second`, two variants of one kind of transform that check values
    /// alike (see `TransformFunction.check(_:)`): each child's class says which it calls.
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
        func callsFirst(_ node: Unmanaged<AnyNode>) -> Bool {
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

    /// Whether `child` is a map calling a `Transform` over a gate that identical values
    /// satisfy and that identifies them by one word: a child that a fan-out may run in
    /// its own loop (see `runLanes(_:calling:childGatesHold:)`). Asked once per child,
    /// when the fan-out is made.
    @inlinable
    static func isLendingMap<Transform: TransformFunction>(_ child: Node<A>, calling _: Transform.Type) -> Bool
    where Transform.Input == A {
        typealias Map = MapNode<A, Transform.Output, Transform>
        // The exact class (a map node is final).
        guard ObjectIdentifier(type(of: child)) == ObjectIdentifier(Map.self),
              let gate = unsafeDowncast(child, to: Map.self).child.identityGate else { return false }
        return gate._withUnsafeGuaranteedRef { $0.identifiedByOneWord }
    }

    /// Calls `body` with every child (in lanes, every gate), in order.
    func forEach(_ body: (AnyNode) -> Void) {
        for child in nodes { body(child.takeUnretainedValue()) }
    }

    /// Drops the references the list took and frees its buffer. The transforms of lanes
    /// go with `transforms`.
    func releaseAll() {
        for child in nodes { child.release() }
        nodes.deallocate()
    }
}

/// The transforms of lanes (see `ChildNodes`), stored after a count in one allocation,
/// and destroyed with it.
@usableFromInline
final class TransformLanes<Transform>: ManagedBuffer<Int, Transform> {
    /// A buffer of `count` transforms, which `initialize` must initialize, all of them.
    @inlinable
    static func make(count: Int, _ initialize: (UnsafeMutablePointer<Transform>) -> Void) -> TransformLanes {
        let buffer = unsafeDowncast(create(minimumCapacity: count) { _ in 0 }, to: TransformLanes.self)
        buffer.withUnsafeMutablePointers { header, elements in
            initialize(elements)
            header.pointee = count
        }
        return buffer
    }

    /// The first transform: the address is the same for the buffer's whole life.
    @inlinable
    var elements: UnsafePointer<Transform> {
        UnsafePointer(withUnsafeMutablePointerToElements { $0 })
    }

    deinit {
        _ = withUnsafeMutablePointers { header, elements in elements.deinitialize(count: header.pointee) }
    }
}

/// The steps of a kind of fan-out node, for `ChildNodes.fanOut(_:of:mapsCalling:or:)` to
/// choose from.
@usableFromInline
protocol FanOutSteps {
    associatedtype Value
    /// The step whose children are lanes of maps calling `Transform`, run in one loop.
    static func runLanes<Transform: TransformFunction>(calling _: Transform.Type) -> Node<Value>.Step
    where Transform.Input == Value
    /// The step whose children are all maps calling `First` or `Second`, run in one loop.
    static func runMaps<First: TransformFunction, Second: TransformFunction>(
        calling _: First.Type, or _: Second.Type
    ) -> Node<Value>.Step where First.Input == Value, Second.Input == Value, First.Output == Second.Output
    /// The step whose children are run one by one.
    static func runChildren(_ node: Node<Value>, _ value: Value) throws
}
