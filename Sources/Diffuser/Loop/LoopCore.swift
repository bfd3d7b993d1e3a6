import Synchronization

/// The engine of a `Loop`: its queue, who drains it, and its lifecycle.
///
/// ## The queue
/// Everything that happens to a loop goes through one first-in first-out queue:
/// events, the start of a run, and the registration or removal of observers, feedbacks
/// and sources. One thread at a time drains the queue (`draining`); a thread that
/// queues an entry while nobody drains hands the draining to the loop's executor (the
/// caller's executor runs it at once, on that thread). Everything that reads or writes
/// the loop's observers, feedbacks and sources therefore runs one at a time, in queue
/// order, without a lock: only the drainer touches them. An entry queued by the drainer
/// itself (an event sent by an observer, a handler, a feedback) waits its turn: nothing
/// is handled recursively, and `dispatch` never waits for a step, so nothing deadlocks.
///
/// ## Closing
/// `stop` and `dispose` close the loop: from the moment they begin, events are refused.
/// Events accepted before are still handled if the thread draining them can be waited
/// for (it is running, or the executor promises to run it); otherwise, and always when
/// the close comes from inside a step, they are dropped and the inspector sees each.
/// Then the run's session is cancelled (jobs, sources, gears) and the close waits for
/// the callbacks in progress on other threads. Once it returns, no callback of that run
/// starts.
@usableFromInline
final class LoopCore<Model, Event, Effect>: @unchecked Sendable {
    @usableFromInline
    typealias Trace = LoopTrace<Model, Event, Effect>

    @usableFromInline
    enum Status { case running, stopped, disposed }

    /// An entry of the queue. A plain event is the event alone, or with the job that
    /// sent it (an effect handler's or a feedback's); anything else (a coalescing key or
    /// replaced events, a start, work on the loop's structures) has details. So the
    /// entry of a dispatched event is the event and one empty reference, cheap to copy,
    /// and a job's event is queued without an allocation (a field of its own for the
    /// job would make every entry a word larger: 15% slower dispatches of a counter).
    @usableFromInline
    struct Entry {
        /// The event, or nil for a start or work on the structures.
        @usableFromInline var event: Event?
        /// Nothing, the job that sent the event (`Job<Event>`), or the details
        /// (`EntryDetails`, which then hold the job, if any).
        @usableFromInline var extra: AnyObject?

        @inlinable
        init(event: Event?, details: EntryDetails<Model, Event, Effect>?) {
            self.event = event
            self.extra = details
        }

        @inlinable
        init(event: Event, job: Job<Event>?) {
            self.event = event
            self.extra = job
        }

        @inlinable
        var details: EntryDetails<Model, Event, Effect>? {
            extra as? EntryDetails<Model, Event, Effect>
        }

        /// The job that sent the event: the event is dropped if the job is cancelled
        /// first.
        @inlinable
        var job: Job<Event>? {
            guard let extra else { return nil }
            return extra as? Job<Event> ?? details?.job
        }
    }

    /// An observer or a feedback, in one list so that models reach them in the order
    /// they were registered.
    @usableFromInline
    enum Subscriber {
        case observer(Subscription<Model>)
        case feedback(FeedbackEntry<Model, Event>)

        @inlinable
        var isRemoved: Bool {
            switch self {
            case .observer(let subscription): return subscription.isClosed
            case .feedback(let entry): return entry.isRemoved
            }
        }
    }

    // MARK: Configuration

    @usableFromInline let update: Update<Model, Event, Effect>
    @usableFromInline let handlers: [EffectHandler<Effect, Event>]
    @usableFromInline let executor: LoopExecutor
    /// Whether the executor runs work at once on the calling thread: the drain is then
    /// called directly, without making a closure for it.
    @usableFromInline let drainsInline: Bool
    @usableFromInline let stepsPerRun: Int
    @usableFromInline let coalescingKey: ((Event) -> AnyHashable?)?
    /// Drainer only, like the structures below (`Loop.record(into:)` changes it on the
    /// loop's turn).
    @usableFromInline @exclusivity(unchecked) var journal: Journal<Model, Event>?
    @usableFromInline let inspector: ((Trace) -> Void)?
    let restart: ((Model) -> First<Model, Effect>)?

