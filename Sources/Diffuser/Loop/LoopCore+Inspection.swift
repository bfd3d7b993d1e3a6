import Synchronization

extension LoopCore {
    // MARK: Inspection

    /// Hands `trace` to the inspector, one call at a time; makes nothing without one.
    @inlinable
    func report(_ trace: @autoclosure () -> Trace) {
        if inspector != nil { inspect(trace()) }
    }

    /// Hands `trace`, made by a callback of `session` on a thread other than the
    /// drainer's (a handler on its own executor), to the inspector. While the thread
    /// waits for another thread's inspector call, it does not count as being in that
    /// callback: the inspector may be stopping the loop, which waits for the callbacks
    /// of the run in progress on other threads.
    @usableFromInline
    func report(_ trace: Trace, fromCallbackOf session: LoopSession<Event>) {
        if inspector != nil { inspect(trace, outside: session) }
    }

    /// Hands `trace` to the inspector, one call at a time. A thread that waits for
    /// another thread's inspector call is not waited for, meanwhile, in its callback of
    /// the run, if any (`session`'s, or else the run's: a drain that a handler's send
    /// runs inside that handler, on its thread), by a stop or dispose from the thread in
    /// the inspector, which runs inside that inspector call and would wait for itself.
    @usableFromInline
    func inspect(_ trace: Trace, outside session: LoopSession<Event>? = nil) {
        guard let inspector else { return }
        let me = currentThreadID()
        if inspectorCaller.load(ordering: .acquiring) == me {
            inspector(trace)
            return
        }
        if !inspectorLock.tryLock() {
            let holder = { [self] in inspectorCaller.load(ordering: .acquiring) }
            if let session {
                session.pausingCallback(waitingFor: holder) { inspectorLock.lock() }
            } else {
                pausingRunCallback(waitingFor: holder) { inspectorLock.lock() }
            }
        }
        inspectorCaller.store(me, ordering: .releasing)
        defer {
            inspectorCaller.store(0, ordering: .releasing)
            inspectorLock.unlock()
        }
        inspector(trace)
    }
}
