import Synchronization

/// The graph bookkeeping every diffuser node shares, independent of its value type.
///
/// A node's `serializer` decides which lock guards its cache; see `Serializer`.
@usableFromInline
class AnyNode {
    /// The address of the serializer of the graph this node belongs to, or 0 while the
    /// node has never been part of a run. The node holds a strong reference to it.
    ///
    /// Written only with `Serializer.graphLock` held, and only to replace a serializer
    /// by the one it was merged into (which keeps it alive), so a run may read it
    /// without `graphLock`: that is what makes a run take a single lock.
    @usableFromInline
    let serializerAddress = Atomic<UInt>(0)

    @usableFromInline
    init() {}

    deinit {
        if let serializer = loadSerializer() {
            Unmanaged.passUnretained(serializer).release()
        }
    }

    /// The serializer this node last recorded, if any; may have been merged since.
    final func loadSerializer() -> Serializer? {
        recordedSerializer()?.takeUnretainedValue()
    }

    /// `loadSerializer()` without a reference: valid while this node lives, since the
    /// node holds its serializer and a replaced one is held by its replacement.
    @inlinable
    final func recordedSerializer() -> Unmanaged<Serializer>? {
        let bits = serializerAddress.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Serializer>.fromOpaque(pointer)
    }

    /// Records `serializer` as this node's. Call with `Serializer.graphLock` held, and only
    /// with a node that has none or whose serializer was merged into `serializer`.
    final func storeSerializer(_ serializer: Serializer) {
        let old = loadSerializer()
        if old === serializer { return }
        let bits = UInt(bitPattern: Unmanaged.passRetained(serializer).toOpaque())
        serializerAddress.store(bits, ordering: .releasing)
        if let old { Unmanaged.passUnretained(old).release() }
    }

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

    /// Whether a run of `value` from this node would do nothing, decided without the
    /// graph's lock and without calling user code; false unless a node kind can tell
    /// (the equality gates, see `GateNode.isSettled(at:)`). A method rather than a step:
    /// it is called once per run, at the root, and a stored closure would cost memory in
    /// every node.
    ///
    /// Takes the value by address, so that no override needs `A`'s metadata to find it.
    @usableFromInline
    func isSettled(at value: UnsafePointer<A>) -> Bool { false }

    /// This node as a gate whose `isSettled(at:)` can be true, else `nil`: asked once, by
    /// a binding that keeps a `SettledCheck`.
    @usableFromInline
    var settlingGate: Unmanaged<GateNode<A, A?>>? { nil }

    /// This node as a gate that the very value it holds satisfies at every pass (see
    /// `GateNode.holds(_:)`), else `nil`: asked once, by a `map` being built over it,
    /// which then checks its parts there before running it. A method rather than a cast,
    /// which would look up the gate's generic metadata for every map built.
    @usableFromInline
    var identityGate: Unmanaged<GateNode<A, A?>>? { nil }

    /// This node as a gate that may keep a part the `map` running it owns instead of a
    /// copy (see `GateFlags.offered`), else `nil`: asked once, by a `map` being built over
    /// it.
    @usableFromInline
    var offerTaker: Unmanaged<GateNode<A, A?>>? { nil }

    /// Runs this node on `value`.
    @inlinable
    @inline(__always)
    final func run(_ value: A) throws {
        try step(self, value)
    }
}

extension Unmanaged {
    /// Runs the node this refers to on `value`, without retaining the node or its step:
    /// the caller's strong reference keeps both alive.
    @inlinable
    @inline(__always)
    func run<A>(_ value: A) throws where Instance == Node<A> {
        try _withUnsafeGuaranteedRef { try $0.step($0, value) }
    }
}

/// Whether the cache at `cache` holds a value equal to `value` by `equality`, compared
/// where it lies.
///
/// Reading the cache out (`if let old = cache`) would copy it, retaining every reference
/// inside it, only to compare and drop the copy; so would a `switch` over it. The tag is
/// tested with `== nil`, which borrows, and an `Optional`'s payload lies at the start of
/// its storage, so the equality gets a pointer to the cached value itself.
@inlinable
@inline(__always)
func cachedValue<A, Equality: EqualityFunction>(
    at cache: UnsafeMutablePointer<A?>, equals value: A, by equality: Equality
) throws -> Bool where Equality.Value == A {
    if cache.pointee == nil { return false }
    return try equality.equals(cachedAt: UnsafeRawPointer(cache).assumingMemoryBound(to: A.self), value)
}
