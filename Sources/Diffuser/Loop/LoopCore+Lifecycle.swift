import Synchronization

/// A loop's lifecycle: starting a run, and closing it (stop and dispose), as the type's
/// documentation describes (`LoopCore`, "Closing").
extension LoopCore {
    /// Starts a run if the loop is stopped: nil if it is running afterwards (once the
    /// start's drain, if this thread ran it, returned), else why not: disposed or being
    /// disposed, or stopped (again, by a callback of the start or another thread, or
    /// being stopped).
    @discardableResult
    func start() -> LoopError? {
        let me = currentThreadID()
        let canWait = canWaitForWork
        lock.lock()
        while closer != 0 && closer != me && drainer != me {
            // A callback of the run being closed must not wait for the close, which
            // waits for it; nor the executor's own thread for a close that waits for a
            // drain this thread has yet to run.
            if inRunCallbackLocked(me) || closerWaitsForThisThreadLocked(canWait) { break }
            waitLocked()
        }
        guard status == .stopped, closer == 0, !disposing else { return runningLocked() }
        status = .running
        // Strongly: the session lets go of the loop when it ends (see `LoopSession`).
        let run = LoopSession<Event> { event, job, deferring in self.paths.enqueue(self, event, job, deferring) == nil }
        run.pauser = { waitingFor, wait in self.pausingDrain(waitingFor: waitingFor, wait) }
        run.payDebt = { self.paths.payDeferredDrain(self) }
        session = run
        queue.pushFront(Entry(event: nil, details: EntryDetails(start: pendingFirst)))
        pendingFirst = nil
        scheduleLocked()
        lock.lock()
        return runningLocked()
    }

    /// nil if the loop accepts events, else why not; releases the lock.
    private func runningLocked() -> LoopError? {
        if status == .running && closer == 0 {
            lock.unlock()
            return nil
        }
        return refusalLocked()
    }

    /// Stops (`.stopped`) or disposes (`.disposed`) the loop. See the type's
    /// documentation.
    func close(to target: Status) {
        let me = currentThreadID()
        let canWait = canWaitForWork
        lock.lock()
        // A drain a source's delivering thread owes: a close waits for the events
        // accepted before it, and the owing thread may be this one (a close from a
        // transform of that delivery) or wait for it, so this thread takes the debt over
        // and runs the drain first.
        if draining && drainer == 0 && debtor != 0 {
            debtor = 0
            lock.unlock()
            drain()
            lock.lock()
        }
        if target == .disposed { disposing = true }
        // A dispose from a callback of this thread's own stop (an on-cancel action, a
        // source's disconnect, the inspector hearing a drop) does its work nested in that
        // stop, which then ends its own: the stop stays the closer until then, so that a
        // close on another thread waits for both.
        let outerClose = closer == me ? (closer, closingSession) : nil
        // The close this one takes the place of (it waits for this thread's drain), or 0.
        var replaced: UInt = 0
        // Whether a close from the drainer's step took this one's place while it waited,
        // and the run this one meant to end.
        var wasReplaced = false
        var meantToEnd: LoopSession<Event>?
        while true {
            let otherCloser = closer != 0 && closer != me
            // Nothing left to do. A stop from a callback of this thread's own close
            // (closer == me) returns at once too: that close does the work, and must stay
            // the closer until it ends.
            if !otherCloser && (status == .disposed || (status == .stopped && target == .stopped)) {
                // The close that took this one's place came from a step: let that step
                // end, and the run's callbacks on other threads, as this close would
                // have waited for them.
                while wasReplaced && drainer != 0 && drainer != me && status != .running { waitLocked() }
                lock.unlock()
                if wasReplaced { meantToEnd?.awaitCallbacks() }
                return
            }
            if otherCloser {
                if closerWaitsForDrain && (drainer == me || closerWaitsForThisThreadLocked(canWait)) {
                    // That close waits for a drain that this thread runs (from its step)
                    // or must run (the executor's own thread, busy with this call): this
                    // one takes its place, and must not wait for its callback, if it is
                    // one.
                    replaced = closer
                } else if drainer == me || inRunCallbackLocked(me) || inspectorCaller.load(ordering: .acquiring) == me {
                    // A callback of the run it ends, a step of this thread's drain, or
                    // the inspector (which its traces need), must not wait for it (it may
                    // wait for them): that close does the work, a dispose included.
                    if target == .disposed { disposeWhenClosed = true }
                    lock.unlock()
                    return
                } else {
                    // Otherwise let it finish, then look again.
                    waitLocked()
                    continue
                }
            }
            closer = me
            closerWaitsForDrain = false
            closerWaitsForQueuedDrain = false
            if meantToEnd == nil { meantToEnd = session }
            // Let the drain handle the events accepted so far; unless this thread is in
            // the inspector, which the drain needs for its traces, or in a callback the
            // drain waits for.
            if drainer != me && draining && (drainer != 0 || canWait)
                && inspectorCaller.load(ordering: .acquiring) != me && !drainWaitsForLocked(me) {
                closerWaitsForDrain = true
                closerWaitsForQueuedDrain = drainer == 0
                waitLocked()
                if closer == me {
                    closerWaitsForDrain = false
                    closerWaitsForQueuedDrain = false
                } else {
                    wasReplaced = true
                }
                continue
            }
            break
        }
        // Nothing is being drained now except by this very thread, if the close comes
        // from inside a step, or by a drainer this close did not wait for (it comes from
        // the inspector, or from a callback that drainer waits for): that drainer ends
        // the turn it is in, finds no event of the run left, and releases the structures
        // if this close disposes (`clearNow` is false while it drains).
        // Events, and a start not yet made (it belongs to the run that ends), go; so
        // does everything else on a dispose. Registrations stay for the next run.
        let removed = queue.removeAll { entry in
            target == .disposed || entry.details?.control == nil
        }
        var startWasPending = false
        for entry in removed where entry.details?.isStart == true {
            startWasPending = true
            if let first = entry.details?.first { pendingFirst = first }
        }
        keyed.removeAll()
        let ending = session
        session = nil
        closingSession = ending ?? outerClose?.1
        let wasRunning = status == .running
        status = target
        let lastModel = model
        let clearNow = target == .disposed && drainer == 0 && structuresLive
        if clearNow { structuresLive = false }
        lock.unlock()

        let reason: LoopDropReason = target == .disposed ? .disposed : .stopped
        for entry in removed {
            for old in entry.details?.replaced ?? [] { report(.dropped(event: old, reason: .coalesced)) }
            if let event = entry.event { report(.dropped(event: event, reason: reason)) }
            entry.details?.dropped?()
        }
        ending?.cancel(sparing: replaced)
        // A dispose from a callback of this stop (an on-cancel action, a source's
        // disconnect) has reported DISPOSED and returned: nothing is reported after it.
        let disposedMeanwhile = target == .stopped && currentStatus == .disposed
        if (wasRunning && !startWasPending && !disposedMeanwhile) || target == .disposed {
            report(target == .disposed ? .disposed(model: lastModel) : .stopped(model: lastModel))
        }
        if clearNow { clearStructures() }

        lock.lock()
        closer = outerClose?.0 ?? 0
        closingSession = outerClose?.1
        let disposeNow = disposeWhenClosed && target == .stopped
        disposeWhenClosed = false
        // Registrations queued while stopping wait for a drain.
        let schedule = target == .stopped && !queue.isEmpty && !draining && !disposeNow
        if schedule { draining = true }
        // The dispose has ended (nested in no close of this thread): the loop takes no
        // more work and has no run left, so the registrations let go of it.
        let ended = status == .disposed && closer == 0
        wakeWaitersLocked()
        if schedule { runDrain() }
        if disposeNow { close(to: .disposed) }
        if ended { link.cut() }
    }

