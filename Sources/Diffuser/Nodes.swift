// The node kinds. Each initializer passes its step as a closure that captures nothing
// (the node comes in as an argument), so creating it allocates nothing. Nodes that call
// user code are generic over its form (see `Callbacks.swift`).

/// Runs an effect on every value: `intoAlways(effect)`.
@usableFromInline
final class EffectNode<A, Effect: EffectFunction>: Node<A> where Effect.Value == A {
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ effect: Effect) {
        self.effect = effect
        super.init(step: { node, value in
            try unsafeDowncast(node, to: EffectNode<A, Effect>.self).effect.run(value)
        })
    }
}

/// Runs every child, in order, on every value: `intoAlways(children)`.
@usableFromInline
final class FanOutNode<A>: Node<A>, FanOutSteps {
    @usableFromInline
    typealias Value = A

    @usableFromInline
    let children: ChildNodes<A>

    @inlinable
    init(_ children: [Diffuser<A>]) {
        self.children = ChildNodes(children)
        super.init(step: FanOutNode.runChildren)
    }

    /// A fan-out for a binding that makes its maps with a few forms of transform: when
    /// every child is a map over a gate, all of one form or of one pair, it runs the maps'
    /// work in its own loop, and for one form keeps no map (see `ChildNodes`, lanes).
    /// Otherwise the same as `init(_:)`.
    @inlinable
    init<T1: TransformFunction, T2: TransformFunction, T3: TransformFunction, T4: TransformFunction>(
        _ children: [Diffuser<A>], mapsCalling _: (T1.Type, T2.Type), or _: (T3.Type, T4.Type)
    ) where T1.Input == A, T2.Input == A, T3.Input == A, T4.Input == A, T1.Output == T2.Output, T3.Output == T4.Output {
        let (children, step) = ChildNodes.fanOut(children, of: FanOutNode.self,
                                                 mapsCalling: (T1.self, T2.self), or: (T3.self, T4.self))
        self.children = children
        super.init(step: step)
    }

    /// The step of a fan-out whose children are lanes of maps calling `Transform`, run
    /// in one loop.
    @inlinable
    static func runLanes<Transform: TransformFunction>(calling _: Transform.Type) -> Step where Transform.Input == A {
        { node, value in
            // Not told whether the gates hold values: a fan-out has no room for that flag,
            // and `intoAlways` over maps is rare.
            _ = try unsafeDowncast(node, to: FanOutNode<A>.self).children.runLanes(
                value, calling: Transform.self, childGatesHold: false)
        }
    }

    /// The step of a fan-out whose children are all maps calling `First` or `Second`,
    /// run in one loop.
    @inlinable
    static func runMaps<First: TransformFunction, Second: TransformFunction>(
        calling _: First.Type, or _: Second.Type
    ) -> Step where First.Input == A, Second.Input == A, First.Output == Second.Output {
        { node, value in
            _ = try unsafeDowncast(node, to: FanOutNode<A>.self).children.runLendingMaps(
                value, calling: First.self, or: Second.self, childGatesHold: false)
        }
    }

    /// The step of a fan-out whose children are run one by one.
    @inlinable
    static func runChildren(_ node: Node<A>, _ value: A) throws {
        try unsafeDowncast(node, to: FanOutNode<A>.self).children.run(value)
    }

    deinit {
        children.releaseAll()
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        children.forEach(body)
    }
}

/// Runs its child on the first value and afterwards whenever `didChange(old, new)`
/// says so: `intoWhen(didChange, child)`.
///
/// The value is cached after every successful pass, whether or not the child ran, so a
/// predicate such as "increased" always compares against the latest value.
@usableFromInline
final class WhenNode<A, Change: ChangeFunction>: CachingNode<A, A?> where Change.Value == A {
    @usableFromInline
    let change: Change
    @usableFromInline
    let child: Node<A>
    /// The same child, called without a retain: `child` keeps it alive.
    @usableFromInline
    let fastChild: Unmanaged<Node<A>>

