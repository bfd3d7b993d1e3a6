import Synchronization

/// The graph bookkeeping every diffuser node shares, independent of its value type.
///
/// A node's `serializer` decides which lock guards its cache; see `Serializer`.
@usableFromInline
class AnyNode {
    /// The address of the serializer this node was given on its graph's first run, or 0
    /// before (or `AnyNode.walked`, for the time of a walk with `Serializer.graphLock`
    /// held). The node holds a strong reference to its serializer.
    ///
    /// The serializer is written once, with `Serializer.graphLock` held, and never
    /// replaced (a merged serializer forwards to its successor instead), so a run may
    /// read it without `graphLock`: that is what makes a run take a single lock.
    @usableFromInline
    let serializerAddress = Atomic<UInt>(0)

    @usableFromInline
    init() {}

    deinit {
        if let serializer = loadSerializer() {
            Unmanaged.passUnretained(serializer).release()
        }
    }

    /// The serializer this node was given, if any; may have been merged since (see
    /// `Serializer.current`).
    final func loadSerializer() -> Serializer? {
        loadSerializerUnretained()?.takeUnretainedValue()
    }

    /// `loadSerializer()` without taking a reference: valid while this node lives, since
    /// the node holds its serializer.
    final func loadSerializerUnretained() -> Unmanaged<Serializer>? {
        let bits = serializerAddress.load(ordering: .acquiring)
        guard bits > AnyNode.walked, let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Serializer>.fromOpaque(pointer)
    }

    /// Records `serializer` as this node's. Call with `Serializer.graphLock` held, and only
    /// with a node that has none (it may be marked walked).
    final func storeSerializer(_ serializer: Serializer) {
        precondition(serializerAddress.load(ordering: .relaxed) <= AnyNode.walked, "a node's serializer is given once")
        let bits = UInt(bitPattern: Unmanaged.passRetained(serializer).toOpaque())
        serializerAddress.store(bits, ordering: .releasing)
    }

    /// `serializerAddress` of a node without a serializer that the frontier walk of the
    /// resolve in progress has entered (`Serializer.frontier(of:)`), so that a node shared
    /// by several parents is walked once, not once per path to it. Set and cleared with
    /// `Serializer.graphLock` held, within one resolve; reads take it for no serializer.
    static let walked: UInt = 1

    /// Marks this node walked; false if it was already (or has a serializer). Call with
    /// `Serializer.graphLock` held.
    final func markWalked() -> Bool {
        guard serializerAddress.load(ordering: .relaxed) == 0 else { return false }
        serializerAddress.store(AnyNode.walked, ordering: .relaxed)
        return true
    }

    /// Clears the walked mark of this node and of the marked nodes below it. Call with
    /// `Serializer.graphLock` held.
    final func clearWalked() {
        guard serializerAddress.load(ordering: .relaxed) == AnyNode.walked else { return }
        serializerAddress.store(0, ordering: .relaxed)
        forEachChild { $0.clearWalked() }
    }

    /// Calls `body` with every direct child, in order.
    func forEachChild(_ body: (AnyNode) -> Void) {}
}

/// A node of a diffuser tree: something that reacts to a value of type `A`.
///
/// Each combinator is one subclass (see `Nodes/`). What a node does on a value is its
/// `step`, a function stored in the node rather than an overridden method: each kind's
/// `@inlinable` initializer makes it, so when a client builds a `Diffuser<Screen>` the
/// step is compiled for `Screen`. An overridden method of a generic class runs
/// unspecialized, looking up generic metadata on every call.
///
/// A step gets its value by address, borrowed for the call: a node hands its child a
/// part of its own value where that part lies (a stored property, see `FieldNode`), and
/// a gate compares it with its cache there, so that an unchanged part is never copied.
/// A value is copied only where it is kept (a gate's cache) and otherwise lent to user
/// code without a copy (`Borrow.swift`).
///
/// A map hands its child the part it selected, a new value it destroys after the call, as
/// *owned*: a gate that keeps values as they are may then exchange the part with its
/// cache instead of copying it (a copy retains every reference inside the value, and the
/// map's destroy releases them all again); the map then destroys the old cached value. A
/// closure or key path returns a new part, and the `==` of `into` or an `intoWhen`
/// closure keeps values as they are: the combinators build such maps and gates with
/// `MapNode(owning:_:)` and `GateNode(taking:_:)`, whose constraints (`Taking.swift`)
/// check it.
/// Other forms (the C ABI's transforms, whose parts are released through their type, its
/// equalities, whose `keep` retains, any `calling:` value) take the ordinary path.
///
/// A node is only ever run with its graph's serializer held, so the state it keeps (a
/// cache, a flag) needs no further locking. A throwing step aborts the pass: a node that
/// caches leaves its cache unchanged then, so that the next pass retries.
@usableFromInline
class Node<A>: AnyNode {
    /// A step: the node itself (so that the function captures nothing), the address of
    /// the value, valid for the call, and whether the value is owned: a temporary the
    /// caller destroys after the call. A step may exchange an owned value for another
    /// value of its type as its last act (a gate swaps it with its cache); the caller
    /// then destroys that one instead. Otherwise the value is unchanged for the call.
    @usableFromInline
    typealias Step = (Node<A>, UnsafePointer<A>, _ owned: Bool) throws -> Void

    /// What the node does on a value.
    @usableFromInline
    final let step: Step

    @inlinable
    init(step: @escaping Step) {
        self.step = step
    }

    /// Runs this node on `value`, lent to the tree as a copy that only the run reaches
    /// (`withPrivateCopy`): a map's closure gets its input through an exclusive access
    /// (`callInPlace`), which must not overlap another access to the caller's value.
    @inlinable @inline(__always)
    final func run(_ value: A) throws {
        try withUnsafePointer(to: value) { input in
            try withPrivateCopy(of: input) { try step(self, $0, false) }
        }
    }

    /// Runs this node on the value at `value`, which must stay valid and unchanged until
    /// the call returns, and lie in memory only the run reaches (see `run(_:)`).
    @inlinable
    final func run(at value: UnsafePointer<A>) throws {
        try step(self, value, false)
    }

    /// Runs this node on the new value `make` returns, which the node may exchange for
    /// another (nobody else holds it; see `Step`).
    ///
    /// The part is a local variable, so that `make` writes it where the step reads it: a
    /// copy to another place would load what `make` has just stored, a wider load than
    /// its stores, which cannot be forwarded from them and waits until they complete.
    @inlinable
    final func run(taking make: () throws -> A) throws {
        var part = try make()
        try withUnsafeMutablePointer(to: &part) { try step(self, $0, true) }
    }
}
