import Synchronization

/// A node that caches the last value it passed and lets a new value through only when
/// it differs: the base of the equality gates (`into`, `intoAll`). `Cached` is always
/// `A?` (see `CachingNode`).
///
/// What the base adds to the gate kinds is what a fan-out of maps needs to judge a
/// child's part before the child runs (see `SelectionFunction.judgesParts`): where the
/// cache lies, a count of its changes, and a way to let a value through that was
/// already judged different, so that it is not compared twice.
@usableFromInline
class GateNode<A, Cached>: CachingNode<A, Cached> {
    /// `judgedChanged` and `identityDecides`, in one byte so that the gate's bookkeeping
    /// stays within the padding it has (see `replacing`).
    @usableFromInline @exclusivity(unchecked)
    final var flags: UInt8 = 0
    /// Set by a fan-out that judged the value it is about to pass different from the
    /// cache, just before it runs the gate; the gate's step then skips the comparison
    /// and clears it first thing, so no other node ever finds it set.
    @inlinable
    final var judgedChanged: Bool {
        @inline(__always) get { flags & GateFlags.judgedChanged != 0 }
        @inline(__always) set { flags = newValue ? flags | GateFlags.judgedChanged : flags & ~GateFlags.judgedChanged }
    }
    /// Whether every child of this gate, all maps run in one loop, goes to a gate that
    /// holds a value (see `ChildNodes.runLanes(_:calling:childGatesHold:)`): once
    /// true, true for good, so the loop stops asking.
    @inlinable
    final var childGatesHold: Bool {
        @inline(__always) get { flags & GateFlags.childGatesHold != 0 }
        @inline(__always) set { flags = newValue ? flags | GateFlags.childGatesHold : flags & ~GateFlags.childGatesHold }
    }
    /// Whether the bytes that identify a value decide equality at every pass, not only
    /// at the root (`EqualityFunction.identicalValuesAreEqual`); see `holds(at:)`.
    @inlinable
    final var identityDecides: Bool {
        @inline(__always) get { flags & GateFlags.identityDecides != 0 }
    }
    /// Where the cache lies, in bytes from the start of this object: `isSettled(at:)`,
    /// which runs unspecialized, finds the cache without looking up the metadata of `A?`.
    @usableFromInline @exclusivity(unchecked)
    final var cacheOffset: UInt8 = 0
    /// How many leading bytes identify a value for this gate's equality (see
    /// `EqualityFunction.identifyingBytes`); 0 when none do.
    @usableFromInline @exclusivity(unchecked)
    final var identifyingBytes: UInt16 = 0
    /// Odd while the cache is being replaced, bumped before and after: lets a thread that
    /// holds no lock tell whether what it read of the cache was torn or replaced while it
    /// read (see `isSettled(at:)`).
    ///
    /// This and the two fields above follow a `Bool`, so in the usual layouts they sit in
    /// the padding before `generation` and cost no memory.
    @usableFromInline
    final let replacing = Atomic<UInt32>(0)
    /// Starts at 1 and grows by one whenever the cache is replaced, so that whoever read
    /// the cache can tell later whether what it read is still there. Above 1 exactly
    /// when the cache holds a value.
    @usableFromInline @exclusivity(unchecked)
    final var generation: UInt64 = 1

    /// A gate whose equality finds two values equal when their first `identifyingBytes`
    /// bytes are the same (0: never by their bytes alone): at the root only, or at every
    /// pass if `identityDecides`.
    ///
    /// `empty` is `nil` as a `Cached`, that is, as an `A?`.
    @inlinable
    init(step: @escaping Step, identifyingBytes: Int, identityDecides: Bool, empty: Cached) {
        super.init(step: step, empty: empty)
        let start = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let offset = withUnsafeMutablePointer(to: &cache) { UnsafeRawPointer($0) - start }
        if identifyingBytes > 0, identifyingBytes <= MemoryLayout<A>.size,
           identifyingBytes <= Int(UInt16.max), offset > 0, offset <= Int(UInt8.max) {
            self.cacheOffset = UInt8(offset)
            self.identifyingBytes = UInt16(identifyingBytes)
            if identityDecides { flags |= GateFlags.identityDecides }
        }
    }

    /// This gate, if identical values decide at every pass.
    @usableFromInline
    override final var identityGate: Unmanaged<GateNode<A, A?>>? {
        // `Cached` is `A?` (see `CachingNode`): the same class.
        identityDecides ? Unmanaged.fromOpaque(Unmanaged.passUnretained(self).toOpaque()) : nil
    }

