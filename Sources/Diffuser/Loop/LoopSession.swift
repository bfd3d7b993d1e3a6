import Synchronization

/// One run of a loop, from a start to the stop or dispose that ends it.
///
/// Everything a run starts belongs to its session: the jobs of effect handlers and
/// feedbacks, the connections of sources, gear subscriptions. Ending the session cancels
/// them all at once, so a restarted loop never hears from the work of the run before.
///
/// The session also counts the callbacks in progress on threads other than the loop's
/// (a feedback on its own executor), so that `stop` and `dispose` can wait for them:
/// once they return, no callback of the loop starts.
@usableFromInline
final class LoopSession<Event>: @unchecked Sendable {
    @usableFromInline let cancelledFlag = Atomic<Bool>(false)
    /// Guards the fields below. A loop's source takes it twice an event (`enter`,
    /// `leave`), so it is a lock that costs one atomic operation when free, and the
    /// fields skip the runtime's exclusivity checks (`@exclusivity(unchecked)`), each a
    /// thread-local lookup.
    @usableFromInline let lock = InlineLock()
    /// Where a close sleeps until the callbacks it waits for end (see `waiting`); a
    /// thread that changes `active` takes it only if it finds `waiting` above zero, to
    /// wake the sleepers.
    private let monitor = Monitor()
    /// Guarded by `lock`: what to run when the session ends, by owner (a job's id, or 0
    /// for the session's own), each with the number `onCancel` gave it.
    @exclusivity(unchecked) private var cancelActions: [UInt64: [(id: UInt64, run: () -> Void)]] = [:]
    /// Guarded by `lock`: the number of the last action.
    @exclusivity(unchecked) private var lastActionID: UInt64 = 0
    /// Guarded by `lock`: callbacks in progress, by thread.
    @exclusivity(unchecked) private var active: [SessionCaller] = []
    /// Guarded by `lock`: the closes waiting for callbacks to end. A close counts itself
    /// before it first looks at `active`, holding `monitor` from then until it sleeps, so
    /// that a change it did not see wakes it.
    @exclusivity(unchecked) private var waiting = 0
    private let nextJobID = Atomic<UInt64>(1)
    /// Guarded by `lock`: queues an event in the loop (deferring its drain or not: see
    /// `LoopCore.enqueue(_:job:deferring:)`), until the session ends. It holds the loop
    /// strongly, and the end lets go of it: held weakly, the loop would get a side
    /// table, and each event of the session's work would pay a checked load of the weak
    /// reference and a release on the runtime's slow path.
    @usableFromInline @exclusivity(unchecked) var target: ((Event, Job<Event>?, Bool) -> Bool)?
    /// Guarded by `lock`: how a wait for a callback of this run in progress on another
    /// thread waits while the run goes on (see `LoopCore.pausingDrain` and `pause`).
    /// Like `target`, it holds the loop strongly, until the session's end has run its
    /// cancel actions and the run's callbacks then in progress have returned (see
    /// `pauserEndsWithCallbacks`): held weakly, the loop would get a side table, and
    /// every retain of it (each event a job sends) would take the runtime's slow path.
    /// Set by the loop before the session is shared.
    @usableFromInline @exclusivity(unchecked) var pauser: ((@escaping () -> UInt, () -> Void) -> Void)?
    /// Guarded by `lock`: the session's end has run its cancel actions while callbacks
    /// of the run were still in progress (`active`), so `pauser` goes when the last of
    /// them leaves: a subscription whose dispose came from inside its own call (a
    /// propagate that stops its loop) did not wait for that call, and a later dispose
    /// (the feedback's removal, on the drainer) must still pause through the loop.
    @exclusivity(unchecked) private var pauserEndsWithCallbacks = false
    /// Guarded by `lock`: runs the drain the calling thread owes the loop, if any, once
    /// a delivery that queued with `deferring` is over (`LoopCore.payDeferredDrain`).
    /// Like `target`, it holds the loop strongly until the session ends. Set by the
    /// loop before the session is shared.
    @usableFromInline @exclusivity(unchecked) var payDebt: (() -> Void)?

    init(enqueue: @escaping (Event, Job<Event>?, Bool) -> Bool) {
        self.target = enqueue
    }