    /// Runs `wait`, for the thread `waitingFor` names, with the calling thread's own
    /// callback of the run, if it is in one, not waited for by that thread's close (it
    /// would wait for itself: see `LoopSession.pausingCallback`).
    func pausingRunCallback(waitingFor: @escaping () -> UInt, _ wait: () -> Void) {
        lock.lock()
        let run = session ?? closingSession
        lock.unlock()
        if let run { run.pausingCallback(waitingFor: waitingFor, wait) } else { wait() }
    }

    /// Runs `wait`, a wait of the calling thread for a callback of the run in progress
    /// on the thread `waitingFor` names (the loop's turn removing an attached feedback
    /// waits for its propagate). From the drainer, a close from that thread does not
    /// wait for the drain meanwhile, which waits for it: like one from the inspector, it
    /// drops the events not yet handled and returns, and the drain goes on once the
    /// callback has returned. From a callback of the run, as `pausingRunCallback`.
    func pausingDrain(waitingFor: @escaping () -> UInt, _ wait: () -> Void) {
        let me = currentThreadID()
        lock.lock()
        let isDrainer = drainer == me
        if isDrainer {
            drainWaitingFor = waitingFor
            // A close from that thread may be waiting for the drain already.
            wakeWaitersLocked()
        } else {
            lock.unlock()
        }
        pausingRunCallback(waitingFor: waitingFor, wait)
        if isDrainer {
            lock.lock()
            drainWaitingFor = nil
            lock.unlock()
        }
    }

    /// Whether the drainer waits for the calling thread's callback (see
    /// `pausingDrain`). With the lock held.
    private func drainWaitsForLocked(_ me: UInt) -> Bool {
        drainer != 0 && drainWaitingFor?() == me
    }

    /// Whether the calling thread runs a callback of the current run, or of the run
    /// being closed. With the lock held.
    private func inRunCallbackLocked(_ me: UInt) -> Bool {
        (session ?? closingSession)?.hasCallback(on: me) ?? false
    }

    /// Releases what the loop holds once it is disposed: observers (closing them, so
    /// that cycles through their receivers break), feedbacks and sources. Called by the
    /// last drainer, or by `dispose` when no drain was running.
    @usableFromInline
    func clearStructures() {
        let old = subscribers
        let oldSources = sources
        subscribers = []
        sources = []
        for subscriber in old {
            if case .observer(let subscription) = subscriber { subscription.dispose() }
        }
        for slot in oldSources { slot.dispose() }
    }

    /// Whether this thread must not wait for the closer: it waits for a queued drain
    /// that this thread, the executor's own, has yet to run (`canWait`: see
    /// `canWaitForWork`). With the lock held.
    private func closerWaitsForThisThreadLocked(_ canWait: Bool) -> Bool {
        closerWaitsForQueuedDrain && draining && drainer == 0 && !canWait
    }

    /// Whether the calling thread may wait for work handed to the executor. Asked by a
    /// start or a close before it takes the lock: the executor's answer is its own code,
    /// which may use the loop. (The caller's executor always may, and is not asked.)
    private var canWaitForWork: Bool {
        drainsInline || executor.canWaitForWork
    }
}