    @inlinable
    init(_ change: Change, _ child: Node<A>) {
        self.change = change
        self.child = child
        self.fastChild = Unmanaged.passUnretained(child)
        super.init(step: { node, value in
            let me = unsafeDowncast(node, to: WhenNode<A, Change>.self)
            let kept = try me.change.keep(value)
            if let old = me.cache {
                if try me.change.didChange(old, value) {
                    try me.fastChild.run(value)
                }
            } else {
                try me.fastChild.run(value)
            }
            me.cache = kept
        }, empty: nil)
    }

    override func forEachChild(_ body: (AnyNode) -> Void) { body(child) }
}

/// Runs an effect on the first value and afterwards whenever `didChange(old, new)` says
/// so: `intoWhen(didChange, effect)` (and `into` for values compared by a predicate), as
/// one node instead of a gate over an effect node.
@usableFromInline
final class WhenEffectNode<A, Change: ChangeFunction, Effect: EffectFunction>: CachingNode<A, A?>
where Change.Value == A, Effect.Value == A {
    @usableFromInline
    let change: Change
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ change: Change, _ effect: Effect) {
        self.change = change
        self.effect = effect
        super.init(step: { node, value in
            let me = unsafeDowncast(node, to: WhenEffectNode<A, Change, Effect>.self)
            let kept = try me.change.keep(value)
            if let old = me.cache {
                if try me.change.didChange(old, value) {
                    try me.effect.run(value)
                }
            } else {
                try me.effect.run(value)
            }
            me.cache = kept
        }, empty: nil)
    }
}

/// Runs every child, in order, on the first value and whenever the value is not equal
/// to the cached one: `intoAll(children)`, as one node instead of a gate over a fan-out.
///
/// An equal value is not stored, so an unchanged pass writes nothing and copies nothing.
/// A pass that gets through the gate runs the children in its own step, so a changed
/// value costs one step call less, and the tree one node less per `intoAll`.
@usableFromInline
final class EqualityAllNode<A, Equality: EqualityFunction>: GateNode<A, A?>, FanOutSteps where Equality.Value == A {
    @usableFromInline
    typealias Value = A

    @usableFromInline
    let equality: Equality
    @usableFromInline
    let children: ChildNodes<A>

    @inlinable
    init(_ equality: Equality, _ children: ChildNodes<A>, step: @escaping Step) {
        self.equality = equality
        self.children = children
        super.init(step: step, identifyingBytes: Equality.identifyingBytes,
                   identityDecides: Equality.identicalValuesAreEqual, empty: nil)
    }

    @inlinable
    convenience init(_ equality: Equality, _ children: [Diffuser<A>]) {
        self.init(equality, ChildNodes(children), step: EqualityAllNode.runChildren)
    }

    /// The same for a binding that makes its maps with a few forms of transform: when
    /// every child is a map over a gate, all of one form or of one pair, the children run
    /// in one loop, and for one form no map is kept (see `ChildNodes`, lanes).
    @inlinable
    convenience init<T1: TransformFunction, T2: TransformFunction, T3: TransformFunction, T4: TransformFunction>(
        _ equality: Equality, _ children: [Diffuser<A>], mapsCalling _: (T1.Type, T2.Type), or _: (T3.Type, T4.Type)
    ) where T1.Input == A, T2.Input == A, T3.Input == A, T4.Input == A, T1.Output == T2.Output, T3.Output == T4.Output {
        let (list, step) = ChildNodes.fanOut(children, of: EqualityAllNode.self,
                                             mapsCalling: (T1.self, T2.self), or: (T3.self, T4.self))
        self.init(equality, list, step: step)
    }

    /// The step of a gate whose children are lanes of maps calling `Transform`, run in
    /// one loop.
    @inlinable
    static func runLanes<Transform: TransformFunction>(calling _: Transform.Type) -> Step where Transform.Input == A {
        { node, value in
            let me = unsafeDowncast(node, to: EqualityAllNode<A, Equality>.self)
            try me.pass(value) {
                if try me.children.runLanes($0, calling: Transform.self, childGatesHold: me.childGatesHold) {
                    me.childGatesHold = true
                }
            }
        }
    }