    /// Whether a pass of the value at `value` would stop here without a comparison:
    /// the gate holds the very value (the same identifying bytes). Meaningful only for a
    /// gate that is its own `identityGate`; during a pass only.
    ///
    /// For a parent that can check this for less than the gate's own step costs.
    ///
    /// `oneWord` says that the caller knows this gate's values are identified by one word
    /// (see `identifiedByOneWord`), so that the check need not read how many bytes;
    /// `holdsValue` that it knows the gate holds a value (see `holdsValue`), so that the
    /// check need not read `generation`.
    @inlinable
    @inline(__always)
    final func holds(at value: UnsafePointer<A>, oneWord: Bool = false, holdsValue: Bool = false) -> Bool {
        // `judgedChanged` is never set here: a judging fan-out sets it just before it
        // runs the gate, whose step clears it before anything else.
        let cache = UnsafeRawPointer(cachePointer)
        // One word (a binding's pointer) inline; other sizes in a loop. The bytes first:
        // an empty cache may hold any (`generation` tells).
        if oneWord || identifyingBytes == MemoryLayout<UInt>.size {
            return cache.loadUnaligned(as: UInt.self) == UnsafeRawPointer(value).loadUnaligned(as: UInt.self)
                && (holdsValue || generation > 1)
        }
        return (holdsValue || generation > 1) && sameBits(cache, UnsafeRawPointer(value), count: Int(identifyingBytes))
    }

    /// Whether the gate holds a value: once true, true for the gate's whole life, since
    /// a cache is only ever replaced by another value.
    @inlinable
    final var holdsValue: Bool { generation > 1 }

    /// Whether this gate's values are identified by their first word (a binding's
    /// pointer): `holds(at:oneWord:)` may then be told so.
    @inlinable
    final var identifiedByOneWord: Bool { identifyingBytes == MemoryLayout<UInt>.size }

    /// Replaces the cache with `kept` (an `A?`, see `Cached`); the old value is written
    /// over without being destroyed when `Equality` says it holds nothing to release.
    @inlinable
    @inline(__always)
    final func store<Equality: EqualityFunction>(_ kept: consuming Cached, by _: Equality.Type) where Equality.Value == A {
        let count = replacing.load(ordering: .relaxed)
        replacing.store(count &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        if Equality.holdsNothing(cachedAt: cachePointer) {
            // The address outlives the call, as `cachePointer`'s does.
            withUnsafeMutablePointer(to: &cache) { $0 }.initialize(to: kept)
        } else {
            cache = kept
        }
        generation &+= 1
        replacing.store(count &+ 2, ordering: .releasing)
    }

    /// Whether a run of `value` from this gate would do nothing: the graph is between
    /// passes and the cache holds the very value (its identifying bytes are those of
    /// `value`), which the gate's equality would find equal. Takes no lock, calls no user
    /// code, and looks up no metadata, so that it is cheap even unspecialized.
    ///
    /// A run that finds this true returns at once; it is ordered before any pass that
    /// started after the check, which is what it would have been had it taken the lock
    /// first. A pass in progress (on this thread, from inside an effect, or on another)
    /// makes it false, so such a run waits or is queued as always.
    @usableFromInline
    override final func isSettled(at value: UnsafePointer<A>) -> Bool {
        settles(at: value)
    }

    /// This gate, if a run from it can be settled (see `isSettled(at:)`).
    @usableFromInline
    override final var settlingGate: Unmanaged<GateNode<A, A?>>? {
        // `Cached` is `A?` (see `CachingNode`): the same class.
        identifyingBytes > 0 ? Unmanaged.fromOpaque(Unmanaged.passUnretained(self).toOpaque()) : nil
    }

    /// `isSettled(at:)`, compiled where it is inlined: for a caller that knows `A`.
    @inlinable
    @inline(__always)
    final func settles(at value: UnsafePointer<A>) -> Bool {
        let count = Int(identifyingBytes)
        guard count != 0 else { return false }
        return settles { cached in
            count == MemoryLayout<UInt>.size
                ? cached.loadUnaligned(as: UInt.self) == UnsafeRawPointer(value).loadUnaligned(as: UInt.self)
                : sameBits(cached, UnsafeRawPointer(value), count: count)
        }
    }

    /// `isSettled(at:)` for a gate whose values are identified by their first word
    /// (`identifiedByWord`), given that word: for a binding whose values are one.
    @inlinable
    @inline(__always)
    final func settles(identifiedBy word: UInt) -> Bool {
        settles { $0.loadUnaligned(as: UInt.self) == word }
    }

    /// Whether this gate's values are identified by their first word alone.
    @inlinable
    final var identifiedByWord: Bool {
        Int(identifyingBytes) == MemoryLayout<UInt>.size
    }

    /// The settled check, with `sameAsCached` telling whether the run's value is the one
    /// whose leading bytes are at the address it is given.
    @inlinable
    @inline(__always)
    final func settles(_ sameAsCached: (UnsafeRawPointer) -> Bool) -> Bool {
        guard let serializer = recordedSerializer() else { return false }
        let before = replacing.load(ordering: .acquiring)
        guard before & 1 == 0, serializer._withUnsafeGuaranteedRef({ $0.isIdle }) else { return false }
        // Read without the lock: a torn read is possible here and harmless (nothing is
        // retained or called on what was read), and `replacing` rejects it below.
        let cached = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) + Int(cacheOffset)
        let identical = generation > 1 && sameAsCached(cached)
        atomicMemoryFence(ordering: .acquiring)
        return identical && replacing.load(ordering: .relaxed) == before
    }

