import CDiffuserFFI
#if !DIFFUSER_SINGLE_MODULE
// SwiftPM builds the core and the C ABI as two modules; CMake compiles them as one.
@_spi(Bindings) import Diffuser
#endif

/// The kinds of objects handed to C.
enum HandleKind: UInt8, CustomStringConvertible {
    case type, diffuser, fuser, disposable, dispatch

    var description: String {
        switch self {
        case .type: return "dfs_type"
        case .diffuser: return "dfs_diffuser"
        case .fuser: return "dfs_fuser"
        case .disposable: return "dfs_disposable"
        case .dispatch: return "dfs_dispatch"
        }
    }
}

/// Every object handed to C, addressed by handle.
///
/// A handle is not a pointer to the object but an index into this table plus the slot's
/// generation, so a released or forged handle is detected (the generation does not
/// match) instead of being dereferenced. The table holds one strong reference per slot
/// and counts the C references to it.
final class HandleTable: @unchecked Sendable {
    private struct Slot {
        var generation: UInt32 = 1
        var kind: HandleKind = .type
        var object: AnyObject?
        var references = 0
        var permanent = false
    }

    private let lock = Lock()
    // Guarded by `lock`, so the runtime's exclusivity checks would only add cost.
    // Not an Array: `peek` reads a slot without retaining a buffer, and slots are only
    // ever appended.
    private var slots = UnsafeMutablePointer<Slot>.allocate(capacity: 64)
    private var slotCapacity = 64
    private var slotCount = 0
    @exclusivity(unchecked) private var free: [Int] = []

    static let shared = HandleTable()

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
    /// handle ignores retain and release (the built-in types).
    func insert(_ object: AnyObject, kind: HandleKind, permanent: Bool = false) -> OpaquePointer {
        lock.withLock {
            let index: Int
            if let reused = free.popLast() {
                index = reused
            } else {
                if slotCount == slotCapacity { grow() }
                (slots + slotCount).initialize(to: Slot())
                slotCount += 1
                index = slotCount - 1
            }
            slots[index].kind = kind
            slots[index].object = object
            slots[index].references = 1
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
        slots[index].generation &+= 1
        if slots[index].generation == 0 { slots[index].generation = 1 }
        free.append(index)
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

    /// The diffuser behind `handle`, which must be a live diffuser handle. Its root
    /// gate, if a run can be settled there, is offered to `dfs_diffuser_run`'s settled
    /// path (`settled_run.c`) if it was not yet: later runs of the value it holds then
    /// take no lock. Done here, with the lock held, because the settled path's entries
    /// are written only under it.
    func lookupForRun(_ handle: OpaquePointer?) throws -> CDiffuser {
        guard let handle else { throw CError.null("diffuser") }
        let object: AnyObject? = lock.withLock {
            guard let index = liveSlot(handle, .diffuser), let object = slots[index].object else { return nil }
            // Only a gate whose C values are identified by their pointer, which
            // `dfs_diffuser_run` then compares alone (`isSettled(identifiedBy:)`).
            let settled = unsafeDowncast(object, to: CDiffuser.self).settled
            if dfsi_settled_published(UInt(bitPattern: handle)) == 0, settled.identifiedByWord,
               let gate = settled.gateAddress {
                dfsi_settled_publish(UInt(bitPattern: handle), gate)
            }
            return object
        }
        guard let object else { throw staleError(handle, .diffuser, name: "diffuser") }
        return unsafeDowncast(object, to: CDiffuser.self)
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

    /// Drops one C reference; on the last one the slot is freed and its object
    /// returned, so the caller can finish it outside the lock. NULL is ignored.
    @discardableResult
    func release(_ handle: OpaquePointer?, _ kind: HandleKind, name: String) throws -> AnyObject? {
        guard let handle else { return nil }
        var released: AnyObject?
        var published = false
        let ok: Bool = lock.withLock {
            guard let index = liveSlot(handle, kind) else { return false }
            if slots[index].permanent { return true }
            slots[index].references -= 1
            if slots[index].references == 0 {
                released = freeSlot(index)
                if kind == .diffuser { published = dfsi_settled_retract(UInt(bitPattern: handle)) != 0 }
            }
            return true
        }
        if !ok { throw staleError(handle, kind, name: name) }
        // A run on the settled path may still be reading the diffuser: wait for it
        // before the caller drops the last reference.
        if published { dfsi_settled_quiesce(UInt(bitPattern: handle)) }
        return released
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