    /// The step of a gate whose children are all maps calling `First` or `Second`, run
    /// in one loop.
    @inlinable
    static func runMaps<First: TransformFunction, Second: TransformFunction>(
        calling _: First.Type, or _: Second.Type
    ) -> Step where First.Input == A, Second.Input == A, First.Output == Second.Output {
        { node, value in
            let me = unsafeDowncast(node, to: EqualityAllNode<A, Equality>.self)
            try me.pass(value) {
                if try me.children.runLendingMaps($0, calling: First.self, or: Second.self, childGatesHold: me.childGatesHold) {
                    me.childGatesHold = true
                }
            }
        }
    }

    /// The step of a gate whose children are run one by one.
    @inlinable
    static func runChildren(_ node: Node<A>, _ value: A) throws {
        let me = unsafeDowncast(node, to: EqualityAllNode<A, Equality>.self)
        try me.pass(value) { try me.children.run($0) }
    }

    /// Runs `children` on `value` unless it equals the cache, then caches it.
    @inlinable
    @inline(__always)
    final func pass(_ value: A, _ children: (A) throws -> Void) throws {
        let offered = takeOffer(keptBy: Equality.self)
        if takeComparison(),
           try withUnsafeMutablePointer(to: &cache, { try cachedValue(at: $0, equals: value, by: equality) }) {
            return
        }
        let kept = try keep(value, offered: offered, by: equality)
        try children(value)
        store(consume kept, by: Equality.self)
    }

    /// This gate, if it keeps values as they are.
    @usableFromInline
    override var offerTaker: Unmanaged<GateNode<A, A?>>? {
        Equality.keepsValueItself ? Unmanaged.passUnretained(self) : nil
    }

    deinit {
        children.releaseAll()
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        children.forEach(body)
    }
}

/// Runs an effect on the first value and whenever the value is not equal to the cached
/// one: `into(effect)`, the leaf of most trees, as one node instead of two.
@usableFromInline
final class EqualityEffectNode<A, Equality: EqualityFunction, Effect: EffectFunction>: GateNode<A, A?>
where Equality.Value == A, Effect.Value == A {
    @usableFromInline
    let equality: Equality
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ equality: Equality, _ effect: Effect) {
        self.equality = equality
        self.effect = effect
        super.init(step: { node, value in
            let me = unsafeDowncast(node, to: EqualityEffectNode<A, Equality, Effect>.self)
            let offered = me.takeOffer(keptBy: Equality.self)
            if me.takeComparison(),
               try withUnsafeMutablePointer(to: &me.cache, { try cachedValue(at: $0, equals: value, by: me.equality) }) {
                return
            }
            let kept = try me.keep(value, offered: offered, by: me.equality)
            try me.effect.run(value)
            me.store(consume kept, by: Equality.self)
        }, identifyingBytes: Equality.identifyingBytes, identityDecides: Equality.identicalValuesAreEqual, empty: nil)
    }

    /// This gate, if it keeps values as they are.
    @usableFromInline
    override var offerTaker: Unmanaged<GateNode<A, A?>>? {
        Equality.keepsValueItself ? Unmanaged.passUnretained(self) : nil
    }
}

/// Runs its child on the first value only: `intoOnce`.
///
/// If that first pass fails, the next value is treated as the first.
@usableFromInline
final class OnceNode<A>: Node<A> {
    @usableFromInline
    let child: Node<A>
    /// The same child, called without a retain: `child` keeps it alive.
    @usableFromInline
    let fastChild: Unmanaged<Node<A>>
    @usableFromInline @exclusivity(unchecked)
    var done = false

    @inlinable
    init(_ child: Node<A>) {
        self.child = child
        self.fastChild = Unmanaged.passUnretained(child)
        super.init(step: { node, value in
            let me = unsafeDowncast(node, to: OnceNode<A>.self)
            if me.done { return }
            try me.fastChild.run(value)
            me.done = true
        })
    }

    override func forEachChild(_ body: (AnyNode) -> Void) { body(child) }
}

