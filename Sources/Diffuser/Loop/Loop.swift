// One file although over 400 lines: half of it is documentation (a quarter the class
// comment, which is the loop's whole contract), and every member below is a short call
// into `LoopCore`, or a registration queued on it, described against that contract.

/// A model, the events that change it, and the effects and feedbacks around it: the
/// loop between a `Fuser` (events in) and a `Diffuser` (the model out).
///
/// ```swift
/// let loop = Loop(
///     model: LoginModel(),
///     update: Update<LoginModel, LoginEvent, LoginEffect> { model, event in
///         switch event {
///         case .loginClicked: return .next(model.loading(), effects: [.login(model.credentials)])
///         case .loggedIn:     return .next(model.done())
///         }
///     },
///     handlers: [EffectHandler { effect, job in api.login(effect) { job.send(.loggedIn) } }],
///     sources: Fuser(.extractConstant(.loginClicked, .from(loginButton)))
/// )
/// loop.render(diffuser)                  // the current model now, then every new one
/// loop.dispatch(.loginClicked)           // from any thread
/// loop.dispose()
/// ```
///
/// It unites what Spotify's Mobius (update, `Next`, effect handlers, controller),
/// Spin (reducer, feedbacks, gears), RaspSwift (merged sources, selectors) and
/// Minimalist (observation bound to an owner) each do part of.
///
/// ## Order
/// One event at a time, first in first out. Each step: the update; its `stepped` trace
/// to the inspector (`model` still returns the model the update was given); the model
/// stored (`model` returns it from then on); the model published to observers and
/// feedbacks in the order they were registered; then each effect handed to the
/// handlers, effects in list order and for each the handlers in order, before the next
/// event starts. A step without a new model publishes nothing. A start is a step too:
/// its `started` trace (on a restart `model` still returns the kept model, not the one
/// `restart` gave); the model stored; the model published to the observers and
/// feedbacks registered by then; the start effects handed to the handlers; the sources
/// connected.
///
/// ## Threads
/// `dispatch` may be called from any thread, also from inside the loop's own callbacks:
/// an event dispatched during a step is queued and handled after it, never inside it,
/// and `dispatch` never waits for a step, so nothing deadlocks. Who runs the steps is
/// the executor's choice (see `LoopExecutor`): by default the thread that dispatches
/// into an idle loop drains the queue before `dispatch` returns; a thread that
/// dispatches while another drains returns at once and its event is handled by the
/// other. `start`, `subscribe`, `add` and the other registrations queue their work the
/// same way, so they too may drain the queue before returning, and a draining thread
/// returns only once the queue is empty. An event from a source connected with
/// `connect(_:)` is handled the same way by the thread that emitted it, once the
/// source's connection has delivered it (not while the connection holds its lock); an
/// emission on another thread meanwhile returns at once, its event handled by that
/// drain, as a dispatch that meets a drain does. Observers, feedbacks and handlers
/// without an executor of their own run on the thread running the step.
///
/// A loop and its jobs are `Sendable` when their models, events and effects are, so that
/// events can be dispatched and sent from any task; the compiler does not check where
/// that makes the callbacks run. A loop whose
/// update or observers are isolated to an actor (a `@MainActor` render) must have its
/// steps run there: give it an executor that runs on that actor (see `LoopExecutor`),
/// or, with the default executor, make every event and registration there: `dispatch`,
/// the jobs' `send`, connected sources, `render`, `add` and `observe`, `start` and
/// `stop`.
///
/// ## Lifecycle
/// The loop starts from `model` and `startEffects` (unless `autostart` is false: then
/// at `start()`). `stop()` ends the run and keeps the model and the registrations;
/// `start()` then starts a new run from the kept model (through `restart` if given),
/// publishing it again and reconnecting the sources, as a Mobius controller does across
/// an Android rotation. `dispose()` ends the loop for good: a registration on a
/// disposed loop (`subscribe`, `observe`, `connect`, `add`) returns a disposable and does
/// nothing (none of its callbacks is ever called), and `record(into:)` records nothing.
/// Both `stop()` and `dispose()`:
/// - refuse events from the moment they are called (`dispatch` returns false,
///   `tryDispatch` throws `LoopError`);
/// - let the events accepted before them be handled when the drain can be waited for
///   (always with the default executor), and otherwise drop them (the inspector sees
///   each);
/// - cancel the work in flight (every job; its `onCancel` actions run) and disconnect
///   the sources;
/// - wait for callbacks in progress on other threads; once they return no callback of
///   that run starts.
/// `dispose()` is idempotent and may be called from inside a callback (it then does not
/// wait for the callback it was called from, and the rest of that step is skipped: from
/// inside the update, no model is stored, nothing is published or handled, the journal
/// does not record the event, and the event's trace comes right after the dispose's;
/// from inside `restart`, nothing of the start happens, its trace included (the
/// inspector sees the stop's or dispose's trace alone); from the
/// inspector hearing a start or a step, nothing of it happens after that trace; a
/// handler or observer that throws after stopping or disposing its loop is reported after
/// it too, and so are the drops a stop still reports when a callback of it, such as the
/// inspector hearing a drop, disposes the loop: a close on another thread that meets
/// that stop returns once the stop has ended).
/// Dropping the last reference to a loop disposes it; work it handed to an executor does
/// not keep it alive. The loop lets go of its observers, feedbacks and sources when it is
/// disposed, but keeps what it was made with (the update, the handlers, the executors,
/// the inspector, the coalescing key, `restart`) for as long as it lives: one of these
/// that captures the loop keeps it alive, disposed or not, so capture the loop weakly
/// there. Like any lock, waiting has one rule: a callback of the loop must not wait for
/// the thread that stops or disposes it. A stop or dispose of another loop from a
/// callback waits for that loop's callbacks, so it is such a wait when one of them stops
/// or disposes this loop: two loops whose callbacks stop or dispose each other may
/// deadlock, as two locks taken in opposite orders do.
///
/// Closes that meet: a `stop()` or `dispose()` made while another thread's is under way
/// returns once that one has (a second `dispose()` too), except from a callback of the run,
/// from the drain's step or from the inspector, which return at once and leave the work to
/// it (a dispose then follows that stop); one made once the loop is stopped or disposed
/// waits for no callback. One that waits for the drain gives way to a stop or dispose from
/// that drain's step, or from the executor's own thread when the drain is queued there, and
/// returns once that step and the run's callbacks on other threads have ended; a `start()`
/// from there returns false while the stop is under way. A callback that waits for another
/// thread's callback (a handler disposing an observer or feedback that the drain is
/// calling, or reporting its failure while the inspector runs) is not waited for by a stop
/// or dispose from that other callback, which would wait for itself: its trace or its
/// dispose comes after that stop, and may still be in progress when a close that met that
/// stop returns. A stop or dispose from the inspector on a thread other than the drain's
/// does not wait for the drain, whose traces need the inspector; nor, while that drain
/// waits for the inspector, for the handler the drain runs inside (a handler whose `send`
/// into the idle loop, on the caller's executor, drains it on the handler's thread). It
/// drops the events not yet handled, and returns while the drain's callback in progress,
/// if any, and that handler finish. A stop or dispose from an attached feedback's
/// propagate does the same while the loop's turn that removes that feedback waits for the
/// propagate to return. A gear event that a propagate turns into an event of the idle
/// loop is drained once the propagate has returned, outside the gear's lock: a stop or
/// dispose from the inspector, which disconnects the gear, does not wait for that drain.
/// A propagate that itself drains the loop (its `dispatch` into the idle loop, with the
/// caller's executor) is waited for: a stop or dispose from the inspector while that
/// drain waits for the inspector deadlocks.
///
/// ## Errors
/// An update that throws leaves the model unchanged; the inspector sees the error and
/// the loop goes on with the next event. So do a throwing handler, a throwing render, a
/// source that refuses to connect and a request feedback whose request or comparison
/// throws.
/// The inspector is the only place these errors go: a loop made without one drops them,
/// so give every loop an inspector that logs them (the traces that carry an `error`).
public final class Loop<Model, Event, Effect>: Subscribable {
    /// What the loop publishes to its subscribers: its models.
    public typealias Value = Model