    /// Queues an event of this session's work in the loop; false if refused, or if the
    /// session has ended. `deferring`: the caller delivers it under a lock of its own,
    /// and calls `payDebt` once that lock is given back.
    /// Inlinable, so that it is compiled for the loop's event type.
    @inlinable
    func enqueue(_ event: Event, _ job: Job<Event>?, deferring: Bool = false) -> Bool {
        lock.lock()
        let target = self.target
        lock.unlock()
        guard let target else { return false }
        return target(event, job, deferring)
    }

    /// `payDebt`, until the session ends: for a delivery that queues with `deferring`
    /// to run once it is over and the lock it delivers under is given back.
    @inlinable
    var debtPayer: (() -> Void)? {
        lock.lock()
        defer { lock.unlock() }
        return payDebt
    }

    /// Runs `wait`, a wait for the call in progress of a subscription the run's
    /// feedbacks made (an attached feedback's gear) on the thread `waitingFor` names,
    /// through the loop's `pauser` while the session has one. Once the session's end
    /// has run its cancel actions, which disposed those subscriptions (waiting for their
    /// calls in progress, except one made from inside such a call), and the run's
    /// callbacks then in progress (such a call among them) have returned, no call is
    /// left to wait for, and `wait` runs as it is.
    @usableFromInline
    func pause(waitingFor: @escaping () -> UInt, _ wait: () -> Void) {
        let pauser = withLock { self.pauser }
        if let pauser { pauser(waitingFor, wait) } else { wait() }
    }

    /// Whether the session has ended.
    @inlinable
    var isCancelled: Bool { cancelledFlag.load(ordering: .acquiring) }

    /// A number for a new job.
    func makeJobID() -> UInt64 { nextJobID.add(1, ordering: .relaxed).newValue }

    /// Runs `action` when the session ends, or now if it has; `owner` names a group
    /// that `takeActions(of:)` can remove. Returns the action's number, for
    /// `removeAction(_:of:)` (0 if it ran now).
    @usableFromInline @discardableResult
    func onCancel(owner: UInt64 = 0, _ action: @escaping () -> Void) -> UInt64 {
        let id: UInt64 = withLock {
            if isCancelled { return 0 }
            lastActionID += 1
            cancelActions[owner, default: []].append((lastActionID, action))
            return lastActionID
        }
        if id == 0 { action() }
        return id
    }

    /// Drops the action numbered `id` of `owner` without running it (what it would end
    /// has ended already): a registration disposed during the run.
    @usableFromInline
    func removeAction(_ id: UInt64, of owner: UInt64 = 0) {
        withLock {
            cancelActions[owner]?.removeAll { $0.id == id }
        }
    }

    /// Ends the job `owner` as finished, unless the session has ended: `mark` (the
    /// job's own state change) and the removal of its actions happen under the session's
    /// lock, as one with respect to `cancel`, which ends the session and takes the
    /// actions under it too. False (nothing done) if the session ended or `mark` refused.
    func finish(_ owner: UInt64, _ mark: () -> Bool) -> Bool {
        var dropped: [(id: UInt64, run: () -> Void)]?
        let finished: Bool = withLock {
            if isCancelled || !mark() { return false }
            dropped = cancelActions.removeValue(forKey: owner)
            return true
        }
        // Released once the lock is given back: what the actions free may use the loop.
        withExtendedLifetime(dropped) {}
        return finished
    }

    /// The number of cancel actions held (for tests).
    var cancelActionCount: Int { withLock { cancelActions.values.reduce(0) { $0 + $1.count } } }

    /// Removes and returns the actions of `owner` (a job that ended).
    func takeActions(of owner: UInt64) -> [() -> Void] {
        withLock { cancelActions.removeValue(forKey: owner)?.map(\.run) ?? [] }
    }

    /// Marks the calling thread as running a callback of this session; false (and
    /// nothing marked) if the session has ended: the callback must not start.
    @usableFromInline
    func enter() -> Bool {
        let me = currentThreadID()
        return withLock {
            if isCancelled { return false }
            if let index = active.firstIndex(where: { $0.thread == me }) {
                active[index].count += 1
            } else {
                active.append(SessionCaller(thread: me, count: 1))
            }
            return true
        }
    }