    // MARK: Mailbox (guarded by `lock`)

    @usableFromInline let lock = InlineLock()
    @usableFromInline @exclusivity(unchecked) var queue = RingQueue<Entry>()
    /// The running number of the queued event with each coalescing key.
    @usableFromInline @exclusivity(unchecked) var keyed: [AnyHashable: UInt64] = [:]
    @usableFromInline @exclusivity(unchecked) var status: Status = .stopped
    /// Whether a drain is running or handed to the executor.
    @usableFromInline @exclusivity(unchecked) var draining = false
    /// The thread running the drain, or 0.
    @usableFromInline @exclusivity(unchecked) var drainer: UInt = 0
    /// The thread that owes the drain, or 0: with the caller's executor, a drain that a
    /// source's event starts while its connection delivers it (under the connection's
    /// lock) is run by the delivering thread once the delivery is over. Running the step
    /// there instead would hold the connection's lock through the step: a callback of
    /// the step on another thread emitting into the same source would wait for that
    /// lock, and a stop in the step waiting for that callback would wait forever. A loop
    /// has one drain at a time, so at most one thread owes it. A `dispatch` or a close
    /// made meanwhile, from that thread (a transform of the delivery) or another, takes
    /// the debt over and runs the drain itself: nobody else is draining, and the owing
    /// thread may be waiting for it. A debt is paid once the thread's outermost delivery
    /// of any loop's source connections is over (`LoopSourceDeliveries`), so that an
    /// event of one connection nested in another's delivery (of this loop or another)
    /// runs no step under the outer connection's lock either.
    @usableFromInline @exclusivity(unchecked) var debtor: UInt = 0
    /// The thread closing the loop, or 0. Events are refused while it is not 0.
    @usableFromInline @exclusivity(unchecked) var closer: UInt = 0
    /// Whether `closer` is waiting for the drain to handle the events accepted before
    /// it: a close from the drainer's step then takes its place (see `close(to:)`).
    var closerWaitsForDrain = false
    /// Whether that drain was queued, not running, when the closer began to wait: the
    /// executor's own thread, busy with a call of its own, cannot run it.
    var closerWaitsForQueuedDrain = false

    /// Whether this thread must not wait for the closer: it waits for a queued drain
    /// that this thread, the executor's own, has yet to run. With the lock held.
    private func closerWaitsForThisThreadLocked() -> Bool {
        closerWaitsForQueuedDrain && draining && drainer == 0 && !executor.canWaitForWork
    }
    /// The current run's session; nil while stopped.
    @usableFromInline @exclusivity(unchecked) var session: LoopSession<Event>?
    /// The session a close is ending, until the close returns.
    var closingSession: LoopSession<Event>?
    /// A dispose asked for from a callback while another thread was stopping the loop:
    /// that stop disposes the loop when it is done.
    var disposeWhenClosed = false
    /// Whether a dispose was asked for: from then on events are refused as disposed
    /// (also while it waits for a drain or for another close) and no run starts.
    @usableFromInline @exclusivity(unchecked) var disposing = false
    /// The first start's `First`; nil once the loop has started.
    var pendingFirst: First<Model, Effect>?
    /// Threads waiting on `monitor` for the mailbox to change, and a count of the
    /// changes they wait for.
    var waiters = 0
    var changes: UInt64 = 0
    /// Whether the structures below still hold anything; cleared once, by whoever
    /// releases them after the loop is disposed.
    @usableFromInline var structuresLive = true
    let monitor = Monitor()