    @usableFromInline
    let core: LoopCore<Model, Event, Effect>

    /// A loop.
    ///
    /// - Parameters:
    ///   - model: the first model.
    ///   - startEffects: effects handed to the handlers once the first model is
    ///     published (Mobius's `First`).
    ///   - update: what each event does (see `Update`).
    ///   - handlers: the effect handlers, in the order each effect reaches them.
    ///   - feedbacks: feedbacks registered first, before any observer.
    ///   - sources: event sources, connected while the loop runs.
    ///   - executor: who runs the steps; the dispatching thread by default.
    ///   - coalescing: a key for events that may replace one another while queued:
    ///     an event whose key equals that of a queued event takes its place in the
    ///     queue (the older one is dropped), for high-frequency input. Nil keys never
    ///     coalesce. Called on the dispatching thread for every event sent, before the
    ///     loop takes its lock, so also for an event a stopped loop then refuses.
    ///   - journal: records every start and every event that reaches the update.
    ///   - restart: the start of every run after the first, from the kept model
    ///     (Mobius's `Init`); by default the kept model and no effect.
    ///   - inspector: sees every start, event, step and error (see `LoopTrace`).
    ///   - autostart: whether to start now; if false, `start()` starts the first run.
    @inlinable
    public convenience init(
        model: Model,
        startEffects: [Effect] = [],
        update: Update<Model, Event, Effect>,
        handlers: [EffectHandler<Effect, Event>] = [],
        feedbacks: [Feedback<Model, Event>] = [],
        sources: Fuser<Event>? = nil,
        executor: LoopExecutor = CallerExecutor(),
        coalescing: ((Event) -> AnyHashable?)? = nil,
        journal: Journal<Model, Event>? = nil,
        restart: ((Model) -> First<Model, Effect>)? = nil,
        inspector: ((LoopTrace<Model, Event, Effect>) -> Void)? = nil,
        autostart: Bool = true
    ) {
        self.init(
            model: model,
            startEffects: startEffects,
            update: update,
            handlers: handlers,
            feedbacks: feedbacks,
            sources: sources,
            executor: executor,
            coalescing: coalescing,
            journal: journal,
            restart: restart,
            inspector: inspector,
            autostart: autostart,
            paths: LoopPaths()
        )
    }

