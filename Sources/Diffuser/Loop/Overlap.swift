/// What a feedback does with its work in progress when a new model (or a new request)
/// comes: Spin's execution strategies, and one more.
public enum Overlap: Sendable {
    /// Cancel the work in progress and start anew (Spin's default, `.cancelOnNewState`;
    /// Rx's `flatMapLatest`). Events of the cancelled work still queued are dropped.
    case cancelPrevious
    /// Keep the work in progress and ignore the new model while it runs (Rx's
    /// `flatMapFirst`). The work must `finish()` its job for the next one to start.
    case keepPrevious
    /// Start anew and let the work in progress run to its end (Spin's
    /// `.continueOnNewState`; Rx's `flatMap`). Events may then arrive out of order.
    /// Every job must end (`finish()`): the open ones are kept until the loop stops.
    case concurrent
}

/// The work one feedback has in progress, by its overlap strategy.
///
/// Touched only by the loop's steps, one at a time, so it needs no lock; the jobs
/// themselves are thread-safe.
@usableFromInline
final class WorkSlot<Event> {
    private let overlap: Overlap
    /// The jobs started and not yet known to have ended.
    private var running: [Job<Event>] = []
    /// With `.concurrent`, the count at which `running` is next rid of ended jobs: twice
    /// what the last pass left, so that starts cost the same on average however many
    /// jobs stay open (the other strategies keep at most one).
    private var pruneAt = 16

    @usableFromInline
    init(_ overlap: Overlap) {
        self.overlap = overlap
    }

    /// A job for new work, or `nil` if the strategy says to keep the work in progress.
    @usableFromInline
    func begin(in session: LoopSession<Event>) -> Job<Event>? {
        switch overlap {
        case .cancelPrevious:
            running.removeAll { !$0.isRunning }
            cancelAll()
        case .keepPrevious:
            running.removeAll { !$0.isRunning }
            if !running.isEmpty { return nil }
        case .concurrent:
            if running.count >= pruneAt {
                running.removeAll { !$0.isRunning }
                pruneAt = max(16, 2 * running.count)
            }
        }
        let job = Job(session: session)
        running.append(job)
        return job
    }

    /// Cancels every job in progress.
    @usableFromInline
    func cancelAll() {
        let jobs = running
        running.removeAll()
        for job in jobs { job.cancel() }
    }
}

/// Runs `body`, the start of `job`'s work, on `executor`, or at once if there is none.
///
/// On an executor the body runs as a callback of the session: not at all if the loop
/// stopped or the job was cancelled before its turn came, and a `stop` or `dispose`
/// waits for it once it started. At once, not at all if the session ended meanwhile:
/// cancelling the work in progress (`WorkSlot.begin`) runs on-cancel actions, which may
/// stop or dispose the loop, and the rest of that step is skipped.
@usableFromInline
func launch<Event>(
    _ job: Job<Event>,
    on executor: LoopExecutor?,
    _ body: @escaping () -> Void
) {
    guard let executor else {
        if !job.isCancelled { body() }
        return
    }
    let session = job.session
    // The handler's body is the user's, called on the executor's thread by design (an
    // `EffectHandler` is declared safe to call there; see its `Sendable` conformance).
    let start = HandlerStart(job: job, body: body)
    executor.execute {
        session.perform {
            if !start.job.isCancelled { start.body() }
        }
    }
}

/// A handler's job and the start of its work, handed to the handler's executor.
@usableFromInline
struct HandlerStart<Event>: @unchecked Sendable {
    let job: Job<Event>
    let body: () -> Void
}