/// Feeds its child a part of the value: `map(transform, child)`.
///
/// A child that is a gate whose equality lets identical values decide
/// (`EqualityFunction.identicalValuesAreEqual`) is not run for the very value it holds.
/// A transform that lends its parts (`TransformFunction.lendsParts`) makes each part in
/// room on the step's stack, where the gate's check reads it, and the part is destroyed
/// only if the transform handed it over.
@usableFromInline
final class MapNode<A, B, Transform: TransformFunction>: Node<A>
where Transform.Input == A, Transform.Output == B {
    @usableFromInline
    let transform: Transform
    @usableFromInline
    let child: Node<B>

    /// The child as a gate. Valid only when the child is a gate that identical values
    /// satisfy (`Node.identityGate`), which the step chosen at init knows: kept out of the
    /// node's fields, where it would cost a word in every map.
    @inlinable
    @inline(__always)
    final var gate: Unmanaged<GateNode<B, B?>> {
        // `Cached` is `B?` (see `CachingNode`): the same class.
        Unmanaged.fromOpaque(Unmanaged.passUnretained(child).toOpaque())
    }

    @inlinable
    init(_ transform: Transform, _ child: Node<B>) {
        self.transform = transform
        self.child = child
        // One step per case, chosen once here: a pass runs only its own case's code.
        if !Transform.lendsParts, child.identityGate == nil, let taker = child.offerTaker {
            // A gate that may keep the part itself: the part is handed over rather than
            // copied by the gate and destroyed here (see `GateFlags.offered`).
            super.init(step: { node, value in
                let me = unsafeDowncast(node, to: MapNode<A, B, Transform>.self)
                try me.transform.withSelected(value, handingOverTo: taker)
            })
            return
        }
        switch (child.identityGate != nil, Transform.lendsParts) {
        case (false, false):
            super.init(step: { node, value in
                let me = unsafeDowncast(node, to: MapNode<A, B, Transform>.self)
                try me.transform.withSelected(value) { try Unmanaged.passUnretained(me.child).run($0) }
            })
        case (false, true):
            super.init(step: { node, value in
                let me = unsafeDowncast(node, to: MapNode<A, B, Transform>.self)
                try me.withPart(of: value, LentPartRunner(child: Unmanaged.passUnretained(me.child)))
            })
        case (true, false):
            super.init(step: { node, value in
                let me = unsafeDowncast(node, to: MapNode<A, B, Transform>.self)
                let gate = me.gate
                try me.transform.withSelected(value) { part in
                    if withUnsafePointer(to: part, { part in gate._withUnsafeGuaranteedRef { $0.holds(at: part) } }) {
                        return
                    }
                    try Unmanaged<Node<B>>.fromOpaque(gate.toOpaque()).run(part)
                }
            })
        case (true, true):
            super.init(step: { node, value in
                let me = unsafeDowncast(node, to: MapNode<A, B, Transform>.self)
                try me.withPart(of: value, LentPartGate(gate: me.gate))
            })
        }
    }

    /// Hands `use` the part of `value`, where it lies on the stack, then disposes of it
    /// as the transform said (see `TransformFunction.withPart(of:checked:_:)`).
    @inlinable
    @inline(__always)
    final func withPart<Use: LentPartUse>(of value: A, checked: Bool = false, _ use: Use) throws where Use.Part == B {
        try transform.withPart(of: value, checked: checked, use)
    }

    override func forEachChild(_ body: (AnyNode) -> Void) { body(child) }
}

extension TransformFunction {
    /// Runs `gate` on the part of `value`, offering it the part (`GateFlags.offered`): a
    /// gate that keeps it says so (`GateFlags.taken`), and the part is then left to the
    /// gate rather than destroyed. For a transform whose parts are owned (not lent).
    @inlinable
    @inline(__always)
    func withSelected(_ value: Input, handingOverTo gate: Unmanaged<GateNode<Output, Output?>>) throws {
        try _withUnprotectedUnsafeTemporaryAllocation(of: Output.self, capacity: 1) { room in
            let part = try select(value)
            gate._withUnsafeGuaranteedRef { $0.flags |= GateFlags.offered }
            // Not a `defer`: the part must be moved into `room` after the run either way,
            // and a part read from `room` during the run would be retained for the call.
            var failure: (any Error)?
            do {
                try Unmanaged<Node<Output>>.fromOpaque(gate.toOpaque()).run(part)
            } catch {
                failure = error
            }
            let taken = gate._withUnsafeGuaranteedRef { gate -> Bool in
                let taken = gate.flags & GateFlags.taken != 0
                gate.flags &= ~(GateFlags.offered | GateFlags.taken)
                return taken
            }
            // The part's bits, now in memory that nothing destroys unless asked.
            let room = room.baseAddress.unsafelyUnwrapped
            room.initialize(to: consume part)
            if !taken { room.deinitialize(count: 1) }
            if let failure { throw failure }
        }
    }

