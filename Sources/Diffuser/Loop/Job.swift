import Synchronization

/// A piece of work a loop started (an effect being handled, a feedback reacting to a
/// model) and its way back into the loop.
///
/// The work sends events with `send(_:)`, at once or later, from any thread; each is
/// queued like any dispatched event. A job ends in one of two ways:
/// - `finish()`: the work is done; later sends are refused. Events it sent stay queued.
/// - cancellation: a newer model replaced the work (see `Overlap`), its request became
///   `nil`, or the loop stopped or was disposed. Later sends are refused, events it
///   sent that are still queued are dropped, and the actions given to `onCancel` run.
///
/// Until it ends, the loop keeps a job's `onCancel` actions, to run them on stop: work
/// that never finishes holds that memory until then.
///
/// ```swift
/// EffectHandler<Effect, Event> { effect, job in
///     guard case .search(let text) = effect else { return }
///     let request = api.search(text) { results in
///         job.send(.results(results))
///         job.finish()
///     }
///     job.onCancel { request.cancel() }
/// }
/// ```
public final class Job<Event> {
    private enum State: UInt8 { case running, finished, cancelled }

    @usableFromInline let session: LoopSession<Event>
    let id: UInt64
    private let state = Atomic<UInt8>(State.running.rawValue)

    @usableFromInline
    init(session: LoopSession<Event>) {
        self.session = session
        self.id = session.makeJobID()
    }

    /// Queues `event` in the loop; false if the job has ended or the loop refuses events
    /// (stopped or disposed).
    @discardableResult
    public func send(_ event: Event) -> Bool {
        guard isRunning else { return false }
        return session.enqueue(event, self)
    }

    /// Marks the work done: later sends are refused, and the `onCancel` actions are
    /// dropped without running. Does nothing if the job already ended (cancelled, or its
    /// run ended).
    public func finish() {
        _ = markFinished()
    }

    /// Marks the job finished unless it ended (cancelled, or its run ended): one step
    /// with respect to the run's end, so that a stop on another thread either comes
    /// first (the job is cancelled and its actions run) or after (they were dropped).
    private func markFinished() -> Bool {
        session.finish(id) {
            state.compareExchange(
                expected: State.running.rawValue, desired: State.finished.rawValue, ordering: .acquiringAndReleasing
            ).exchanged
        }
    }

    /// Cancels the work: later sends are refused, its queued events are dropped, and
    /// the `onCancel` actions run on the calling thread. Does nothing if the job already
    /// ended.
    public func cancel() {
        guard state.compareExchange(
            expected: State.running.rawValue, desired: State.cancelled.rawValue, ordering: .acquiringAndReleasing
        ).exchanged else { return }
        for action in session.takeActions(of: id) { action() }
    }

    /// Runs `action` once when the job is cancelled (now, if it already was), to stop
    /// the work: cancel a request, invalidate a timer. Never runs if the job finishes
    /// first.
    public func onCancel(_ action: @escaping () -> Void) {
        // Once not running, the job's end is settled (a finish after the run ended does
        // nothing): run the action if that end is a cancellation. Checking `isCancelled`
        // first, then `isRunning`, would miss a cancel made between the two.
        guard isRunning else {
            if isCancelled { action() }
            return
        }
        session.onCancel(owner: id, action)
        // Ended between the check and the registration: whoever takes the actions first
        // runs them (after a cancel) or drops them (after a finish), that call or this.
        switch state.load(ordering: .acquiring) {
        case State.cancelled.rawValue: for action in session.takeActions(of: id) { action() }
        case State.finished.rawValue: _ = session.takeActions(of: id)
        default: break
        }
    }

    /// Whether the job was cancelled, or its loop stopped or was disposed before it
    /// finished. A job that finished first stays finished.
    public var isCancelled: Bool {
        let now = state.load(ordering: .acquiring)
        return now == State.cancelled.rawValue || (now == State.running.rawValue && session.isCancelled)
    }

    /// Whether the job may still send events.
    public var isRunning: Bool {
        state.load(ordering: .acquiring) == State.running.rawValue && !session.isCancelled
    }

    /// Sends `events` and finishes, as one: if the job was cancelled meanwhile none is
    /// queued. For work that computes its events at once.
    func finish(sending events: [Event]) {
        guard markFinished() else { return }
        for event in events where !session.isCancelled { _ = session.enqueue(event, nil) }
    }
}
/// A job may be sent to the thread that finishes the work when its events may: they cross
/// into the loop's queue there.
extension Job: @unchecked Sendable where Event: Sendable {}
