import Synchronization

/// A feedback registered with a loop, and its instance for the current run.
@usableFromInline
final class FeedbackEntry<Model, Event>: _Disposable, @unchecked Sendable {
    let feedback: Feedback<Model, Event>
    /// The instance for the current run; drainer only, so its accesses never overlap
    /// and skip the runtime's exclusivity checks.
    @usableFromInline @exclusivity(unchecked) var reactor: FeedbackReactor<Model>?
    @usableFromInline let removed = Atomic<Bool>(false)
    /// Hands models to `reactor` as calls of an observer's subscription, so that a
    /// dispose on another thread waits for a model being heard.
    @usableFromInline let delivery = Subscription<Model>()
    /// Queues the removal of the entry it is given on the loop; set once registered.
    /// Given the entry rather than holding it: a weak reference would give every entry a
    /// side table, which makes each retain of the entry slower, and the loop retains it
    /// at each model it publishes.
    var remove: ((FeedbackEntry) -> Void)?

    init(_ feedback: Feedback<Model, Event>) {
        self.feedback = feedback
    }

    @inlinable
    var isRemoved: Bool { removed.load(ordering: .acquiring) }

    /// Hands `model` to this run's instance, unless the feedback was disposed; rethrows
    /// what a request feedback's selection or comparison threw.
    @inlinable
    func receive(_ model: Model) throws {
        try delivery.call { try reactor?.receive(model) }
    }

    /// Stops the feedback: it hears of no model once this returns (a model it is hearing
    /// on another thread is waited for), and its work in progress is cancelled on the
    /// loop's next turn.
    @usableFromInline
    func dispose() {
        if removed.exchange(true, ordering: .acquiringAndReleasing) { return }
        delivery.dispose()
        remove?(self)
    }
}

/// A fuser registered as a loop's event source: connected while the loop runs,
/// disconnected when it stops, until the registration is disposed.
final class SourceSlot<Event>: _Disposable, @unchecked Sendable {
    let fuser: Fuser<Event>
    /// What each event becomes before it is queued, if anything (a binding's copy of an
    /// event its source only lends); its error goes back to the emitter.
    let keep: ((Event) throws -> Event)?
    private let lock = Lock()
    private var connection: Connection<Event>?
    /// The connection `end` took last, disposed or being disposed (see `end(joining:)`).
    private var ended: Connection<Event>?
    /// The session's action that disconnects `connection` when the run ends, dropped
    /// when the connection ends first.
    private var disconnectAction: (session: LoopSession<Event>, id: UInt64)?
    private var removed = false
    /// Takes the slot out of the loop's sources; set once registered.
    var remove: (() -> Void)?

    init(_ fuser: Fuser<Event>, keeping keep: ((Event) throws -> Event)?) {
        self.fuser = fuser
        self.keep = keep
    }

    var isRemoved: Bool { lock.withLock { removed } }

    /// Connects the fuser for `session`'s run; the session's end disconnects it. A
    /// source that refuses to connect leaves nothing of the fuser connected for this run
    /// (the next start tries again) and goes to the inspector as `sourceFailed`.
    ///
    /// The connection is the slot's before its sources connect, so that a dispose on
    /// another thread while they connect (the loop's turn runs this) ends it at once: no
    /// event of theirs is accepted once that dispose has returned, and they are
    /// disconnected once both their connect and the dispose are through (see
    /// `Connection.attach`), usually here, on the connecting thread. The dispose does
    /// not wait for them: a source's connect may wait for the disposing thread (a
    /// delivery of another source, whose transform disposes this registration, holding
    /// a lock the connect takes).
    func connect<Model, Effect>(in session: LoopSession<Event>, to core: LoopCore<Model, Event, Effect>) {
        if isRemoved { return }
        // Through the loop's paths, compiled for its types (see `LoopPaths`). The
        // connection holds the loop strongly (a weak reference would cost each event
        // two of the runtime's slow paths) and lets go of it when it is disposed, at
        // the latest when the run ends (the session's action below); a loop whose
        // owners let go of it ends its run (`Loop.deinit` disposes it).
        let paths = core.paths, keep = self.keep
        var kept = false
        do {
            _ = try fuser.tryConnect({ event in
                if let keep {
                    _ = paths.enqueue(core, try keep(event), nil, true)
                } else {
                    _ = paths.enqueue(core, event, nil, true)
                }
            }, afterDelivery: {
                paths.payDeferredDrain(core)
            }, aroundDelivery: { delivery in
                // A delivery runs the fuser's transforms, user code that may stop or
                // dispose the loop: as a callback of the run, so that such a close does
                // not wait for another thread's close, which waits for this delivery to
                // disconnect the source. Once the run has ended, the event is dropped.
                guard session.enter() else { return }
                defer { session.leave() }
                LoopDeliveries.enter()
                defer { LoopDeliveries.leave() }
                try delivery()
            }, whenMade: { made in
                kept = self.lock.withLock {
                    if self.removed { return false }
                    self.connection = made
                    return true
                }
                // Disposed already: the sources are disconnected once they connect.
                if !kept { made.dispose() }
            })
        } catch {
            // The connection has disposed itself; a dispose that took it meanwhile
            // finds it disposed.
            lock.withLock { connection = nil }
            core.report(.sourceFailed(error: error))
            return
        }
        if !kept { return }
        let id = session.onCancel { [weak self] in self?.disconnect() }
        if id == 0 { return } // the run has ended: the action ran already
        let disposed: Bool = lock.withLock {
            if removed { return true }
            disconnectAction = (session, id)
            return false
        }
        if disposed { session.removeAction(id) }
    }

    /// Disconnects the current run's connection, keeping the registration.
    func disconnect() {
        end(joining: false)
    }

    /// Ends the registration and disconnects.
    func dispose() {
        let first: Bool = lock.withLock {
            defer { removed = true }
            return !removed
        }
        end(joining: true)
        if first { remove?() }
    }

    /// Takes the connection and disposes it. `joining`, for a dispose of the
    /// registration: with no connection left to take, disposes the one taken last again
    /// (`Connection.disposeAgain()`). Its dispose may still be under way on another
    /// thread, waiting for a delivery in progress that has yet to reach user code; this
    /// one then waits the same way (or, from inside that delivery, ends it at once), so
    /// that no dispose of the registration returns while the connection may still
    /// deliver an event.
    private func end(joining: Bool) {
        let (current, again, action): (Connection<Event>?, Connection<Event>?, (session: LoopSession<Event>, id: UInt64)?) = lock.withLock {
            defer { (connection, disconnectAction) = (nil, nil) }
            if let connection { ended = connection }
            return (connection, joining && connection == nil ? ended : nil, disconnectAction)
        }
        current?.dispose()
        again?.disposeAgain()
        if let action { action.session.removeAction(action.id) }
    }
}