    /// Hands `use` the part of `value`, where it lies on the stack, then disposes of it
    /// as this transform said: what a map does with a transform that lends its parts.
    ///
    /// The room is one `Output`, written by the transform and read in place. The stack
    /// protector's canary, which the protected form of the allocation would add to every
    /// map's step, guards nothing that a transform writing out of bounds would not
    /// already have broken, and would cost 5 instructions a step (a C map's takes 39).
    ///
    /// `checked`: `check(_:)` accepted `value` already (see
    /// `ChildNodes.runLanes(_:calling:childGatesHold:)`).
    @inlinable
    @inline(__always)
    func withPart<Use: LentPartUse>(of value: Input, checked: Bool = false, _ use: Use) throws where Use.Part == Output {
        try Self.withPart(use) { part in try checked ? select(checked: value, into: part) : select(value, into: part) }
    }

    /// `withPart(of:checked:_:)` by the transform at `transform`, read where it lies (see
    /// `select(checked:lentFrom:into:)`), for a `value` that `check(_:)` accepted.
    @inlinable
    @inline(__always)
    static func withPart<Use: LentPartUse>(of value: Input, lentFrom transform: UnsafePointer<Self>, _ use: Use) throws
    where Use.Part == Output {
        try withPart(use) { part in try select(checked: value, lentFrom: transform, into: part) }
    }

    /// Makes room for a part, has `select` put it there, hands it to `use`, and destroys
    /// it if `select` says so: what both forms of `withPart` do around the selection.
    @inlinable
    @inline(__always)
    static func withPart<Use: LentPartUse>(
        _ use: Use, selectedBy select: (UnsafeMutablePointer<Output>) throws -> Bool
    ) throws where Use.Part == Output {
        try _withUnprotectedUnsafeTemporaryAllocation(of: Output.self, capacity: 1) { room in
            let part = room.baseAddress.unsafelyUnwrapped
            if try select(part) {
                defer { part.deinitialize(count: 1) }
                try use.use(part)
            } else {
                try use.use(part)
            }
        }
    }
}

/// What a map does with a part it made on its stack (see `MapNode.withPart`): a value
/// rather than a closure, so that the compiler always inlines it.
@usableFromInline
protocol LentPartUse {
    associatedtype Part
    func use(_ part: UnsafeMutablePointer<Part>) throws
}

/// Runs the child on the part.
@usableFromInline
struct LentPartRunner<Part>: LentPartUse {
    @usableFromInline
    let child: Unmanaged<Node<Part>>

    @inlinable
    init(child: Unmanaged<Node<Part>>) {
        self.child = child
    }

    @inlinable
    @inline(__always)
    func use(_ part: UnsafeMutablePointer<Part>) throws {
        try child.run(part.pointee)
    }
}

/// Runs the gate child on the part unless it holds that very part.
@usableFromInline
struct LentPartGate<Part>: LentPartUse {
    @usableFromInline
    let gate: Unmanaged<GateNode<Part, Part?>>
    /// Whether the gate is known to identify its values by one word, and to hold a value
    /// (see `GateNode.holds(at:oneWord:holdsValue:)`).
    @usableFromInline
    let oneWord: Bool, holdsValue: Bool

    @inlinable
    init(gate: Unmanaged<GateNode<Part, Part?>>, oneWord: Bool = false, holdsValue: Bool = false) {
        self.gate = gate
        self.oneWord = oneWord
        self.holdsValue = holdsValue
    }

    @inlinable
    @inline(__always)
    func use(_ part: UnsafeMutablePointer<Part>) throws {
        // Most parts are those the gates hold: laid out as the straight path.
        if _fastPath(gate._withUnsafeGuaranteedRef({ $0.holds(at: part, oneWord: oneWord, holdsValue: holdsValue) })) {
            return
        }
        try Unmanaged<Node<Part>>.fromOpaque(gate.toOpaque()).run(part.pointee)
    }
}

