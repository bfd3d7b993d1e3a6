/// Carries out a loop's effects, and may send events back through the effect's job.
///
/// Each effect of a step goes to every handler, effects in the order the update listed
/// them and, for each, handlers in the order the loop was given them, before the next
/// event starts. A handler switches over the effects it knows and ignores the rest.
///
/// ```swift
/// EffectHandler<Effect, Event> { effect, job in
///     switch effect {
///     case .save(let note):   store.save(note); job.send(.saved)   // at once: queued
///     case .load:             api.load { job.send(.loaded($0)); job.finish() }
///     default:                break
///     }
/// }
/// ```
///
/// Events sent while the step runs are queued after the events already queued; they are
/// never handled inside the step. A job that is neither finished nor cancelled stays
/// usable until the loop stops; stopping or disposing the loop cancels it (running its
/// `onCancel` actions).
public struct EffectHandler<Effect, Event> {
    @usableFromInline let executor: LoopExecutor?
    /// For a handler with an executor, called in the step for each effect: the work to
    /// do with a job, or nil if the handler ignores the effect (then no job is made and
    /// nothing is scheduled).
    @usableFromInline let prepare: (Effect) -> ((Job<Event>) throws -> Void)?
    /// For a handler without an executor (nil otherwise), called in the step for each
    /// effect: handles it at once with the job `makeJob` returns, called only if the
    /// handler takes the effect. Unlike `prepare`, it makes no closure for the work to
    /// keep; and the step tells the two kinds of handler apart by it rather than by
    /// `executor`, whose test would copy the existential.
    @usableFromInline let handleNow: ((Effect, _ makeJob: () -> Job<Event>) throws -> Void)?

    /// A handler that runs `handle` inside the loop's step, or on `executor` if given.
    /// If `handle` throws, the loop's inspector sees the error and the loop goes on.
    public init(on executor: LoopExecutor? = nil, _ handle: @escaping (Effect, Job<Event>) throws -> Void) {
        self.init(
            on: executor,
            prepare: { effect in { job in try handle(effect, job) } },
            handleNow: { effect, makeJob in try handle(effect, makeJob()) })
    }

    private init(
        on executor: LoopExecutor?, prepare: @escaping (Effect) -> ((Job<Event>) throws -> Void)?,
        handleNow: @escaping (Effect, () -> Job<Event>) throws -> Void
    ) {
        self.executor = executor
        self.prepare = prepare
        self.handleNow = executor == nil ? handleNow : nil
    }

    /// A handler for the effects that `extract` recognizes: it is called with the
    /// extracted payload, and never with other effects. `extract` runs in the step, so
    /// an effect it does not recognize schedules nothing on `executor`; like any callback
    /// of the step, an `extract` that stops or disposes the loop ends the step there
    /// (`handle` is not called).
    public static func matching<Payload>(
        _ extract: @escaping (Effect) -> Payload?,
        on executor: LoopExecutor? = nil,
        _ handle: @escaping (Payload, Job<Event>) throws -> Void
    ) -> EffectHandler {
        EffectHandler(
            on: executor,
            prepare: { effect in
                guard let payload = extract(effect) else { return nil }
                return { job in try handle(payload, job) }
            },
            handleNow: { effect, makeJob in
                guard let payload = extract(effect) else { return }
                let job = makeJob()
                // `extract` is a callback of the step: once it stopped or disposed the
                // loop, the step calls nothing more (as `launch` does not start the work
                // of a handler with an executor).
                if job.isCancelled { return }
                try handle(payload, job)
            })
    }

    /// A handler that turns each effect into events at once, then finishes the job.
    public static func events(
        on executor: LoopExecutor? = nil,
        _ handle: @escaping (Effect) throws -> [Event]
    ) -> EffectHandler {
        EffectHandler(on: executor) { effect, job in
            job.finish(sending: try handle(effect))
        }
    }
}

/// A handler is called by the loop that holds it, on its steps or on its executor.
extension EffectHandler: @unchecked Sendable {}
