/// The delivery of values to subscribers, one value at a time, in the order sent, for
/// `Property` and `Signal`.
///
/// The same queue as a loop's, without executors: the thread that sends into an idle
/// broadcast delivers, and a value sent meanwhile (from another thread, or from a
/// subscriber) is queued and delivered after the current one, never recursively. A new
/// subscriber is added on the queue's turn, with the value that was current when it
/// subscribed, so it sees every later value exactly once, in order.
final class Broadcast<Value>: @unchecked Sendable {
    private enum Item {
        case value(Value)
        case add(Subscription<Value>, current: Value?)
    }

    private let lock = Lock()
    private let holdsValue: Bool
    /// Guarded by `lock`: the current value, if this broadcast holds one.
    private var current: Value?
    private var queue = RingQueue<Item>()
    private var draining = false
    /// The drainer's only.
    private var subscribers: [Subscription<Value>] = []

    /// A broadcast that holds `value` as its current value (a property).
    init(holding value: Value) {
        holdsValue = true
        current = value
    }

    /// A broadcast without a current value (a signal).
    init() {
        holdsValue = false
    }

    deinit {
        for subscription in subscribers { subscription.dispose() }
    }

    /// The current value; only for a broadcast that holds one.
    var value: Value {
        lock.withLock { current! }
    }

    /// Stores `value` (if this broadcast holds one) and delivers it to every subscriber.
    func send(_ value: Value) {
        lock.lock()
        if holdsValue { current = value }
        queue.append(.value(value))
        drainIfIdleLocked()
    }

    /// Stores `transform(current)` and delivers it, as one change: two threads modifying
    /// at once lose neither change.
    func modify(_ transform: (inout Value) throws -> Void) rethrows {
        lock.lock()
        var value = current!
        do {
            try transform(&value)
        } catch {
            lock.unlock()
            throw error
        }
        current = value
        queue.append(.value(value))
        drainIfIdleLocked()
    }

    /// Adds a subscriber; it receives the current value first, if there is one.
    func subscribe(_ receiver: @escaping (Value) throws -> Void) -> _Disposable {
        let subscription = Subscription(receiver)
        lock.lock()
        queue.append(.add(subscription, current: holdsValue ? current : nil))
        drainIfIdleLocked()
        return subscription
    }

    /// Delivers the queued items unless another thread is; releases the lock.
    private func drainIfIdleLocked() {
        if draining {
            lock.unlock()
            return
        }
        draining = true
        while let item = queue.popFirst() {
            lock.unlock()
            switch item {
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
            lock.lock()
        }
        draining = false
        lock.unlock()
    }
}