    /// Whether the next pass must compare its value with the cache: false once, after a
    /// fan-out judged that value different.
    @inlinable
    @inline(__always)
    final func takeComparison() -> Bool {
        if judgedChanged {
            judgedChanged = false
            return false
        }
        return true
    }

    /// Whether the `map` that runs this step offered its part (see `GateFlags.offered`)
    /// to a gate whose `Equality` keeps values as they are; clears the offer, so that it
    /// counts for this step only. Called first thing by the steps of the gates that take
    /// offers (`Node.offerTaker`). False at no cost for any other equality (a binding's),
    /// whose gates are never offered a part.
    @inlinable
    @inline(__always)
    final func takeOffer<Equality: EqualityFunction>(keptBy _: Equality.Type) -> Bool where Equality.Value == A {
        guard Equality.keepsValueItself, flags & GateFlags.offered != 0 else { return false }
        flags &= ~GateFlags.offered
        return true
    }

    /// What this gate stores to keep `value`: `value` itself, without a copy, when the map
    /// running the step offered it (`offered`, from `takeOffer(keptBy:)`); else what
    /// `Equality.keep(_:)` makes.
    ///
    /// Taking an offered part saves a copy and the destruction of the map's own (a
    /// retain and a release of every reference in the part): the map, told so by
    /// `GateFlags.taken`, leaves its part to this gate. Set before anything can throw, so
    /// that a failing child or effect, which destroys what was kept, does not leave the
    /// part to be destroyed twice.
    @inlinable
    @inline(__always)
    final func keep<Equality: EqualityFunction>(_ value: A, offered: Bool, by equality: Equality) throws -> A
    where Equality.Value == A {
        if offered && MemoryLayout<A>.size > 0 {
            flags |= GateFlags.taken
            // The map's part, whose bits `value` borrows: its bits, moved out of room they
            // are copied to, make the value without a retain, since the map will not
            // destroy its part.
            return withUnsafeBytes(of: value) { bits in
                _withUnprotectedUnsafeTemporaryAllocation(of: A.self, capacity: 1) { room in
                    let room = room.baseAddress.unsafelyUnwrapped
                    UnsafeMutableRawPointer(room).copyMemory(from: bits.baseAddress.unsafelyUnwrapped,
                                                             byteCount: MemoryLayout<A>.size)
                    return room.move()
                }
            }
        }
        return try equality.keep(value)
    }

    /// Whether the gate holds a value, read without copying it.
    @inlinable
    @inline(__always)
    final var hasCache: Bool {
        cachePointer.pointee != nil
    }
}

/// A part's verdict: what a judging selection found when it compared the part with the
/// cache of the gate that will receive it (see `SelectionFunction.judgesParts`).
///
/// The raw values are those of the C ABI (`dfs_part_verdict`).
public struct PartVerdict: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int8

    @inlinable
    public init(rawValue: Int8) {
        self.rawValue = rawValue
    }

    /// Not judged: the gate compares the part itself.
    public static let unknown = PartVerdict(rawValue: -1)
    /// Differs from the cache: the gate lets it through without comparing again.
    public static let changed = PartVerdict(rawValue: 0)
    /// Equal to the cache: the gate would stop it, so it is not passed at all.
    public static let unchanged = PartVerdict(rawValue: 1)
}