    /// Ends what `enter()` began.
    @usableFromInline
    func leave() {
        let me = currentThreadID()
        var endedPauser: ((@escaping () -> UInt, () -> Void) -> Void)?
        let wake: Bool = withLock {
            if let index = active.firstIndex(where: { $0.thread == me }) {
                active[index].count -= 1
                if active[index].count == 0 { active.remove(at: index) }
            }
            if pauserEndsWithCallbacks && active.isEmpty {
                pauserEndsWithCallbacks = false
                endedPauser = pauser.take()
            }
            return waiting > 0
        }
        // Released outside the lock: it may be the loop's last reference.
        withExtendedLifetime(endedPauser) {}
        if wake { wakeWaiters() }
    }

    /// Runs `body`, a wait of the calling thread's callback for the thread `waitingFor`
    /// names (read again whenever a close looks): that thread's close does not wait for
    /// this callback meanwhile (it would wait for itself); every other close does.
    func pausingCallback(waitingFor: @escaping () -> UInt, _ body: () -> Void) {
        let me = currentThreadID()
        let (paused, wake): (Bool, Bool) = withLock {
            guard let index = active.firstIndex(where: { $0.thread == me }) else { return (false, false) }
            active[index].waitingFor = waitingFor
            return (true, waiting > 0)
        }
        if wake { wakeWaiters() }
        body()
        guard paused else { return }
        let wakeAgain: Bool = withLock {
            if let index = active.firstIndex(where: { $0.thread == me }) { active[index].waitingFor = nil }
            return waiting > 0
        }
        if wakeAgain { wakeWaiters() }
    }

    /// Whether `thread` is running a callback of this session.
    func hasCallback(on thread: UInt) -> Bool {
        withLock { active.contains { $0.thread == thread } }
    }

    /// Runs `body` as a callback of this session, unless it has ended.
    func perform(_ body: () -> Void) {
        guard enter() else { return }
        defer { leave() }
        body()
    }

    /// Ends the session: the first call runs every cancel action; every call then waits
    /// for the callbacks in progress (`awaitCallbacks(sparing:)`).
    func cancel(sparing spared: UInt = 0) {
        var ended: ((Event, Job<Event>?, Bool) -> Bool)?
        var endedPayer: (() -> Void)?
        var first = false
        let actions: [() -> Void] = withLock {
            if cancelledFlag.exchange(true, ordering: .acquiringAndReleasing) { return [] }
            first = true
            ended = target.take()
            endedPayer = payDebt.take()
            defer { cancelActions.removeAll() }
            // The session's own actions (sources, gears) first, then the jobs', in the
            // order the jobs were made.
            return cancelActions.sorted { $0.key < $1.key }.flatMap { $0.value.map(\.run) }
        }
        // Let go of outside the lock (the loop's owner, closing it, still holds it).
        _ = ended.take()
        _ = endedPayer.take()
        for action in actions { action() }
        // The actions' disposes may pause through it; the first call only, since a
        // later one may return while the first's actions still run. A callback of the
        // run still in progress (this thread's own, if the end comes from one) may be a
        // subscription's call that a later dispose waits for: the last to leave lets go.
        if first {
            let endedPauser: ((@escaping () -> UInt, () -> Void) -> Void)? = withLock {
                if active.isEmpty { return pauser.take() }
                pauserEndsWithCallbacks = true
                return nil
            }
            withExtendedLifetime(endedPauser) {}
        }
        awaitCallbacks(sparing: spared)
    }

    /// Waits until no callback of the session is in progress on another thread, except
    /// on `spared` (a thread whose callback waits for this one; 0: none) and those
    /// waiting for this thread.
    func awaitCallbacks(sparing spared: UInt = 0) {
        let me = currentThreadID()
        monitor.withLock {
            withLock { waiting += 1 }
            while withLock({ active.contains { $0.thread != me && $0.thread != spared && $0.waitingFor?() != me } }) {
                monitor.wait()
            }
            withLock { waiting -= 1 }
        }
    }

    /// Wakes the closes sleeping in `awaitCallbacks`, after a change to `active` made
    /// while `waiting` was above zero.
    private func wakeWaiters() {
        monitor.withLock { monitor.broadcast() }
    }

    /// Runs `body` holding `lock`.
    private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// A thread running callbacks of a session. Outside the generic session, so that the
/// session's bookkeeping, which runs for every event a loop's source delivers, is
/// compiled once for all sessions rather than looking up the metadata of a generic array.
private struct SessionCaller {
    let thread: UInt
    var count: Int
    /// While the thread waits for another (see `pausingCallback`): the thread it waits
    /// for now.
    var waitingFor: (() -> UInt)?
}
