/// How what may outlive a loop reaches it: its registrations (observers, feedbacks,
/// sources), to queue their removal and to wait for a callback of the run when they are
/// disposed, and the drains it hands to its executor or leaves for the end of an outer
/// delivery (`LoopDeliveries`). The link holds the loop strongly
/// until the loop's dispose has ended (`cut()`), then nothing.
///
/// Strongly, not weakly: a weak reference to the loop's core gives the core a side table,
/// after which every retain and release of it, several at each event, takes the
/// runtime's slow path (an event a gear hands to an attached feedback costs about a
/// fifth more). The loop holds its registrations and its executor, which holds the
/// drains, so the strong reference makes a cycle: the end of the dispose breaks it, and
/// a loop whose owners let go of it is disposed (`Loop.deinit`). By then what these would
/// do through the loop is nothing anyway (the loop takes no more work, and no run is
/// left to drain or wait for), so letting go of the loop changes no result.
@usableFromInline
final class LoopLink<Model, Event, Effect>: @unchecked Sendable {
    private let lock = Lock()
    private var core: LoopCore<Model, Event, Effect>?

    init() {}

    /// Links `core`; called once, as the core is made.
    func link(_ core: LoopCore<Model, Event, Effect>) {
        lock.withLock { self.core = core }
    }

    /// The loop, until its dispose has ended.
    @usableFromInline
    var loop: LoopCore<Model, Event, Effect>? {
        lock.withLock { core }
    }

    /// Lets go of the loop: once its dispose has ended, and nothing of a run is left.
    func cut() {
        let old: LoopCore<Model, Event, Effect>? = lock.withLock {
            defer { core = nil }
            return core
        }
        // Released outside the lock: the loop's teardown may run the users' code.
        withExtendedLifetime(old) {}
    }
}
