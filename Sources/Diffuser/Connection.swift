import Synchronization

/// Where an event enters its connection: each source of a connection hands every event
/// it emits to `enter`, which runs the event's whole way up (the fuser's transforms, then
/// the effect) as one delivery.
protocol ConnectionEntry: AnyObject {
    /// Runs `climb` (the transforms and the effect for one event) as a delivery of this
    /// connection, or does nothing if the connection is disposed.
    func enter(_ climb: () throws -> Void) throws

    /// Whether the connection still delivers: false once it was disposed. Read only
    /// inside a climb, between its transforms, so that a transform that disposed the
    /// connection is the last user code of that event.
    var isOpen: Bool { get }
}

/// The receiving end of one `Fuser.connect`: it owns the user's effect and the
/// disposables of every source connection made for it.
///
/// It is the one place that enforces the connection promises:
/// - events are delivered one at a time (two threads emitting wait for each other), and
///   a delivery is an event's whole way from its source: the transforms of `extract`
///   and `extractUnlessNil`, then the effect, all under the connection's lock;
/// - once `dispose()` has returned, no user code of the connection runs for an event,
///   even if a source on another thread is still emitting, because dispose waits for a
///   delivery in flight;
/// - a transform or the effect may dispose its own connection, or cause a nested
///   emission, on the delivering thread without deadlocking. The sources of a connection
///   disposed from inside its delivery are disconnected right after the delivery ends,
///   on the delivering thread, with the lock released: a source whose disconnect waits
///   for another of its emitting threads (which may be waiting for this lock) does not
///   deadlock.
///
/// Recording the sources once they are connected (`attach`) does not wait for a delivery
/// in progress on another thread: a source's connect may hand its emitter to a thread
/// whose delivery, holding the lock, waits for the connecting thread (a loop's close from
/// a transform waits for the drain that connects the loop's sources). A connection
/// disposed while its sources connect (a loop's registration holds it from before they
/// connect) disconnects them once both the connect and the dispose are through, on the
/// thread of whichever ends last.
final class Connection<A>: _Disposable, ConnectionEntry, @unchecked Sendable {
    private let lock = Lock()
    private let owner = Atomic<UInt>(0)
    private let disposed = Atomic<Bool>(false)
    /// Set once a dispose has let go of the effect: no event reaches user code after it
    /// (the rest of a delivery under way aside). See `disposeAgain()`.
    private let cleared = Atomic<Bool>(false)
    // The lock guards the fields each event reads, so the runtime's exclusivity checks
    // (`@exclusivity(unchecked)`), which cost a thread-local lookup at each access, are
    // left out of them.
    /// Guarded by `lock`; `nil` once disposed.
    @exclusivity(unchecked) private var effect: ((A) throws -> Void)?
    /// Guards `upstream` alone, and is never held while user code runs: `attach` takes
    /// it, not `lock`, so that it never waits for a delivery.
    private let upstreamLock = Lock()
    /// Guarded by `upstreamLock`; set once the sources are connected, unless the first
    /// dispose is done by then (`disposeDone`); taken by the first dispose.
    private var upstream: _Disposable?
    /// Guarded by `upstreamLock`: the first dispose is past the lock (no delivery that
    /// began before it is under way) and has taken what was attached: sources attached
    /// later are disconnected by `attach` itself.
    private var disposeDone = false
    /// Guarded by `lock`: the disconnection of the sources, to run once the delivery in
    /// progress on the owning thread has released the lock (a dispose from inside the
    /// delivery). A closure rather than the sources' disposable: each event reads it, and
    /// reading an optional existential takes the runtime's generic value witnesses.
    @exclusivity(unchecked) private var disconnectAfterDelivery: (() -> Void)?
    /// Guarded by `lock`; `nil` once disposed. Runs on the delivering thread after each
    /// outermost delivery, once the lock is released and before a disconnect the effect
    /// asked for: work the effect left for then (a loop's drain, see `LoopCore.debtor`).
    /// Let go with the effect, as it may hold what the effect holds (a loop).
    @exclusivity(unchecked) private var afterDelivery: (() -> Void)?
    /// Runs each outermost delivery, under the lock, given the delivery to run: what
    /// the receiver makes of it (a loop counts it as a callback of its run, and drops
    /// the event once the run has ended).
    private let aroundDelivery: ((() throws -> Void) throws -> Void)?

    init(
        _ effect: @escaping (A) throws -> Void,
        afterDelivery: (() -> Void)? = nil,
        aroundDelivery: ((() throws -> Void) throws -> Void)? = nil
    ) {
        self.effect = effect
        self.afterDelivery = afterDelivery
        self.aroundDelivery = aroundDelivery
    }