/// Runs every child, in order, on its part of the value, all parts selected by one
/// call: `mapAll(select, children)`, a fan-out of maps for transforms that are cheaper
/// together (a binding's upcalls).
///
/// A selection that judges parts (`SelectionFunction.judgesParts`) also compares them
/// with the caches of the gate children it may judge; a part judged unchanged is not
/// passed, one judged changed is passed without a second comparison.
///
/// The parts and verdicts of a pass live in room the node allocates once: a pass of a
/// node cannot start inside another pass of the same node (a node is never its own
/// descendant, and nested runs are queued), so one pass at a time uses it.
@usableFromInline
final class MapAllNode<A, B, Selection: SelectionFunction>: Node<A>
where Selection.Input == A, Selection.Output == B {
    @usableFromInline
    let selection: Selection
    @usableFromInline
    let children: ChildNodes<B>
    /// For a judging selection, the gate among the children at each position that the
    /// selection may judge, else `nil`; empty for other selections.
    @usableFromInline
    let judged: ContiguousArray<Unmanaged<GateNode<B, B?>>?>
    /// Room for one part per child; holds parts only during a pass.
    @usableFromInline
    let partRoom: UnsafeMutablePointer<B>
    /// Room for one verdict per child, for a judging selection.
    @usableFromInline
    let verdictRoom: UnsafeMutablePointer<PartVerdict>

    @inlinable
    init(_ selection: Selection, _ children: [Diffuser<B>]) {
        self.selection = selection
        let children = ChildNodes(children)
        self.children = children
        self.judged = Selection.judgesParts ? judgeableGates(children) : []
        self.partRoom = .allocate(capacity: children.count)
        self.verdictRoom = .allocate(capacity: Selection.judgesParts ? children.count : 0)
        super.init(step: { node, value in
            let me = unsafeDowncast(node, to: MapAllNode<A, B, Selection>.self)
            let count = me.children.count
            if count == 0 { return }
            var parts = SelectedParts(me.partRoom, capacity: count)
            defer { if me.selection.makesTrivialParts { parts.forgetAll() } else { parts.destroyAll() } }
            if Selection.judgesParts {
                let verdicts = UnsafeMutableBufferPointer(start: me.verdictRoom, count: count)
                verdicts.initialize(repeating: .unknown)
                try me.judged.withUnsafeBufferPointer { judged in
                    try me.pass(value, parts: &parts) {
                        try me.selection.selectAll(value, judging: JudgedChildren(judged), into: &$0, verdicts: verdicts)
                    } skipping: { i in
                        // A verdict counts only for a judged child, and `.unchanged`
                        // only if the gate has a cache to be equal to.
                        guard let gate = judged[i] else { return false }
                        return gate._withUnsafeGuaranteedRef { gate in
                            switch verdicts[i] {
                            case .unchanged: return gate.hasCache
                            case .changed: gate.judgedChanged = true
                            default: break
                            }
                            return false
                        }
                    }
                }
            } else {
                try me.pass(value, parts: &parts) {
                    try me.selection.selectAll(value, into: &$0)
                } skipping: { _ in false }
            }
        })
    }

    deinit {
        children.releaseAll()
        partRoom.deallocate()
        verdictRoom.deallocate()
    }

    /// Selects the parts with `select`, then runs each child on its part in order, except
    /// those that `skip` turns away.
    @inlinable
    @inline(__always)
    final func pass(
        _ value: A, parts: inout SelectedParts<B>,
        select: (inout SelectedParts<B>) throws -> Void, skipping skip: (Int) -> Bool
    ) throws {
        var failure: (any Error)?
        do {
            try select(&parts)
        } catch {
            failure = error
        }
        do {
            for i in 0..<parts.count where !skip(i) { try children[i].run(partRoom[i]) }
        } catch {
            // The first failure wins: a selection that failed threw before any child.
            throw failure ?? error
        }
        if let failure { throw failure }
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        children.forEach(body)
    }
}
