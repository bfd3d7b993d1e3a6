/// A side effect driven by the loop's models, which may send events back: Spin's
/// `state -> events`.
///
/// A loop publishes every new model to its observers and feedbacks, in the order they
/// were registered, during the step that made it. Feedbacks come in a few forms:
///
/// ```swift
/// // Synchronous: returns the events to queue (Spin's `.just` / `.empty`).
/// Feedback<Levels, Event>.react { levels in
///     levels.left < levels.right ? [.increaseLeft] : []
/// }
/// // Asynchronous work with a job to send events later; a newer model cancels it.
/// Feedback<Model, Event>.work(on: background) { model, job in … }
/// // Gated by a request: starts when the request changes, stops when it becomes nil.
/// Feedback<Model, Event>.request(\.pendingSearch) { text, job in … }
/// ```
///
/// and are narrowed with `filtered(by:)` and `scoped(to:)` (Spin's `filteredBy:` and
/// `lensingOn:`). `react`, `work` and `request` take an `Overlap` strategy and an
/// optional executor to run their work on (Spin's per-feedback scheduler); a `react`
/// without one runs inline, in the step, where the strategy has nothing to decide.
///
/// A feedback is a description: each start of a loop makes a fresh instance of it, so
/// a restarted loop restarts its requests.
public struct Feedback<Model, Event> {
    /// Makes the feedback's instance for one session of a loop: what receives the
    /// models, or `nil` for a feedback that reads none (a gear attachment).
    @usableFromInline
    let start: (LoopSession<Event>) -> FeedbackReactor<Model>?

    @inlinable
    init(start: @escaping (LoopSession<Event>) -> FeedbackReactor<Model>?) {
        self.start = start
    }
}

/// One session's instance of a feedback.
@usableFromInline
struct FeedbackReactor<Model> {
    /// Receives each published model, on the loop's step; what it throws goes to the
    /// inspector as `feedbackFailed`.
    @usableFromInline let receive: (Model) throws -> Void
    /// Cancels the work in progress: the feedback was removed from a running loop.
    @usableFromInline let stop: () -> Void

    @inlinable
    init(receive: @escaping (Model) throws -> Void, stop: @escaping () -> Void) {
        self.receive = receive
        self.stop = stop
    }
}

extension Feedback {
    /// A feedback that computes events from each model at once.
    ///
    /// Without an executor, `effect` runs inside the loop's step and its events are
    /// queued after the events already queued. With one, it runs there, and `overlap`
    /// decides about a run that has not started or finished when the next model comes.
    public static func react(
        on executor: LoopExecutor? = nil,
        overlap: Overlap = .cancelPrevious,
        _ effect: @escaping (Model) -> [Event]
    ) -> Feedback {
        Feedback { session in
            guard let executor else {
                return FeedbackReactor(
                    receive: { model in
                        for event in effect(model) where !session.isCancelled { _ = session.enqueue(event, nil) }
                    },
                    stop: {}
                )
            }
            let slot = WorkSlot<Event>(overlap)
            return FeedbackReactor(
                receive: { model in
                    guard let job = slot.begin(in: session) else { return }
                    launch(job, on: executor) { job.finish(sending: effect(model)) }
                },
                stop: slot.cancelAll
            )
        }
    }

    /// A feedback that starts work on each model; the work sends events through its
    /// job, now or later, and calls `finish()` when done.
    ///
    /// `overlap` decides what happens to work in progress when the next model comes:
    /// by default it is cancelled and its queued events are dropped.
    public static func work(
        on executor: LoopExecutor? = nil,
        overlap: Overlap = .cancelPrevious,
        _ effect: @escaping (Model, Job<Event>) -> Void
    ) -> Feedback {
        Feedback { session in
            let slot = WorkSlot<Event>(overlap)
            return FeedbackReactor(
                receive: { model in
                    guard let job = slot.begin(in: session) else { return }
                    launch(job, on: executor) { effect(model, job) }
                },
                stop: slot.cancelAll
            )
        }
    }

