import Synchronization

extension LoopCore {
    // MARK: Inspection

    /// Hands `trace` to the inspector, one call at a time; makes nothing without one.
    @inlinable
    func report(_ trace: @autoclosure () -> Trace) {
        if inspector != nil { inspect(trace()) }
    }

    @usableFromInline
    func inspect(_ trace: Trace) {
        guard let inspector else { return }
        let me = currentThreadID()
        if inspectorCaller.load(ordering: .acquiring) == me {
            inspector(trace)
            return
        }
        inspectorLock.lock()
        inspectorCaller.store(me, ordering: .releasing)
        defer {
            inspectorCaller.store(0, ordering: .releasing)
            inspectorLock.unlock()
        }
        inspector(trace)
    }
}
