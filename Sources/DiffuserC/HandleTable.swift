import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// The kinds of objects handed to C.
enum HandleKind: UInt8, CustomStringConvertible {
    case type, diffuser, fuser, disposable, dispatch
    case loop, job, executor, work, gear, journal, feedback

    var description: String {
        switch self {
        case .type: return "dfs_type"
        case .diffuser: return "dfs_diffuser"
        case .fuser: return "dfs_fuser"
        case .disposable: return "dfs_disposable"
        case .dispatch: return "dfs_dispatch"
        case .loop: return "dfs_loop"
        case .job: return "dfs_job"
        case .executor: return "dfs_executor"
        case .work: return "dfs_work"
        case .gear: return "dfs_gear"
        case .journal: return "dfs_journal"
        case .feedback: return "dfs_feedback"
        }
    }
}

/// Every object handed to C, addressed by handle.
///
/// A handle is not a pointer to the object but an index into this table plus the slot's
/// generation, so a released or forged handle is detected (the generation does not
/// match) instead of being dereferenced. The table holds one strong reference per slot
/// and counts the references to it in two tallies: the caller's (`dfs_*_retain` and
/// `dfs_*_release`) and the library's own (a type used by a diffuser), so that a caller
/// who releases more than it holds gets an error instead of taking the library's
/// reference. The slot is freed when both reach zero. A slot whose every generation has
/// been handed out is retired instead of reused, so that no released handle ever becomes
/// live again.
final class HandleTable: @unchecked Sendable {
    private struct Slot {
        var generation: UInt32 = 1
        var kind: HandleKind = .type
        var object: AnyObject?
        var references = 0
        var libraryReferences = 0
        var permanent = false
        /// For an empty slot: the next empty slot, or -1.
        var nextFree = -1
    }

    private let lock = Lock()
    // Everything below is guarded by `lock`. The slots are not an Array: a lookup reads
    // one slot without retaining a buffer, and slots are only ever appended.
    private var slots = UnsafeMutablePointer<Slot>.allocate(capacity: 64)
    private var slotCapacity = 64
    private var slotCount = 0
    /// The most recently emptied slot, or -1; the empty slots form a list through
    /// `nextFree`, so freeing and reusing a slot allocates nothing.
    private var firstFree = -1

    static let shared = HandleTable()

    /// The generation of a new slot: 1; tests of retirement start near the last one.
    private let firstGeneration: UInt32

    init(firstGeneration: UInt32 = 1) {
        precondition(firstGeneration > 0, "generation 0 marks a retired slot")
        self.firstGeneration = firstGeneration
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
    }

    /// Doubles the room for slots. With `lock` held.
    private func grow() {
        let larger = UnsafeMutablePointer<Slot>.allocate(capacity: slotCapacity * 2)
        larger.moveInitialize(from: slots, count: slotCount)
        slots.deallocate()
        slots = larger
        slotCapacity *= 2
    }

    private static func encode(index: Int, generation: UInt32) -> OpaquePointer {
        // Index + 1 in the low half so that no handle is NULL.
        OpaquePointer(bitPattern: UInt(generation) << 32 | UInt(index + 1))!
    }

    private static func decode(_ handle: OpaquePointer) -> (index: Int, generation: UInt32) {
        let bits = UInt(bitPattern: handle)
        return (Int(bits & 0xFFFF_FFFF) - 1, UInt32(truncatingIfNeeded: bits >> 32))
    }

    /// Registers `object` with one C reference and returns its handle. A permanent
    /// handle ignores retain and release (the built-in types). A lent one starts with the
    /// library's reference instead of the caller's (see `releaseForLibrary`): a handle
    /// lent to a callback for the call, which the callback may retain to keep but not
    /// release unless it retained it.
    func insert(_ object: AnyObject, kind: HandleKind, permanent: Bool = false, lent: Bool = false) -> OpaquePointer {
        lock.withLock {
            let index: Int
            if firstFree >= 0 {
                index = firstFree
                firstFree = slots[index].nextFree
            } else {
                if slotCount == slotCapacity { grow() }
                (slots + slotCount).initialize(to: Slot(generation: firstGeneration))
                slotCount += 1
                index = slotCount - 1
            }
            slots[index].kind = kind
            slots[index].object = object
            slots[index].references = lent ? 0 : 1
            slots[index].libraryReferences = lent ? 1 : 0
            slots[index].permanent = permanent
            return Self.encode(index: index, generation: slots[index].generation)
        }
    }

    /// The slot of `handle` if it holds an object (of `kind`, unless `kind` is `nil`).
    /// With `lock` held.
    private func liveSlot(_ handle: OpaquePointer, _ kind: HandleKind?) -> Int? {
        let (index, generation) = Self.decode(handle)
        guard index >= 0, index < slotCount, slots[index].generation == generation,
              slots[index].object != nil, kind == nil || slots[index].kind == kind else { return nil }
        return index
    }

