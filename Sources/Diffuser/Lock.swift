import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-recursive mutual-exclusion lock whose `lock` and `unlock` may happen in
/// different scopes.
///
/// `Synchronization.Mutex` only offers scoped locking; the run serializer needs to
/// hold a lock across a whole `run` and to take two locks at once when graphs merge.
///
/// Every `run` takes one of these (two through the C ABI, with the handle table's), so
/// the uncontended case is one atomic compare-and-swap to lock and one atomic exchange
/// to unlock, inlined, with no call into the C library. Only a thread that finds the
/// lock held goes to sleep, on a pthread condition variable; the state word records
/// that someone may be sleeping, so that only then does `unlock` wake a sleeper. (This
/// is the classic three-state futex mutex, with the condition variable and its mutex
/// standing in for the futex, which Swift cannot call portably.)
///
/// The lock itself is `InlineLock`, which a class whose lock is hot stores inline
/// (`Serializer`).
@_spi(Bindings)
public final class Lock: @unchecked Sendable {
    @usableFromInline
    let inline = InlineLock()

    public init() {}

    @inlinable
    @inline(__always)
    public func lock() {
        inline.lock()
    }

    @inlinable
    @inline(__always)
    public func unlock() {
        inline.unlock()
    }

    /// Takes the lock if it is free; false (and nothing taken) if it is held.
    public func tryLock() -> Bool {
        inline.tryLock()
    }

    /// Runs `body` with the lock held.
    @inlinable
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// `Lock` as a value, for an object to hold in its own storage: the state word then lies
/// at a fixed offset in that object, one load from a reference to it.
@usableFromInline
struct InlineLock: ~Copyable, @unchecked Sendable {
    /// 0: free; 1: held; 2: held, and a thread may be sleeping until it is free.
    @usableFromInline
    let state = Atomic<UInt32>(0)
    /// Where a thread sleeps while the lock is held: a sleeper checks the state and
    /// waits under the monitor's mutex, and a waker signals under it, so a wake-up
    /// cannot fall between the check and the wait.
    private let sleepers = Monitor()

    @usableFromInline
    init() {}

    @inlinable
    @inline(__always)
    func lock() {
        if !state.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            lockContended()
        }
    }

    /// Takes the lock if it is free; false (and nothing taken) if it is held.
    func tryLock() -> Bool {
        state.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
    }

    @inlinable
    @inline(__always)
    func unlock() {
        if state.exchange(0, ordering: .releasing) == 2 {
            wakeOne()
        }
    }

    /// The lock was held: mark it contended and sleep until it is free. Whoever takes it
    /// here leaves it marked contended, which at worst costs one needless wake-up.
    @usableFromInline
    @inline(never)
    func lockContended() {
        while state.exchange(2, ordering: .acquiring) != 0 {
            sleepers.lock()
            if state.load(ordering: .relaxed) == 2 {
                sleepers.wait()
            }
            sleepers.unlock()
        }
    }

    /// Wakes one sleeper, if any, after an unlock of a contended lock.
    @usableFromInline
    @inline(never)
    func wakeOne() {
        sleepers.lock()
        sleepers.signal()
        sleepers.unlock()
    }
}

/// A number that identifies the calling thread while it lives; never zero.
@_spi(Bindings)
public func currentThreadID() -> UInt {
    #if canImport(Darwin)
    return UInt(bitPattern: pthread_self())
    #else
    return UInt(pthread_self())
    #endif
}