/// The caches of a fan-out's children, as a judging selection reads them before the
/// children run. Valid only during the `selectAll` call it is passed to.
///
/// A child is *judged* when it is an equality gate that only its own part can change
/// during the fan-out's pass: it occurs once among the children, and no other child
/// reaches it. For any other child the selection's verdict is ignored.
public struct JudgedChildren<Value> {
    @usableFromInline
    let gates: UnsafeBufferPointer<Unmanaged<GateNode<Value, Value?>>?>

    @inlinable
    init(_ gates: UnsafeBufferPointer<Unmanaged<GateNode<Value, Value?>>?>) {
        self.gates = gates
    }

    /// The number of children.
    @inlinable
    public var count: Int { gates.count }

    /// 0 if child `index` is not judged; otherwise a number, never 0, that changes
    /// whenever that child's cache changes (a binding may keep a copy of the cached
    /// value and refresh it only when this moves).
    @inlinable
    public func generation(of index: Int) -> UInt64 {
        guard index >= 0 && index < gates.count, let gate = gates[index] else { return 0 }
        return gate._withUnsafeGuaranteedRef { $0.generation }
    }

    /// Calls `body` with the cached value of child `index`, where it lies, or with `nil`
    /// if that child is not judged or holds no value yet.
    @inlinable
    public func withCachedValue<R>(of index: Int, _ body: (UnsafePointer<Value>?) throws -> R) rethrows -> R {
        try withCache(of: index) { _, value in try body(value) }
    }

    /// Calls `body` with what `generation(of:)` and `withCachedValue(of:_:)` tell of
    /// child `index`, looked up once: for a selection that reads both for every child.
    @inlinable
    public func withCache<R>(
        of index: Int, _ body: (_ generation: UInt64, _ value: UnsafePointer<Value>?) throws -> R
    ) rethrows -> R {
        guard index >= 0 && index < gates.count, let gate = gates[index] else { return try body(0, nil) }
        return try gate._withUnsafeGuaranteedRef { gate in
            let cache = gate.cachePointer
            if cache.pointee == nil { return try body(gate.generation, nil) }
            return try body(gate.generation, UnsafeRawPointer(cache).assumingMemoryBound(to: Value.self))
        }
    }
}

/// The children of a fan-out that it may judge (see `JudgedChildren`): each gate child
/// that occurs once and that no other child reaches; `nil` for every other child.
///
/// The tree below a node never changes, so this holds for the node's whole life. It
/// costs a walk of the children's subtrees, once, when the fan-out is built.
@usableFromInline
func judgeableGates<B>(_ children: ChildNodes<B>) -> ContiguousArray<Unmanaged<GateNode<B, B?>>?> {
    var gates = ContiguousArray(children.nodes.lazy.map { child -> Unmanaged<GateNode<B, B?>>? in
        (child.takeUnretainedValue() as? GateNode<B, B?>).map { Unmanaged.passUnretained($0) }
    })
    var position: [ObjectIdentifier: Int] = [:]
    for (i, gate) in gates.enumerated() {
        guard let gate else { continue }
        let id = ObjectIdentifier(gate.takeUnretainedValue())
        if let first = position[id] {
            gates[first] = nil
            gates[i] = nil
        } else {
            position[id] = i
        }
    }
    if position.isEmpty { return gates }
    for (owner, child) in children.nodes.enumerated() {
        var visited = Set<ObjectIdentifier>()
        var stack: [AnyNode] = [child.takeUnretainedValue()]
        while let node = stack.popLast() {
            node.forEachChild { below in
                let id = ObjectIdentifier(below)
                guard visited.insert(id).inserted else { return }
                if let i = position[id], i != owner { gates[i] = nil }
                stack.append(below)
            }
        }
    }
    return gates
}

/// The bits of `GateNode.flags`.
@usableFromInline
enum GateFlags {
    @usableFromInline static let judgedChanged: UInt8 = 1
    @usableFromInline static let identityDecides: UInt8 = 2
    /// Set on a gate over children run in one loop once every child's gate holds a value
    /// (see `ChildNodes.runLanes(_:calling:childGatesHold:)`).
    @usableFromInline static let childGatesHold: UInt8 = 4
    /// Set by a `map` just before it runs the gate with a part it owns and will not use
    /// again: the gate may keep that part without copying it (see `GateNode.takeOffer()`).
    @usableFromInline static let offered: UInt8 = 8
    /// Set by a gate that kept the part it was offered: the map must not destroy it.
    @usableFromInline static let taken: UInt8 = 16
}
