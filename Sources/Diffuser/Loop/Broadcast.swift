import Synchronization

/// The delivery of values to subscribers, one value at a time, in the order sent, for
/// `Property` and `Signal`.
///
/// The same queue as a loop's, without executors: the thread that sends into an idle
/// broadcast delivers, and a value sent meanwhile (from another thread, or from a
/// subscriber) is queued and delivered after the current one, never recursively. A new
/// subscriber is added on the queue's turn, with the value that was current when it
/// subscribed, so it sees every later value exactly once, in order. The queue is not
/// bounded: while other threads send faster than the subscribers take the values, the
/// delivering thread's send does not return and the queue grows, as a loop's does.
///
/// A `modify` transform runs with the lock held; the broadcast's own calls from inside
/// it, on its thread, use that hold instead of waiting for the lock (`modifier`).
///
/// Sending and delivering are inlinable, like a loop's queue, so that they are compiled
/// for the value's type where a property or signal is used: unspecialized, every value
/// would copy through the runtime's generic value witnesses (a property of a struct with
/// an observer of one field: 700-770 ns a change against 105-110).
@usableFromInline
final class Broadcast<Value>: @unchecked Sendable {
    @usableFromInline
    enum Item {
        case value(Value)
        case add(Subscription<Value>, current: Value?)
    }

    @usableFromInline let lock = InlineLock()
    @usableFromInline let holdsValue: Bool
    /// Guarded by `lock`: the current value, if this broadcast holds one. No code of the
    /// user's runs during an access to it (see `storeLocked`), so it needs no
    /// exclusivity check.
    @usableFromInline @exclusivity(unchecked) var current: Value?
    @usableFromInline @exclusivity(unchecked) var queue = RingQueue<Item>()
    @usableFromInline @exclusivity(unchecked) var draining = false
    /// The thread running a `modify` transform (which holds `lock`), or 0.
    @usableFromInline let modifier = Atomic<UInt>(0)
    /// The drainer's only.
    @usableFromInline @exclusivity(unchecked) var subscribers: [Subscription<Value>] = []

    /// A broadcast that holds `value` as its current value (a property).
    @usableFromInline
    init(holding value: Value) {
        holdsValue = true
        current = value
    }

    /// A broadcast without a current value (a signal).
    @usableFromInline
    init() {
        holdsValue = false
    }

    deinit {
        for subscription in subscribers { subscription.dispose() }
    }

    /// Whether the calling thread is running a `modify` transform, and so holds `lock`.
    @inlinable
    var inTransform: Bool {
        modifier.load(ordering: .relaxed) == loopThreadID()
    }

    /// The current value; only for a broadcast that holds one.
    @inlinable
    var value: Value {
        if inTransform { return current! }
        lock.lock()
        defer { lock.unlock() }
        return current!
    }

    /// Stores `value` (if this broadcast holds one) and delivers it to every subscriber.
    /// From inside a `modify` transform, it is queued, and the transform's result replaces
    /// it as the current value once the transform returns.
    @inlinable
    func send(_ value: Value) {
        if inTransform {
            // The lock is the transform's: what the replaced value frees may use it.
            withExtendedLifetime(storeLocked(value)) {}
            return
        }
        lock.lock()
        let replaced = storeLocked(value)
        drainIfIdleLocked(releasing: consume replaced)
    }

    /// Stores `transform(current)` and delivers it, as one change: two threads modifying
    /// at once lose neither change. The transform may read the value (the last stored);
    /// a value it sends (or a `modify` nested in it makes) is delivered first and then
    /// replaced by its result. If it throws, its result is not stored, and what it sent
    /// or subscribed meanwhile is delivered all the same.
    @inlinable
    func modify(_ transform: (inout Value) throws -> Void) rethrows {
        if inTransform {
            withExtendedLifetime(try modifyLocked(transform)) {}
            return
        }
        lock.lock()
        // Written and cleared with the lock held, so no other thread's mark is touched.
        modifier.store(loopThreadID(), ordering: .relaxed)
        let replaced: Value?
        do {
            replaced = try modifyLocked(transform)
        } catch {
            // Its result is not stored; what it stored or added meanwhile is delivered.
            modifier.store(0, ordering: .relaxed)
            drainIfIdleLocked(releasing: nil)
            throw error
        }
        modifier.store(0, ordering: .relaxed)
        drainIfIdleLocked(releasing: consume replaced)
    }

    /// `modify`'s change, with `lock` held; returns the value it replaced (see
    /// `storeLocked`).
    @inlinable
    func modifyLocked(_ transform: (inout Value) throws -> Void) rethrows -> Value? {
        var value = current!
        try transform(&value)
        return storeLocked(value)
    }

    /// Stores and queues `value`, with `lock` held, and returns the value it replaced
    /// (nil for a broadcast that holds none), for the caller to release once it holds
    /// the lock no more: what that value frees may run code that uses this broadcast.
    /// The value is taken out of `current` before the new one is stored, so that no code
    /// runs in the middle of a change of `current`, which skips the runtime's exclusivity
    /// check.
    @inlinable
    func storeLocked(_ value: Value) -> Value? {
        queue.append(.value(value))
        guard holdsValue else { return nil }
        let replaced = current.take()
        current = value
        return replaced
    }

    /// Adds a subscriber; it receives the current value first, if there is one.
    /// `pausing`: how its `dispose()` waits for a delivery in progress on another thread
    /// (see `Subscription.pausing`); `afterDelivery`: what runs after each of its
    /// deliveries, outside its lock (see `Subscription.afterDelivery`). Both are set
    /// before the subscription is shared.
    @usableFromInline
    func subscribe(
        _ receiver: @escaping (Value) throws -> Void,
        pausing: ((@escaping () -> UInt, () -> Void) -> Void)? = nil,
        afterDelivery: (() -> Void)? = nil
    ) -> Subscription<Value> {
        let subscription = Subscription(receiver)
        subscription.pausing = pausing
        subscription.afterDelivery = afterDelivery
        let inside = inTransform
        if !inside { lock.lock() }
        queue.append(.add(subscription, current: holdsValue ? current : nil))
        if !inside { drainIfIdleLocked(releasing: nil) }
        return subscription
    }

    /// Delivers the queued items unless another thread is; releases the lock, then
    /// `replaced` (the value a store replaced), before the first delivery.
    @inlinable
    func drainIfIdleLocked(releasing replaced: consuming Value?) {
        if draining {
            lock.unlock()
            // Not `_ = consume replaced`: the optimizer may release it earlier.
            withExtendedLifetime(replaced) {}
            return
        }
        draining = true
        while let item = queue.popFirst() {
            lock.unlock()
            if replaced != nil { replaced = nil }
            // Consumed: released before the lock is taken again, since what it frees
            // may use this broadcast.
            deliver(consume item)
            lock.lock()
        }
        draining = false
        lock.unlock()
    }

    /// Delivers one queued item, on the drainer, without the lock; releases it before
    /// returning.
    @inlinable
    func deliver(_ item: consuming Item) {
        switch consume item {
        case .value(let value):
            var sawClosed = false
            for subscription in subscribers {
                if subscription.isClosed { sawClosed = true; continue }
                try? subscription.deliver(value)
            }
            if sawClosed { subscribers.removeAll { $0.isClosed } }
        case let .add(subscription, current):
            subscribers.append(subscription)
            if holdsValue, let current { try? subscription.deliver(current) }
        }
    }
}