    /// `init(model:startEffects:update:...)`, given the ways in of the events that do not
    /// come through `dispatch`, made by the inlinable initializer for the loop's types
    /// (see `LoopPaths`).
    @usableFromInline
    init(
        model: Model,
        startEffects: [Effect],
        update: Update<Model, Event, Effect>,
        handlers: [EffectHandler<Effect, Event>],
        feedbacks: [Feedback<Model, Event>],
        sources: Fuser<Event>?,
        executor: LoopExecutor,
        coalescing: ((Event) -> AnyHashable?)?,
        journal: Journal<Model, Event>?,
        restart: ((Model) -> First<Model, Effect>)?,
        inspector: ((LoopTrace<Model, Event, Effect>) -> Void)?,
        autostart: Bool,
        paths: LoopPaths<Model, Event, Effect>
    ) {
        core = LoopCore(
            first: First(model, effects: startEffects),
            update: update,
            handlers: handlers,
            feedbacks: feedbacks,
            sources: sources.map { [$0] } ?? [],
            executor: executor,
            coalescingKey: coalescing,
            journal: journal,
            restart: restart,
            inspector: inspector,
            paths: paths
        )
        for case .feedback(let entry) in core.subscribers { bindRemoval(entry) }
        if autostart { core.start() }
    }

    deinit {
        core.close(to: .disposed)
    }

    // MARK: State

    /// The model: the one the last step stored.
    public var model: Model { core.currentModel }

    /// Whether the loop accepts events: started, and neither stopped nor disposed nor
    /// being stopped or disposed.
    public var isRunning: Bool { core.acceptsEvents }

    /// Whether the loop was disposed.
    public var isDisposed: Bool { core.currentStatus == .disposed }

    // MARK: Events

    /// Queues `event` and returns true, or returns false if the loop is stopped or
    /// disposed. With the default executor, the event has been handled on return unless
    /// another thread is draining the loop (then that thread handles it); the draining
    /// thread also handles what other threads queue meanwhile, so while they keep
    /// dispatching, its call does not return.
    @inlinable
    @discardableResult
    public func dispatch(_ event: consuming Event) -> Bool {
        core.enqueue(event, job: nil) == nil
    }

