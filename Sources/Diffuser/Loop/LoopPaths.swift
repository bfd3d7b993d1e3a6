/// The loop's ways in for the events that do not come through `dispatch`: an event the
/// run's work sends through its session (a job's, a feedback's, a gear's) and an event a
/// source connection delivers, with the drain that delivery leaves. `Loop`'s initializer
/// is inlinable and makes them, so that they are compiled for the loop's types where the
/// loop is created, as `dispatch` is where it is called. Compiled once in the library for
/// every loop, an event's way through the queue and the step would look up the metadata
/// of the loop's generic types at every turn, which makes it several times slower (see
/// docs/performance.md, Loop).
@usableFromInline
struct LoopPaths<Model, Event, Effect> {
    /// `LoopCore.enqueue(_:job:deferring:)`.
    @usableFromInline let enqueue: (LoopCore<Model, Event, Effect>, Event, Job<Event>?, _ deferring: Bool) -> LoopError?
    /// `LoopCore.payDeferredDrain()`.
    @usableFromInline let payDeferredDrain: (LoopCore<Model, Event, Effect>) -> Void

    @inlinable
    init() {
        enqueue = { core, event, job, deferring in core.enqueue(event, job: job, deferring: deferring) }
        payDeferredDrain = { core in core.payDeferredDrain() }
    }
}
