import Synchronization

/// The engine of a `Loop`: its queue, who drains it, and its lifecycle.
///
/// ## The queue
/// Everything that happens to a loop goes through one queue: events and the
/// registration or removal of observers, feedbacks and sources, first in first out, and
/// the start of a run, which goes in at the head, ahead of the entries already queued
/// (such as registrations made while the loop was stopped; `start()`). One thread at a
/// time drains the queue (`draining`); a thread that queues an entry while nobody
/// drains hands the draining to the loop's executor (the caller's executor runs it at
/// once, on that thread). Everything that reads or writes the loop's observers,
/// feedbacks and sources therefore runs one at a time, in queue order, without a lock:
/// only the drainer touches them. An entry queued by the drainer
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
        /// (`EntryDetails`, which then hold the job, if any), and nothing else: what
        /// is not a job is taken for details without a second check. An event whose
        /// job is cancelled before its turn is dropped (`process`).
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
    /// lock), or a gear event while an attached feedback's propagate runs (under the
    /// gear subscription's lock), is run by the delivering thread once the delivery is
    /// over. Running the step there instead would hold that lock through the step: a
    /// callback of the step on another thread emitting into the same source would wait
    /// for that lock, and a stop in the step waiting for that callback would wait
    /// forever; a stop from the inspector, which the step waits for, would wait for it
    /// to disconnect the gear. A loop has one drain at a time, so at most one thread
    /// owes it. A `dispatch` or a close made meanwhile, from that thread (a transform of
    /// the delivery) or another, takes the debt over and runs the drain itself: nobody
    /// else is draining, and the owing thread may be waiting for it. A debt is paid once the thread's outermost delivery
    /// into any loop is over (`LoopDeliveries`), so that an event of one delivery
    /// nested in another's (of this loop or another) runs no step under the outer
    /// delivery's lock either.
    @usableFromInline @exclusivity(unchecked) var debtor: UInt = 0
    /// The thread closing the loop, or 0. Events are refused while it is not 0.
    @usableFromInline @exclusivity(unchecked) var closer: UInt = 0
    /// Whether `closer` is waiting for the drain to handle the events accepted before
    /// it: a close from the drainer's step then takes its place (see `close(to:)`).
    var closerWaitsForDrain = false
    /// Whether that drain was queued, not running, when the closer began to wait: the
    /// executor's own thread, busy with a call of its own, cannot run it.
    var closerWaitsForQueuedDrain = false

    /// The current run's session; nil while stopped.
    @usableFromInline @exclusivity(unchecked) var session: LoopSession<Event>?
    /// The session a close is ending, until the close returns.
    var closingSession: LoopSession<Event>?
    /// While the drainer waits for a callback of the run in progress on another thread
    /// (the loop's turn removing an attached feedback waits for its propagate): the
    /// thread it waits for, read again whenever a close looks (see `pausingDrain`).
    var drainWaitingFor: (() -> UInt)?
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
    /// How what may outlive the loop reaches it (registrations, drains handed over), until
    /// its dispose has ended.
    @usableFromInline let link = LoopLink<Model, Event, Effect>()

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
        link.link(self)
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
}