    /// Queues `event`, or throws `LoopError.stopped` or `.disposed`.
    @inlinable
    public func tryDispatch(_ event: consuming Event) throws {
        if let refusal = core.enqueue(event, job: nil) { throw refusal }
    }

    // MARK: Registrations

    /// Calls `receiver` with the current model, then with every new model, until the
    /// result is disposed; an error it throws goes to the inspector. The current model
    /// is sent on the loop's turn, after the entries queued before: with the default
    /// executor and an idle running loop, before `subscribe` returns. A loop that is
    /// not running sends it when it starts, as it does to every observer.
    public func subscribe(_ receiver: @escaping (Model) throws -> Void) -> _Disposable {
        let subscription = Subscription(receiver)
        subscription.pausing = pausing
        let queued = core.enqueueControl({ core, session in
            guard !subscription.isClosed else { return }
            core.subscribers.append(.observer(subscription))
            if let session, !session.isCancelled { core.deliver(core.model, to: subscription) }
        }, dropped: subscription.dispose)
        if !queued { subscription.dispose() }
        return subscription
    }

    /// Registers `feedback` after every observer and feedback registered so far. If the
    /// loop is running, the feedback hears of the current model first. Dispose the
    /// result to remove it: it hears of no model once `dispose()` returns (which waits
    /// for a model it is hearing on another thread). Its work in progress is cancelled,
    /// and a feedback `attached(to:)` a gear lets go of the gear, on the loop's turn
    /// (before `dispose()` returns with the default executor and an idle loop). Until
    /// then its work may still send (the events are dropped when it is cancelled), and
    /// an attached feedback still calls its `propagate` for each gear event and queues
    /// what it makes, which the loop handles.
    @discardableResult
    public func add(_ feedback: Feedback<Model, Event>) -> Disposable {
        let entry = FeedbackEntry(feedback)
        bindRemoval(entry)
        core.enqueueControl { core, session in
            guard !entry.isRemoved else { return }
            core.subscribers.append(.feedback(entry))
            if let session, !session.isCancelled {
                entry.reactor = feedback.start(session)
                core.inform(entry, of: core.model)
            }
        }
        return entry
    }

    /// Connects `sources` to the loop: their events are dispatched while the loop runs
    /// (reconnected at each start). Dispose the result to disconnect them for good: no
    /// event of theirs is accepted once that dispose has returned. If the loop's turn is
    /// still connecting them on another thread then, the dispose does not wait for it
    /// (a source's connect may wait for the disposing thread): they are disconnected
    /// once their connect has returned and the dispose is through, on the thread of
    /// whichever ends last (usually that turn's).
    ///
    /// The sources connect on the loop's turn, so a source that refuses to connect (a
    /// `Fuser(tryConnector:)` that throws) is no caller's error: the inspector sees it as
    /// `sourceFailed`, and nothing of `sources` is connected until the next start.
    ///
    /// Each event's delivery (its way through the fuser's transforms) is a callback of
    /// the run: a stop or dispose waits for it, a stop or dispose from a transform does
    /// not wait for another thread's, and a transform must not wait for the thread that
    /// stops or disposes the loop. With the caller's executor, the steps of the events
    /// run once the delivering thread's outermost delivery (of any loop's sources, or a
    /// gear's attached feedback) is over, outside the connections' locks.
    ///
    /// That work runs inside the source's call to its sink, and it may connect and
    /// disconnect sources (at a start, a stop, a connect, and where a callback it runs
    /// disposes a connection), so a source must not hold a lock of its own while it calls
    /// its sink that its connecting or disconnecting takes, nor one another source of the
    /// loop takes there: take the sinks under the lock and call them once it is released,
    /// as `Output` does.
    @discardableResult
    public func connect(_ sources: Fuser<Event>) -> Disposable {
        connect(SourceSlot(sources, keeping: nil))
    }

    /// `connect(_:)` for a binding whose sources only lend their events for the
    /// emission: each event is queued as `keep(event)`; if `keep` throws, the error goes
    /// back to the source that emitted it and the event is dropped. (An `extract` over
    /// the sources would do the same, one level deeper: see `Fuser.maximumDepth`.)
    @_spi(Bindings)
    public func connect(_ sources: Fuser<Event>, keeping keep: @escaping (Event) throws -> Event) -> Disposable {
        connect(SourceSlot(sources, keeping: keep))
    }