    /// Holds the model's place (see `ModelCell`), in the position of the loop's state
    /// where it releases the last model at the loop's teardown.
    let modelOwner: ModelCell<Model>
    /// Where the model lies (`modelOwner`'s). Written by the drainer with `lock` held;
    /// read by the drainer without it (no one else writes), and by anyone else with it.
    @usableFromInline let modelCell: UnsafeMutablePointer<Model>

    /// The model, copied: the drainer's read (see `modelCell`).
    @inlinable
    var model: Model { modelCell.pointee }

    // MARK: Loop structures (drainer only)

    @usableFromInline @exclusivity(unchecked) var subscribers: [Subscriber] = []
    var sources: [SourceSlot<Event>] = []
    /// The ways in of the events that do not come through `dispatch`, compiled for the
    /// loop's types.
    let paths: LoopPaths<Model, Event, Effect>

    /// Serializes inspector calls, which may come from the drainer, a closing thread,
    /// or a handler on its own executor.
    let inspectorLock = Lock()
    let inspectorCaller = Atomic<UInt>(0)

    init(
        first: First<Model, Effect>,
        update: Update<Model, Event, Effect>,
        handlers: [EffectHandler<Effect, Event>],
        feedbacks: [Feedback<Model, Event>],
        sources: [Fuser<Event>],
        executor: LoopExecutor,
        coalescingKey: ((Event) -> AnyHashable?)?,
        journal: Journal<Model, Event>?,
        restart: ((Model) -> First<Model, Effect>)?,
        inspector: ((Trace) -> Void)?,
        paths: LoopPaths<Model, Event, Effect>
    ) {
        self.paths = paths
        self.modelOwner = ModelCell(first.model)
        self.modelCell = modelOwner.pointer
        self.pendingFirst = first
        self.update = update
        self.handlers = handlers
        self.executor = executor
        self.drainsInline = executor is CallerExecutor
        self.stepsPerRun = max(1, executor.stepsPerRun)
        self.coalescingKey = coalescingKey
        self.journal = journal
        self.restart = restart
        self.inspector = inspector
        self.subscribers = feedbacks.map { .feedback(FeedbackEntry($0)) }
        self.sources = sources.map { SourceSlot($0, keeping: nil) }
    }

    // MARK: Reading

    var currentModel: Model {
        lock.lock()
        defer { lock.unlock() }
        return modelCell.pointee
    }

