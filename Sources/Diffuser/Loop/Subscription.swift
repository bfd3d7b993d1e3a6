import Synchronization

/// One observer of a loop, a property or a signal: the receiver and the promise that,
/// once `dispose()` has returned, it is not called again.
///
/// Calls hold the subscription's lock, so a `dispose()` on another thread waits for a
/// call in progress; a `dispose()` from inside the receiver (on the calling thread) does
/// not wait for itself. The receiver is released on dispose, so a receiver that captures
/// its owner strongly does not keep it alive through the publisher.
@usableFromInline
final class Subscription<Value>: _Disposable, @unchecked Sendable {
    @usableFromInline let lock = InlineLock()
    @usableFromInline let caller = Atomic<UInt>(0)
    @usableFromInline let closed = Atomic<Bool>(false)
    /// Guarded by `lock` (a call from inside the receiver runs on the thread that holds
    /// it). No code of the user's runs during an access to it (see `dispose`), so it
    /// needs no exclusivity check, which would cost each delivery a thread-local lookup.
    @usableFromInline @exclusivity(unchecked) var receiver: ((Value) throws -> Void)?
    /// How `dispose()` waits for a call in progress on another thread, if not simply
    /// (a loop's observer: see `LoopCore.pausingRunCallback`; an attached feedback's
    /// gear: see `LoopSession.pause`); set before anything may dispose it.
    @usableFromInline var pausing: ((@escaping () -> UInt, () -> Void) -> Void)?
    /// Guarded by `lock`, like `receiver`: what to run after each delivery, once the
    /// lock is given back (an attached feedback's gear: the drain its propagate left,
    /// see `LoopSession.payDebt`). Set before the subscription is shared, released on
    /// dispose; a delivery in progress keeps its own reference.
    @usableFromInline @exclusivity(unchecked) var afterDelivery: (() -> Void)?

    init(_ receiver: @escaping (Value) throws -> Void) {
        self.receiver = receiver
    }

    /// A subscription without a receiver, whose owner makes its calls with `call(_:)`.
    init() {}

    /// Whether `dispose()` has been called.
    @inlinable
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Calls the receiver with `value` unless disposed, then `afterDelivery`.
    @inlinable
    func deliver(_ value: Value) throws {
        var after: (() -> Void)?
        defer { after?() }
        try call {
            after = afterDelivery
            try receiver?(value)
        }
    }

    /// Runs `body` as a call of this subscription: not once disposed, and holding its
    /// lock, so that a `dispose()` on another thread waits for it.
    @inlinable
    func call(_ body: () throws -> Void) rethrows {
        if isClosed { return }
        let me = loopThreadID()
        if caller.load(ordering: .acquiring) == me {
            try body()
            return
        }
        lock.lock()
        caller.store(me, ordering: .releasing)
        defer {
            caller.store(0, ordering: .releasing)
            lock.unlock()
        }
        guard !isClosed else { return }
        try body()
    }

    /// Ends the subscription. The receiver is released last, once the lock is given
    /// back: what it frees (what it captured) may run code that uses this subscription.
    @usableFromInline
    func dispose() {
        closed.store(true, ordering: .releasing)
        if caller.load(ordering: .acquiring) == currentThreadID() {
            // From inside the receiver: the lock is ours; the call in progress keeps its
            // own reference to the receiver and to what runs after it.
            let released = (receiver.take(), afterDelivery.take())
            withExtendedLifetime(released) {}
            return
        }
        if let pausing {
            pausing({ [self] in caller.load(ordering: .acquiring) }) { lock.lock() }
        } else {
            lock.lock()
        }
        let released = (receiver.take(), afterDelivery.take())
        lock.unlock()
        // Not `_ = consume released`: the optimizer may release it before the unlock.
        withExtendedLifetime(released) {}
    }
}

/// A disposable for a subscription made after the disposable was handed out: disposing
/// it before the subscription exists disposes the subscription as soon as it is made.
@usableFromInline
final class DisposableLink: _Disposable, @unchecked Sendable {
    private let lock = Lock()
    private var target: _Disposable?
    private var disposed = false

    @usableFromInline
    init() {}

    @usableFromInline
    func link(_ disposable: _Disposable) {
        let late: Bool = lock.withLock {
            if disposed { return true }
            target = disposable
            return false
        }
        if late { disposable.dispose() }
    }

    @usableFromInline
    func dispose() {
        let target: _Disposable? = lock.withLock {
            disposed = true
            defer { self.target = nil }
            return self.target
        }
        target?.dispose()
    }
}