    private func connect(_ slot: SourceSlot<Event>) -> Disposable {
        slot.remove = { [link = core.link] in
            link.loop?.enqueueControl { core, _ in core.sources.removeAll { $0.isRemoved } }
        }
        core.enqueueControl { core, session in
            guard !slot.isRemoved else { return }
            core.sources.append(slot)
            if let session, !session.isCancelled { slot.connect(in: session, to: core) }
        }
        return slot
    }

    /// Records into `journal` from the loop's turn on (after the entries queued
    /// before), in place of the journal given so far (`nil` stops recording): for a
    /// binding, or to start recording a loop that already runs. If the loop is running
    /// then, the journal first records the current model as a start, so that its replay
    /// begins there; otherwise it records the next start. Does nothing once the loop is
    /// disposed.
    public func record(into journal: Journal<Model, Event>?) {
        core.enqueueControl { core, session in
            core.journal = journal
            if let journal, let session, !session.isCancelled { journal.recordStart(core.model) }
        }
    }

    // MARK: Lifecycle

    /// Starts a run if the loop is stopped (or was made with `autostart: false`);
    /// returns whether the loop is running afterwards. A loop disposed, or being
    /// disposed, does not start; one that a callback of the start (run before this
    /// returns, with the caller's executor) stops or disposes again is not running
    /// afterwards either.
    @discardableResult
    public func start() -> Bool {
        core.start() == nil
    }

    /// `start()`, throwing why the loop is not running afterwards: for a binding that
    /// reports it.
    @_spi(Bindings)
    public func tryStart() throws(LoopError) {
        if let refusal = core.start() { throw refusal }
    }

    /// Ends the run, keeping the model and the registrations; see the type's
    /// documentation. Does nothing if the loop is not running.
    public func stop() {
        core.close(to: .stopped)
    }

    /// Ends the loop for good; see the type's documentation. Idempotent.
    public func dispose() {
        core.close(to: .disposed)
    }

    /// How a registration's dispose waits for its callback in progress on another
    /// thread: outside the run's callbacks (see `LoopCore.pausingRunCallback`).
    private var pausing: (@escaping () -> UInt, () -> Void) -> Void {
        { [link = core.link] waitingFor, wait in
            if let core = link.loop { core.pausingRunCallback(waitingFor: waitingFor, wait) } else { wait() }
        }
    }

    private func bindRemoval(_ entry: FeedbackEntry<Model, Event>) {
        entry.delivery.pausing = pausing
        entry.remove = { [link = core.link] entry in
            link.loop?.enqueueControl { core, _ in
                core.subscribers.removeAll { if case .feedback(let other) = $0 { return other === entry } else { return false } }
                entry.reactor?.stop()
                entry.reactor = nil
            }
        }
    }
}

extension Loop: _Disposable {}

extension Loop where Effect == Never {
    /// A loop in Spin's and RaspSwift's form: a reducer, feedbacks for the side effects,
    /// and sources; no effect.
    ///
    /// ```swift
    /// let spin = Loop(model: Levels(left: 10, right: 20), reducer: levelsReducer,
    ///                 feedbacks: [.react(leftEffect), .react(rightEffect)])
    /// ```
    @inlinable
    public convenience init(
        model: Model,
        reducer: @escaping (Model, Event) throws -> Model,
        feedbacks: [Feedback<Model, Event>] = [],
        sources: Fuser<Event>? = nil,
        executor: LoopExecutor = CallerExecutor(),
        coalescing: ((Event) -> AnyHashable?)? = nil,
        journal: Journal<Model, Event>? = nil,
        inspector: ((LoopTrace<Model, Event, Effect>) -> Void)? = nil,
        autostart: Bool = true
    ) {
        self.init(
            model: model,
            update: .reducer(reducer),
            feedbacks: feedbacks,
            sources: sources,
            executor: executor,
            coalescing: coalescing,
            journal: journal,
            inspector: inspector,
            autostart: autostart
        )
    }
}
/// A loop may be shared between tasks when its models, events and effects may: they
/// cross threads inside it (an event dispatched on one thread is handled on another; a
/// model is read from any). Its own state is guarded by its locks.
extension Loop: @unchecked Sendable where Model: Sendable, Event: Sendable, Effect: Sendable {}
