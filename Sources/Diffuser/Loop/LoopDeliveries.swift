#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's deliveries into loops made under another object's lock (a source
/// connection's, while it delivers an event; a gear subscription's, while an attached
/// feedback's propagate runs): how many it is inside (of any loop), and the drains it
/// owes to loops whose deliveries were nested in an outer one. Those are paid once its
/// outermost delivery is over, outside every such lock: a step run inside another
/// delivery would hold that delivery's lock (see `LoopCore.debtor`).
///
/// Only the thread itself reads and writes its own record, so the record needs no lock;
/// it lives in thread-specific storage and goes away with the thread.
@usableFromInline
enum LoopDeliveries {
    /// A thread's record, reached through a pointer: only its thread touches it, so it
    /// needs no reference counting and no exclusivity checks, which would cost more than
    /// what a delivery does with it.
    private struct Record {
        var depth = 0
        var owed: [() -> Void] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // Without a key, deliveries could not be counted: a nested event would run its
        // step under the outer delivery's lock.
        let made = pthread_key_create(&key) { raw in
            #if canImport(Darwin)
            let record = raw.assumingMemoryBound(to: Record.self)
            #else
            guard let record = raw?.assumingMemoryBound(to: Record.self) else { return }
            #endif
            record.deinitialize(count: 1)
            record.deallocate()
        }
        require(made == 0, "Diffuser: no thread-specific key for loop deliveries (\(made))")
        return key
    }()

    /// The calling thread's record, made on first use.
    private static var record: UnsafeMutablePointer<Record> {
        if let raw = pthread_getspecific(key) {
            return raw.assumingMemoryBound(to: Record.self)
        }
        let fresh = UnsafeMutablePointer<Record>.allocate(capacity: 1)
        fresh.initialize(to: Record())
        let stored = pthread_setspecific(key, fresh)
        require(stored == 0, "Diffuser: cannot keep this thread's loop deliveries (\(stored))")
        return fresh
    }

    /// Counts the calling thread as inside one more delivery.
    @usableFromInline
    static func enter() {
        record.pointee.depth += 1
    }

    /// Ends what `enter()` began.
    @usableFromInline
    static func leave() {
        record.pointee.depth -= 1
    }

    /// Whether the calling thread is inside a delivery.
    @usableFromInline
    static var isInside: Bool {
        record.pointee.depth > 0
    }

    /// Keeps `pay` for the end of the calling thread's outermost delivery.
    @usableFromInline
    static func owe(_ pay: @escaping () -> Void) {
        record.pointee.owed.append(pay)
    }

    /// Runs the drains the calling thread owes, once it is inside no delivery.
    @usableFromInline
    static func payOwed() {
        let current = record
        guard current.pointee.depth == 0, !current.pointee.owed.isEmpty else { return }
        let owed = current.pointee.owed
        current.pointee.owed = []
        for pay in owed { pay() }
    }
}
