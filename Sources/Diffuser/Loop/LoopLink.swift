/// How a loop's registrations (observers, feedbacks, sources) reach the loop: to queue
/// their removal, and to wait for a callback of the run when they are disposed. The link
/// holds the loop strongly until the loop's dispose has ended (`cut()`), then nothing.
///
/// Strongly, not weakly: a weak reference to the loop's core gives the core a side table,
/// after which every retain and release of it, several at each event, takes the
/// runtime's slow path (an event a gear hands to an attached feedback costs about a
/// fifth more). A registration may outlive its loop, and the loop holds its
/// registrations, so the strong reference makes a cycle: the end of the dispose breaks
/// it, and a loop whose owners let go of it is disposed (`Loop.deinit`). By then what a
/// registration would do through the loop is nothing anyway (the loop queues no more
/// work, and no run is left to wait for), so letting go of the loop changes no result.
final class LoopLink<Model, Event, Effect>: @unchecked Sendable {
    private let lock = Lock()
    private var core: LoopCore<Model, Event, Effect>?

    init() {}

    /// Links `core`; called once, as the core is made.
    func link(_ core: LoopCore<Model, Event, Effect>) {
        lock.withLock { self.core = core }
    }

    /// The loop, until its dispose has ended.
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
