import Synchronization

/// How what may outlive a loop reaches it: its registrations (observers, feedbacks,
/// sources), to queue their removal and to wait for a callback of the run when they are
/// disposed, and the drains it hands to its executor or leaves for the end of an outer
/// delivery (`LoopDeliveries`). The link holds the loop strongly until the loop's dispose
/// has ended (`cut()`), then nothing.
///
/// Strongly, not weakly: a weak reference to the loop's core gives the core a side table,
/// after which every retain and release of it, several at each event, takes the
/// runtime's slow path (an event a gear hands to an attached feedback costs about 14%
/// more, 36 ns). The loop holds its link from the moment it is made, so the two make a
/// cycle (as do the registrations and the executor's drains that hold the link): the end
/// of the dispose breaks it, and a loop whose owners let go of it is disposed
/// (`Loop.deinit`). By then what these would do through the loop is nothing anyway (the
/// loop takes no more work, and no run is left to drain or wait for), so letting go of
/// the loop changes no result.
@usableFromInline
final class LoopLink<Model, Event, Effect>: Sendable {
    private let core = Mutex<LoopCore<Model, Event, Effect>?>(nil)

    init() {}

    /// Links `core`; called once, as the core is made.
    func link(_ core: LoopCore<Model, Event, Effect>) {
        self.core.withLock { $0 = core }
    }

    /// The loop, until its dispose has ended.
    @usableFromInline
    var loop: LoopCore<Model, Event, Effect>? {
        core.withLock { $0 }
    }

    /// Lets go of the loop: once its dispose has ended, and nothing of a run is left.
    func cut() {
        let old = core.withLock { $0.take() }
        // Released outside the lock: the loop's teardown may run the users' code.
        withExtendedLifetime(old) {}
    }
}