    /// Empties slot `index` and returns what it held; its handle is stale from now on.
    /// With `lock` held.
    private func freeSlot(_ index: Int) -> AnyObject? {
        let object = slots[index].object
        slots[index].object = nil
        guard slots[index].generation < UInt32.max else {
            // A next generation would wrap to one handed out before: retire the slot.
            // Generation 0 is in no handle, and the slot is on no free list.
            slots[index].generation = 0
            return object
        }
        slots[index].generation += 1
        slots[index].nextFree = firstFree
        firstFree = index
        return object
    }

    /// The object behind `handle`, which must be a live handle of `kind`.
    func lookup<T: AnyObject>(
        _ handle: OpaquePointer?, _ kind: HandleKind, as: T.Type, name: @autoclosure () -> String
    ) throws -> T {
        guard let handle else { throw CError.null(name()) }
        let object: AnyObject? = lock.withLock { liveSlot(handle, kind).flatMap { slots[$0].object } }
        guard let object else { throw staleError(handle, kind, name: name()) }
        return unsafeDowncast(object, to: T.self)
    }

    func retain(_ handle: OpaquePointer?, _ kind: HandleKind, name: String) throws {
        guard let handle else { throw CError.null(name) }
        let ok: Bool = lock.withLock {
            guard let index = liveSlot(handle, kind) else { return false }
            if !slots[index].permanent { slots[index].references += 1 }
            return true
        }
        if !ok { throw staleError(handle, kind, name: name) }
    }

    /// Drops one of the caller's references; when no reference of either tally is left
    /// the slot is freed and its object returned, so the caller can finish it outside the
    /// lock. NULL is ignored. A release beyond the caller's references is refused.
    @discardableResult
    func release(_ handle: OpaquePointer?, _ kind: HandleKind, name: String) throws -> AnyObject? {
        guard let handle else { return nil }
        var released: AnyObject?
        var overReleased = false
        let ok: Bool = lock.withLock {
            guard let index = liveSlot(handle, kind) else { return false }
            if slots[index].permanent { return true }
            guard slots[index].references > 0 else {
                overReleased = true
                return true
            }
            slots[index].references -= 1
            if slots[index].references == 0 && slots[index].libraryReferences == 0 {
                released = freeSlot(index)
            }
            return true
        }
        if !ok { throw staleError(handle, kind, name: name) }
        if overReleased {
            throw CError(status: DFS_ERR_HANDLE,
                         message: "\(name) was released more times than it was retained (the library's own references stay)")
        }
        return released
    }

    /// Adds a reference of the library's own (see the type's documentation).
    func retainForLibrary(_ handle: OpaquePointer?, _ kind: HandleKind, name: String) throws {
        guard let handle else { throw CError.null(name) }
        let ok: Bool = lock.withLock {
            guard let index = liveSlot(handle, kind) else { return false }
            if !slots[index].permanent { slots[index].libraryReferences += 1 }
            return true
        }
        if !ok { throw staleError(handle, kind, name: name) }
    }

    /// Drops a reference taken by `retainForLibrary`; frees the slot when none of either
    /// tally is left.
    func releaseForLibrary(_ handle: OpaquePointer, _ kind: HandleKind) {
        let dropped: AnyObject? = lock.withLock {
            guard let index = liveSlot(handle, kind), !slots[index].permanent else { return nil }
            precondition(slots[index].libraryReferences > 0, "a library reference released twice")
            slots[index].libraryReferences -= 1
            if slots[index].references == 0 && slots[index].libraryReferences == 0 { return freeSlot(index) }
            return nil
        }
        // Dropped outside the lock: its deinit may come back to this table.
        _ = dropped
    }

    /// Frees the slot of `handle`, a live handle of `kind`, whatever its reference count,
    /// and returns its object: a handle that is good for one use (a `dfs_work`).
    func take(_ handle: OpaquePointer?, _ kind: HandleKind, name: String) throws -> AnyObject {
        guard let handle else { throw CError.null(name) }
        let object: AnyObject? = lock.withLock { liveSlot(handle, kind).flatMap(freeSlot) }
        guard let object else { throw staleError(handle, kind, name: name) }
        return object
    }

    /// Frees the slot of `handle` whatever its reference count (a dispatch that ended).
    func invalidate(_ handle: OpaquePointer) {
        // Dropped outside the lock: its deinit may come back to this table.
        let dropped: AnyObject? = lock.withLock { liveSlot(handle, nil).flatMap(freeSlot) }
        _ = dropped
    }

    /// How many slots hold an object: for leak checks in tests.
    var liveCount: Int {
        lock.withLock { (0..<slotCount).reduce(0) { $0 + (slots[$1].object == nil ? 0 : 1) } }
    }

    private func staleError(_ handle: OpaquePointer, _ kind: HandleKind, name: String) -> CError {
        let actual: HandleKind? = lock.withLock { liveSlot(handle, nil).map { slots[$0].kind } }
        if let actual {
            return CError(status: DFS_ERR_HANDLE, message: "\(name) is a \(actual), not a \(kind)")
        }
        return CError(status: DFS_ERR_HANDLE, message: "\(name) is not a live \(kind) handle (released or invalid)")
    }
}