    /// Runs `climb` (an event's transforms, ending in `deliver`) holding the lock,
    /// unless the connection is disposed.
    func enter(_ climb: () throws -> Void) throws {
        let me = currentThreadID()
        if owner.load(ordering: .acquiring) == me {
            // Nested emission from inside our own delivery: the lock is ours already.
            if effect != nil { try climb() }
            return
        }
        lock.lock()
        owner.store(me, ordering: .releasing)
        // Keeps the effect alive to the end of the delivery, even if it disposes its
        // own connection.
        let delivering = effect
        // Taken with the effect: a dispose from inside the delivery lets both go, and
        // the work the delivery left still runs after it.
        let after = afterDelivery
        defer {
            let disconnect = disconnectAfterDelivery
            disconnectAfterDelivery = nil
            owner.store(0, ordering: .releasing)
            lock.unlock()
            // What the effect left for after the delivery (a loop's drain) runs before a
            // disconnect it asked for, as it would have inside the effect: a source's
            // disconnect may wait for another thread that waits for that drain.
            after?()
            // The effect outlives the disconnection, as in `dispose()`. (Only when there
            // is one: the generic call would look up the effect's type at every event.)
            if let disconnect { withExtendedLifetime(delivering) { disconnect() } }
        }
        guard delivering != nil else { return }
        if let aroundDelivery { try aroundDelivery(climb) } else { try climb() }
    }

    /// Whether the connection still has its effect; only inside `enter` (the lock is
    /// held).
    var isOpen: Bool { effect != nil }

    /// Hands `event` to the effect unless the connection is disposed: the top of an
    /// event's climb, called only inside `enter` (the lock is held). A transform may
    /// have disposed the connection on the way up.
    func deliver(_ event: A) throws {
        if let effect { try effect(event) }
    }

    /// Records the sources' disposable, without waiting for a delivery in progress. If
    /// the connection was disposed while the sources were connecting, the first dispose
    /// disconnects them once it is past the lock (a dispose from inside a delivery: once
    /// that delivery has ended), or `attach` does, at once, if that dispose is done.
    /// Never waiting here matters: the delivery may be waiting for the connecting thread
    /// (a transform that stops the loop whose turn connects the sources).
    func attach(_ sources: _Disposable) {
        let disconnectNow: Bool = upstreamLock.withLock {
            if disposeDone { return true }
            upstream = sources
            return false
        }
        if disconnectNow { sources.dispose() }
    }

    /// The first dispose's end, past the lock: takes the sources attached so far and
    /// disconnects them; any attached later are disconnected by `attach`.
    private func finishDispose() {
        let sources: _Disposable? = upstreamLock.withLock {
            disposeDone = true
            defer { upstream = nil }
            return upstream
        }
        sources?.dispose()
    }

    /// A dispose by another holder of a connection that another thread may be disposing
    /// (a loop's registration, disposed while the run's end or an earlier dispose is
    /// under way): as `dispose()` while the effect is still there, since that dispose
    /// may be waiting for a delivery in progress and this one must not return before
    /// it; at once if a dispose has let go of the effect already. The rest of a delivery
    /// under way may then still run, and it may be waiting for this thread: a transform
    /// that stopped its loop waits for the loop's callbacks, this one among them.
    func disposeAgain() {
        if cleared.load(ordering: .acquiring) { return }
        dispose()
    }

    func dispose() {
        // Every caller clears the effect under the lock, so that none returns while an
        // event is still being delivered; only the first disposes the sources. The effect
        // itself is released only after the sources are disconnected: what it holds (a
        // binding's effect may hold the fuser's user objects) stays alive for an event a
        // source emits while it disconnects, which is dropped.
        let first = !disposed.exchange(true, ordering: .acquiringAndReleasing)
        if owner.load(ordering: .acquiring) == currentThreadID() {
            // From inside the effect: the delivery holding the lock disconnects the
            // sources once it has released it (see `deliver`).
            effect = nil
            afterDelivery = nil
            cleared.store(true, ordering: .releasing)
            if first { disconnectAfterDelivery = { self.finishDispose() } }
            return
        }
        let (released, releasedAfter): (((A) throws -> Void)?, (() -> Void)?) = lock.withLock {
            let released = effect, releasedAfter = afterDelivery
            effect = nil
            afterDelivery = nil
            cleared.store(true, ordering: .releasing)
            return (released, releasedAfter)
        }
        // Sources attached by now are taken here; an attach after it disconnects its
        // sources itself (`attach`).
        withExtendedLifetime((released, releasedAfter)) { if first { finishDispose() } }
    }
}
