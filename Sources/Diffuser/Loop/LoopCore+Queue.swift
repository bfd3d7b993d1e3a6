import Synchronization

/// What a queue entry holds beyond a plain event. Made only for entries that need it,
/// so that a plain event is queued without an allocation.
@usableFromInline
final class EntryDetails<Model, Event, Effect> {
    /// The job that sent the event (of an entry with a coalescing key: see
    /// `LoopCore.Entry.extra`).
    @usableFromInline var job: Job<Event>?
    /// The event's coalescing key.
    @usableFromInline var key: AnyHashable?
    /// The events this one replaced in the queue (kept only for the inspector).
    @usableFromInline var replaced: [Event] = []
    /// Whether the entry starts a run, from `first` or (nil) from the kept model.
    @usableFromInline var isStart = false
    @usableFromInline var first: First<Model, Effect>?
    /// Work on the loop's structures, and what to do if the loop is disposed first.
    @usableFromInline var control: ((LoopCore<Model, Event, Effect>, LoopSession<Event>?) -> Void)?
    @usableFromInline var dropped: (() -> Void)?

    @inlinable
    init(job: Job<Event>?, key: AnyHashable?) {
        self.job = job
        self.key = key
    }

    init(start first: First<Model, Effect>?) {
        isStart = true
        self.first = first
    }

    init(control: @escaping (LoopCore<Model, Event, Effect>, LoopSession<Event>?) -> Void, dropped: (() -> Void)?) {
        self.control = control
        self.dropped = dropped
    }
}

/// The queue: putting entries in and draining them. Inlinable, like a diffuser's nodes,
/// so that a loop's hot path is compiled for its model, event and effect types in the
/// client: unspecialized, every step would look up the metadata of the generic types it
/// touches.
extension LoopCore {
    /// Queues `event`; returns why it was refused, or nil. `deferring`: for an event
    /// delivered under another object's lock (a source's, under its connection's; a
    /// gear's, under its subscription's); a drain this event starts on the calling
    /// thread is owed by it (`debtor`) and run once the delivery is over
    /// (`payDeferredDrain`).
    @inlinable
    func enqueue(_ event: consuming Event, job: Job<Event>?, deferring: Bool = false) -> LoopError? {
        // User code (the key) runs before the lock is taken.
        if let coalescingKey, let key = coalescingKey(event) {
            return enqueue(event, job: job, key: key, deferring: deferring)
        }
        lock.lock()
        if status != .running || closer != 0 { return refusalLocked() }
        queue.append(Entry(event: event, job: job))
        scheduleLocked(deferring: deferring)
        return nil
    }

    /// Why events are refused now; releases the lock.
    @usableFromInline
    func refusalLocked() -> LoopError {
        let refusal: LoopError = status == .disposed || disposing ? .disposed : .stopped
        lock.unlock()
        return refusal
    }

    /// Queues `event` with its coalescing key: in place of the queued event with the
    /// same key, if there is one.
    @usableFromInline
    func enqueue(_ event: consuming Event, job: Job<Event>?, key: AnyHashable, deferring: Bool) -> LoopError? {
        lock.lock()
        if status != .running || closer != 0 { return refusalLocked() }
        // The event replaced, unless the inspector keeps it for its trace: released once
        // the lock is given back (after the drain, if this call drains), since what it
        // frees may use the loop.
        var released: Event?
        if let number = keyed[key], queue.contains(number: number),
           let details = queue[number: number].details, let old = queue[number: number].event.take() {
            if inspector != nil { details.replaced.append(old) } else { released = old }
            details.job = job
            queue[number: number].event = event
        } else {
            keyed[key] = queue.append(Entry(event: event, details: EntryDetails(job: job, key: key)))
        }
        scheduleLocked(deferring: deferring)
        // Not `_ = consume released`: the optimizer may release it before the unlock.
        withExtendedLifetime(released) {}
        return nil
    }

    /// Queues work on the loop's structures; false if the loop was disposed. Accepted
    /// while stopped: registrations then take effect at once, and the run's part of them
    /// at the next start. `dropped` runs instead of `body` if the loop is disposed
    /// first.
    @discardableResult
    func enqueueControl(
        _ body: @escaping (LoopCore, LoopSession<Event>?) -> Void,
        dropped: (() -> Void)? = nil
    ) -> Bool {
        lock.lock()
        if status == .disposed {
            lock.unlock()
            return false
        }
        queue.append(Entry(event: nil, details: EntryDetails(control: body, dropped: dropped)))
        scheduleLocked()
        return true
    }

    /// Starts a drain unless one is running or scheduled; releases the lock. A drain the
    /// calling thread would run itself (the caller's executor) is owed by it if
    /// `deferring` (see `debtor`). A thread that queues without deferring while the
    /// drain is owed (a `dispatch` from a transform of the delivery that made the debt,
    /// or from any other thread meanwhile) takes the debt over and runs the drain now:
    /// nobody is draining, the owing thread may be waiting for this one, and with the
    /// caller's executor the event is handled on return.
    @inlinable
    func scheduleLocked(deferring: Bool = false) {
        if draining {
            let takeOver = !deferring && drainer == 0 && debtor != 0
            if takeOver { debtor = 0 }
            lock.unlock()
            if takeOver { drain() }
            return
        }
        draining = true
        if deferring && drainsInline {
            debtor = loopThreadID()
            lock.unlock()
        } else {
            lock.unlock()
            runDrain()
        }
    }