    /// A feedback gated by a request: work starts when the model's request changes to
    /// a non-nil value, and stops (its job is cancelled) when it becomes nil.
    ///
    /// A `Diffuser` does the gating (`map(request, into(…))`): a model whose request
    /// equals the previous one starts nothing, however often it is published. With
    /// `.cancelPrevious` (the default) a new request cancels the work of the previous
    /// one; with `.keepPrevious` a new request is ignored while work is in progress;
    /// with `.concurrent` both run.
    // Inlinable, as every form that gates through a `Diffuser`: the gate is then built
    // where the feedback is, for the model's type; built here, it would run unspecialized
    // generic code at every published model.
    @inlinable
    public static func request<Request: Equatable>(
        _ request: @escaping (Model) -> Request?,
        on executor: LoopExecutor? = nil,
        overlap: Overlap = .cancelPrevious,
        _ effect: @escaping (Request, Job<Event>) -> Void
    ) -> Feedback {
        self.request(request, isSame: ==, on: executor, overlap: overlap, effect)
    }

    /// `request(_:on:overlap:_:)` for requests compared by `isSame` instead of `==`,
    /// selected by a function that may throw: a model whose selection or comparison
    /// throws leaves the request as it was (nothing starts or stops), and the error goes
    /// to the loop's inspector as `LoopTrace.feedbackFailed`.
    @inlinable
    public static func request<Request>(
        _ request: @escaping (Model) throws -> Request?,
        isSame: @escaping (Request, Request) throws -> Bool,
        on executor: LoopExecutor? = nil,
        overlap: Overlap = .cancelPrevious,
        _ effect: @escaping (Request, Job<Event>) -> Void
    ) -> Feedback {
        Feedback { session in
            let slot = WorkSlot<Event>(overlap)
            let changed: (Request?, Request?) throws -> Bool = { old, new in
                switch (old, new) {
                case (nil, nil): return false
                case let (old?, new?): return try !isSame(old, new)
                default: return true
                }
            }
            let gate = Diffuser<Model>.map(throwing: request, .intoWhen(throwing: changed) { (value: Request?) in
                guard let value else {
                    slot.cancelAll()
                    return
                }
                guard let job = slot.begin(in: session) else { return }
                launch(job, on: executor) { effect(value, job) }
            })
            return FeedbackReactor(receive: { try gate.tryRun($0) }, stop: slot.cancelAll)
        }
    }

    /// `request(_:on:overlap:_:)` with the request at a key path.
    @inlinable
    public static func request<Request: Equatable>(
        _ keyPath: KeyPath<Model, Request?>,
        on executor: LoopExecutor? = nil,
        overlap: Overlap = .cancelPrevious,
        _ effect: @escaping (Request, Job<Event>) -> Void
    ) -> Feedback {
        request({ $0[keyPath: keyPath] }, on: executor, overlap: overlap, effect)
    }

    /// This feedback, hearing only of the models for which `predicate` is true (Spin's
    /// `filteredBy:`). A model filtered out leaves work in progress alone.
    public func filtered(by predicate: @escaping (Model) -> Bool) -> Feedback {
        let inner = start
        return Feedback { session in
            guard let reactor = inner(session) else { return nil }
            return FeedbackReactor(
                receive: { model in if predicate(model) { try reactor.receive(model) } },
                stop: reactor.stop
            )
        }
    }

    /// This feedback, on the part of a larger model at `keyPath` (Spin's `lensingOn:`).
    public func scoped<Whole>(to keyPath: KeyPath<Whole, Model>) -> Feedback<Whole, Event> {
        scoped(by: { $0[keyPath: keyPath] })
    }

    /// This feedback, on the part of a larger model that `lens` selects.
    public func scoped<Whole>(by lens: @escaping (Whole) -> Model) -> Feedback<Whole, Event> {
        let inner = start
        return Feedback<Whole, Event> { session in
            guard let reactor = inner(session) else { return nil }
            return FeedbackReactor(receive: { try reactor.receive(lens($0)) }, stop: reactor.stop)
        }
    }
}

/// A feedback is a description; each loop run makes its own instance.
extension Feedback: @unchecked Sendable {}
