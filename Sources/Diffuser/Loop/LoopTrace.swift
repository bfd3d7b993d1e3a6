/// What a loop's inspector sees: every start, every event (handled, failed or dropped),
/// every step and every error.
///
/// The inspector is called one call at a time, in the order things happened: on the
/// thread running the loop's step, except for an error thrown by a callback on another
/// thread (a handler on its own executor), which that thread reports at once, and for
/// the drops, `stopped` and `disposed` of a stop or dispose, which the thread calling it
/// reports. What the inspector itself causes on its thread is reported from inside its
/// call: the traces of a stop or dispose it makes, and those of the steps a `dispatch`
/// from it runs when it starts the drain of an idle loop (the caller's executor, on a
/// thread other than the drainer's). So an inspector tied to one thread must hop there
/// itself, and one that takes a lock must not call the loop while holding it. Each event a loop accepted is
/// reported exactly once, as `stepped`, `failed` or `dropped`.
public enum LoopTrace<Model, Event, Effect> {
    /// The loop started (or restarted) from `first`; its model is about to be published.
    case started(First<Model, Effect>)
    /// `update(model, event)` returned `next`.
    case stepped(event: Event, model: Model, next: Next<Model, Effect>)
    /// `update(model, event)` threw `error`; the model stays `model`.
    case failed(event: Event, model: Model, error: Error)
    /// `event` was accepted but never reached the update.
    case dropped(event: Event, reason: LoopDropReason)
    /// An effect handler threw `error` while handling `effect`.
    case effectFailed(effect: Effect, error: Error)
    /// An observer (a render through a throwing diffuser) threw `error`.
    case observerFailed(error: Error)
    /// A source of a connected fuser refused to connect with `error` when the loop
    /// connected it (on the loop's turn after `connect`, or at a start): none of that
    /// fuser's sources is connected for this run; the next start tries again.
    case sourceFailed(error: Error)
    /// A feedback's request selection or comparison (`Feedback.request(_:isSame:…)`)
    /// threw `error` on a model it heard (one just published, or the current one when the
    /// feedback was added to a running loop): that feedback's request stays as it was
    /// (nothing starts or stops), and the loop goes on.
    case feedbackFailed(error: Error)
    /// The loop stopped; `model` is kept for the next start.
    case stopped(model: Model)
    /// The loop was disposed with `model` as its last model.
    case disposed(model: Model)
}

/// Why an accepted event never reached the update.
public enum LoopDropReason: Equatable, Sendable {
    /// The work that sent it was cancelled before the event's turn came.
    case cancelledWork
    /// A newer event with the same coalescing key replaced it in the queue.
    case coalesced
    /// The loop stopped before the event's turn came.
    case stopped
    /// The loop was disposed before the event's turn came.
    case disposed
}

/// Why a loop refused an event.
public enum LoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The loop is stopped (it may be started again) or stopping.
    case stopped
    /// The loop was disposed, or is being disposed: it accepts no more events.
    case disposed

    public var description: String {
        switch self {
        case .stopped: return "the loop is stopped: start it before dispatching"
        case .disposed: return "the loop was disposed: it accepts no more events"
        }
    }
}
