#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable, for the places where a thread sleeps until another
/// one wakes it: a contended `InlineLock`, a loop's `stop` and `dispose` waiting for the
/// work in progress, a background executor's thread waiting for work.
///
/// Never on an uncontended path: `InlineLock` locks with an atomic and sleeps here only
/// when the lock is held, and a loop's mailbox signals a monitor only when someone is
/// known to wait.
@usableFromInline
final class Monitor: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the mutex held.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits, with the mutex held, until `broadcast()`; may wake spuriously, so callers
    /// wait in a loop over their condition.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes one thread in `wait()`.
    func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread in `wait()`.
    func broadcast() { pthread_cond_broadcast(condition) }
}