    var currentStatus: Status {
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    /// Whether events are accepted now: running, and no stop or dispose under way.
    var acceptsEvents: Bool {
        lock.lock()
        defer { lock.unlock() }
        return status == .running && closer == 0
    }

    /// Stores a new model, with the lock, for other threads to read, and returns the
    /// model it replaces, moved out of place. The caller releases that model once the
    /// lock is given back: what its last reference frees may run code that reads the
    /// loop.
    @inlinable
    func store(_ newModel: consuming Model) -> Model {
        lock.lock()
        let old = modelCell.move()
        modelCell.initialize(to: consume newModel)
        lock.unlock()
        return old
    }

    /// Wakes the threads waiting for the mailbox to change; releases the lock.
    @usableFromInline
    func wakeWaitersLocked() {
        changes &+= 1
        let wake = waiters > 0
        lock.unlock()
        if wake { monitor.withLock { monitor.broadcast() } }
    }

    /// Waits, with the lock held, until the mailbox changes; returns with it held.
    func waitLocked() {
        waiters += 1
        let seen = changes
        lock.unlock()
        monitor.lock()
        // A change is counted with the lock held, then broadcast with the monitor held:
        // looking at the count again with the monitor held cannot miss a wake-up.
        lock.lock()
        let changed = changes != seen
        lock.unlock()
        if !changed { monitor.wait() }
        monitor.unlock()
        lock.lock()
        waiters -= 1
    }

    // MARK: Lifecycle

    /// Starts a run if the loop is stopped: nil if it is running afterwards (once the
    /// start's drain, if this thread ran it, returned), else why not: disposed or being
    /// disposed, or stopped (again, by a callback of the start or another thread, or
    /// being stopped).
    @discardableResult
    func start() -> LoopError? {
        let me = currentThreadID()
        lock.lock()
        while closer != 0 && closer != me && drainer != me {
            // A callback of the run being closed must not wait for the close, which
            // waits for it; nor the executor's own thread for a close that waits for a
            // drain this thread has yet to run.
            if inRunCallbackLocked(me) || closerWaitsForThisThreadLocked() { break }
            waitLocked()
        }
        guard status == .stopped, closer == 0, !disposing else { return runningLocked() }
        status = .running
        session = LoopSession { [weak self] event, job in
            guard let self else { return false }
            return self.paths.enqueue(self, event, job, false) == nil
        }
        queue.pushFront(Entry(event: nil, details: EntryDetails(start: pendingFirst)))
        pendingFirst = nil
        scheduleLocked()
        lock.lock()
        return runningLocked()
    }

    /// nil if the loop accepts events, else why not; releases the lock.
    private func runningLocked() -> LoopError? {
        if status == .running && closer == 0 {
            lock.unlock()
            return nil
        }
        return refusalLocked()
    }

    /// Stops (`.stopped`) or disposes (`.disposed`) the loop. See the type's
    /// documentation.
    func close(to target: Status) {
        let me = currentThreadID()
        lock.lock()
        // A drain a source's delivering thread owes: a close waits for the events
        // accepted before it, and the owing thread may be this one (a close from a
        // transform of that delivery) or wait for it, so this thread takes the debt over
        // and runs the drain first.
        if draining && drainer == 0 && debtor != 0 {
            debtor = 0
            lock.unlock()
            drain()
            lock.lock()
        }
        if target == .disposed { disposing = true }
        // A dispose from a callback of this thread's own stop (an on-cancel action, a
        // source's disconnect, the inspector hearing a drop) does its work nested in that
        // stop, which then ends its own: the stop stays the closer until then, so that a
        // close on another thread waits for both.
        let outerClose = closer == me ? (closer, closingSession) : nil
        // The close this one takes the place of (it waits for this thread's drain), or 0.
        var replaced: UInt = 0
        // Whether a close from the drainer's step took this one's place while it waited,
        // and the run this one meant to end.
        var wasReplaced = false
        var meantToEnd: LoopSession<Event>?
        while true {
            let otherCloser = closer != 0 && closer != me
            // Nothing left to do. A stop from a callback of this thread's own close
            // (closer == me) returns at once too: that close does the work, and must stay
            // the closer until it ends.
            if !otherCloser && (status == .disposed || (status == .stopped && target == .stopped)) {
                // The close that took this one's place came from a step: let that step
                // end, and the run's callbacks on other threads, as this close would
                // have waited for them.
                while wasReplaced && drainer != 0 && drainer != me && status != .running { waitLocked() }
                lock.unlock()
                if wasReplaced { meantToEnd?.awaitCallbacks() }
                return
            }
            if otherCloser {
                if closerWaitsForDrain && (drainer == me || closerWaitsForThisThreadLocked()) {
                    // That close waits for a drain that this thread runs (from its step)
                    // or must run (the executor's own thread, busy with this call): this
                    // one takes its place, and must not wait for its callback, if it is
                    // one.
                    replaced = closer
                } else if drainer == me || inRunCallbackLocked(me) || inspectorCaller.load(ordering: .acquiring) == me {
                    // A callback of the run it ends, a step of this thread's drain, or
                    // the inspector (which its traces need), must not wait for it (it may
                    // wait for them): that close does the work, a dispose included.
                    if target == .disposed { disposeWhenClosed = true }
                    lock.unlock()
                    return
                } else {
                    // Otherwise let it finish, then look again.
                    waitLocked()
                    continue
                }
            }
            closer = me
            closerWaitsForDrain = false
            closerWaitsForQueuedDrain = false
            if meantToEnd == nil { meantToEnd = session }
            // Let the drain handle the events accepted so far; unless this thread is in
            // the inspector, which the drain needs for its traces.
            if drainer != me && draining && (drainer != 0 || executor.canWaitForWork)
                && inspectorCaller.load(ordering: .acquiring) != me {
                closerWaitsForDrain = true
                closerWaitsForQueuedDrain = drainer == 0
                waitLocked()
                if closer == me {
                    closerWaitsForDrain = false
                    closerWaitsForQueuedDrain = false
                } else {
                    wasReplaced = true
                }
                continue
            }
            break
        }
        // Nothing is being drained now except, if the close comes from inside a step,
        // by this very thread.
        // Events, and a start not yet made (it belongs to the run that ends), go; so
        // does everything else on a dispose. Registrations stay for the next run.
        let removed = queue.removeAll { entry in
            target == .disposed || entry.details?.control == nil
        }
        var startWasPending = false
        for entry in removed where entry.details?.isStart == true {
            startWasPending = true
            if let first = entry.details?.first { pendingFirst = first }
        }
        keyed.removeAll()
        let ending = session
        session = nil
        closingSession = ending ?? outerClose?.1
        let wasRunning = status == .running
        status = target
        let lastModel = model
        let clearNow = target == .disposed && drainer == 0 && structuresLive
        if clearNow { structuresLive = false }
        lock.unlock()

        let reason: LoopDropReason = target == .disposed ? .disposed : .stopped
        for entry in removed {
            for old in entry.details?.replaced ?? [] { report(.dropped(event: old, reason: .coalesced)) }
            if let event = entry.event { report(.dropped(event: event, reason: reason)) }
            entry.details?.dropped?()
        }
        ending?.cancel(sparing: replaced)
        // A dispose from a callback of this stop (an on-cancel action, a source's
        // disconnect) has reported DISPOSED and returned: nothing is reported after it.
        let disposedMeanwhile = target == .stopped && currentStatus == .disposed
        if (wasRunning && !startWasPending && !disposedMeanwhile) || target == .disposed {
            report(target == .disposed ? .disposed(model: lastModel) : .stopped(model: lastModel))
        }
        if clearNow { clearStructures() }

        lock.lock()
        closer = outerClose?.0 ?? 0
        closingSession = outerClose?.1
        let disposeNow = disposeWhenClosed && target == .stopped
        disposeWhenClosed = false
        // Registrations queued while stopping wait for a drain.
        let schedule = target == .stopped && !queue.isEmpty && !draining && !disposeNow
        if schedule { draining = true }
        wakeWaitersLocked()
        if schedule { runDrain() }
        if disposeNow { close(to: .disposed) }
    }

    /// Runs `wait`, for the thread `waitingFor` names, with the calling thread's own
    /// callback of the run, if it is in one, not waited for by that thread's close (it
    /// would wait for itself: see `LoopSession.pausingCallback`).
    func pausingRunCallback(waitingFor: @escaping () -> UInt, _ wait: () -> Void) {
        lock.lock()
        let run = session ?? closingSession
        lock.unlock()
        if let run { run.pausingCallback(waitingFor: waitingFor, wait) } else { wait() }
    }

    /// Whether the calling thread runs a callback of the current run, or of the run
    /// being closed. With the lock held.
    private func inRunCallbackLocked(_ me: UInt) -> Bool {
        (session ?? closingSession)?.hasCallback(on: me) ?? false
    }

    /// Releases what the loop holds once it is disposed: observers (closing them, so
    /// that cycles through their receivers break), feedbacks and sources. Called by the
    /// last drainer, or by `dispose` when no drain was running.
    @usableFromInline
    func clearStructures() {
        let old = subscribers
        let oldSources = sources
        subscribers = []
        sources = []
        for subscriber in old {
            if case .observer(let subscription) = subscriber { subscription.dispose() }
        }
        for slot in oldSources { slot.dispose() }
    }
}