    /// Runs the drain the calling thread owes, if it owes one: once a delivery that
    /// queued an event is over, unless the thread is still inside another delivery into
    /// a loop (of this loop or another: its lock is held), whose end pays it. Then pays
    /// the drains this thread owes to the loops whose deliveries were nested in this one.
    @inlinable
    func payDeferredDrain() {
        let me = loopThreadID()
        lock.lock()
        let owes = debtor != 0 && debtor == me
        if owes && LoopDeliveries.isInside {
            lock.unlock()
            LoopDeliveries.owe { [link] in link.loop?.payDeferredDrain() }
            return
        }
        if owes { debtor = 0 }
        lock.unlock()
        if owes { drain() }
        LoopDeliveries.payOwed()
    }

    /// Hands a drain to the executor (or runs it, for the caller's executor).
    ///
    /// The work reaches the loop through its `link`, not strongly: the loop holds its
    /// executor, and an executor holding work that held the loop would keep both alive
    /// forever once the loop's owners let go with work still queued (a manual executor
    /// nobody runs again). Once the loop's dispose has ended (its owners letting go of it
    /// disposes it), its drain has nothing to do, and the link has let go of it.
    @inlinable
    func runDrain() {
        if drainsInline {
            drain()
        } else {
            executor.execute { [link] in link.loop?.drain() }
        }
    }

    /// Handles queued entries, one at a time, until none is left (or `stepsPerRun`,
    /// after which the rest is handed to the executor again).
    @inlinable
    func drain() {
        while drainSome() {}
    }

    /// `drain()`'s work up to the first hand-back. True if the executor ran the handed
    /// back drain at once, inside `execute` on this thread (an executor that runs work
    /// "now"): that drain only said so, and this thread's `drain()` goes on instead, so
    /// that the stack does not grow by a level for every `stepsPerRun` entries.
    @inlinable
    func drainSome() -> Bool {
        let me = loopThreadID()
        lock.lock()
        drainer = me
        var steps = 0
        while !queue.isEmpty && status != .disposed {
            if steps == stepsPerRun {
                drainer = 0
                wakeWaitersLocked()
                let handBack = HandBack(thread: me)
                executor.execute { [link] in
                    guard handBack.runsInline() else {
                        link.loop?.drain()
                        return
                    }
                    // This thread drains on once `execute` returns: from now on a close
                    // made inside `execute` comes from the drainer and must not wait.
                    link.loop?.resumeDraining(on: me)
                }
                return handBack.executeReturned()
            }
            steps += 1
            let number = queue.firstNumber
            let entry = queue.popFirst()!
            if !keyed.isEmpty, let details = entry.details, let key = details.key, keyed[key] == number {
                keyed.removeValue(forKey: key)
            }
            let session = self.session
            lock.unlock()
            process(consume entry, session)
            lock.lock()
        }
        draining = false
        drainer = 0
        let release = status == .disposed && structuresLive
        if release { structuresLive = false }
        wakeWaitersLocked()
        if release { clearStructures() }
        return false
    }

    /// Marks `thread`, whose handed-back drain ran at once inside `execute`, as the
    /// drainer again.
    @usableFromInline
    func resumeDraining(on thread: UInt) {
        lock.lock()
        drainer = thread
        lock.unlock()
    }

    @inlinable
    func process(_ entry: consuming Entry, _ session: LoopSession<Event>?) {
        guard let event = entry.event.take() else {
            processOther(entry, session)
            return
        }
        // A job's event: one cast, and no array of replaced events to read.
        if let extra = entry.extra {
            let job: Job<Event>?
            if let sender = extra as? Job<Event> {
                job = sender
            } else {
                let details = unsafeDowncast(extra, to: EntryDetails<Model, Event, Effect>.self)
                for old in details.replaced { report(.dropped(event: old, reason: .coalesced)) }
                job = details.job
            }
            if let job, job.isCancelled {
                report(.dropped(event: event, reason: .cancelledWork))
                return
            }
        }
        guard let session, !session.isCancelled else {
            report(.dropped(event: event, reason: .stopped))
            return
        }
        step(event, session)
    }

    /// A start, or work on the structures.
    @usableFromInline
    func processOther(_ entry: Entry, _ session: LoopSession<Event>?) {
        guard let details = entry.details else { return }
        if details.isStart {
            guard let session, !session.isCancelled else { return }
            begin(details.first, session)
        } else {
            details.control?(self, session)
        }
    }
}

/// A drain handed back to the executor: whether the executor ran it inside `execute`,
/// on the thread that handed it over.
@usableFromInline
final class HandBack: @unchecked Sendable {
    @usableFromInline let thread: UInt
    /// 0 while `execute` runs, 1 once the work ran inside it, 2 once `execute` returned.
    @usableFromInline let state = Atomic<Int>(0)

    @inlinable
    init(thread: UInt) {
        self.thread = thread
    }

    /// Called by the work: true if it runs inside `execute` on the handing thread, and
    /// leaves the drain to that thread's `drain()`.
    @inlinable
    func runsInline() -> Bool {
        loopThreadID() == thread && state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    }

    /// Called once `execute` returned: whether the work ran inside it.
    @inlinable
    func executeReturned() -> Bool {
        state.exchange(2, ordering: .acquiringAndReleasing) == 1
    }
}

/// The calling thread's identity, for the inlinable parts of the loop.
@usableFromInline
func loopThreadID() -> UInt {
    currentThreadID()
}
