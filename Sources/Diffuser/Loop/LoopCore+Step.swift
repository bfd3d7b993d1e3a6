/// What a loop does on the entries of its queue: start a run, and step on an event.
///
/// Everything here runs on the drainer, one entry at a time. Between callbacks a step
/// looks at its session: once the run was stopped or disposed (from inside a callback
/// of this very step), nothing more is called.
extension LoopCore {
    /// Starts a run: the model of `first` (or, on a restart, of `restart(model)`, or the
    /// kept model) is stored and published, the start effects are handled, and the
    /// sources are connected.
    func begin(_ given: First<Model, Effect>?, _ session: LoopSession<Event>) {
        let first = given ?? restart?(model) ?? First(model)
        if session.isCancelled { return }
        report(.started(first))
        if session.isCancelled { return }
        journal?.recordStart(first.model)
        // The kept model, replaced, is released here, outside the lock.
        _ = store(first.model)
        for case .feedback(let entry) in subscribers where !entry.isRemoved {
            entry.reactor = entry.feedback.start(session)
        }
        publish(first.model, session)
        handle(first.effects, session)
        sources.removeAll { $0.isRemoved }
        for slot in sources where !session.isCancelled { slot.connect(in: session, to: self) }
    }

    /// One step: update, store the model, publish it to observers and feedbacks in
    /// registration order, then hand the effects to the handlers in list order. The
    /// model the step replaced is released last, once the handlers returned: what its
    /// last reference frees (a deinit, a C type's release) is user code, which never
    /// comes between the calls of a step; a release that stops the loop does not cut
    /// the step short.
    ///
    /// An update that stops or disposes its loop ends the step there: its outcome still
    /// reaches the inspector (the event's one trace, right after the stop or dispose),
    /// but nothing of the step happens: no model is stored, nothing is published or
    /// handled, and the journal does not record the event (a replay re-derives the
    /// models the loop published).
    @inlinable
    func step(_ event: Event, _ session: LoopSession<Event>) {
        // The model is lent where it lies: nothing stores a model during the update.
        var next: Next<Model, Effect>
        do {
            next = try withBorrowed(modelCell) { try update.next($0, event) }
        } catch {
            if !session.isCancelled { journal?.record(event) }
            report(.failed(event: event, model: model, error: error))
            return
        }
        report(.stepped(event: event, model: model, next: next))
        if session.isCancelled { return }
        journal?.record(event)
        var replaced: Model?
        if let newModel = next._model.take() {
            replaced = store(consume newModel)
            publishModel(session)
        }
        handle(next.effects, session)
        _ = consume replaced
    }

    /// Hands the stored model, where it lies, to every observer and feedback.
    @inlinable
    func publishModel(_ session: LoopSession<Event>) {
        if subscribers.isEmpty { return }
        // Only the drainer stores a model, and it is busy here.
        withBorrowed(modelCell) { publish($0, session) }
    }

    /// Hands `model` to every observer and feedback, in registration order.
    @inlinable
    func publish(_ model: Model, _ session: LoopSession<Event>) {
        var sawRemoved = false
        for subscriber in subscribers {
            if session.isCancelled { return }
            switch subscriber {
            case .observer(let subscription):
                if subscription.isClosed {
                    sawRemoved = true
                    continue
                }
                deliver(model, to: subscription)
            case .feedback(let entry):
                if entry.isRemoved {
                    sawRemoved = true
                    continue
                }
                inform(entry, of: model)
            }
        }
        if sawRemoved { subscribers.removeAll { $0.isRemoved } }
    }

    /// Hands `model` to one feedback; what its request threw goes to the inspector.
    @inlinable
    func inform(_ entry: FeedbackEntry<Model, Event>, of model: Model) {
        do {
            try entry.receive(model)
        } catch {
            report(.feedbackFailed(error: error))
        }
    }

    /// Calls one observer; an error it throws goes to the inspector.
    @inlinable
    func deliver(_ model: Model, to subscription: Subscription<Model>) {
        do {
            try subscription.deliver(model)
        } catch {
            report(.observerFailed(error: error))
        }
    }

    /// Hands each effect to every handler: effects in order, and for each effect the
    /// handlers in order. A handler with an executor is handed the work, which runs
    /// there as a callback of the session.
    @inlinable
    func handle(_ effects: [Effect], _ session: LoopSession<Event>) {
        for effect in effects {
            // By index: a copy of each handler would copy its executor, an existential,
            // through the runtime's value witnesses.
            for index in handlers.indices {
                if session.isCancelled { return }
                if let handleNow = handlers[index].handleNow {
                    do {
                        try handleNow(effect) { Job(session: session) }
                    } catch {
                        report(.effectFailed(effect: effect, error: error))
                    }
                } else {
                    guard let work = handlers[index].prepare(effect) else { continue }
                    let job = Job(session: session)
                    // Neither strongly (the loop holds this executor, which may hold the
                    // work forever) nor weakly (a weak reference gives the loop a side
                    // table, and every retain of it, at each event a job sends, then
                    // takes the runtime's slow path). A handler without `handleNow` has
                    // an executor, so the work runs there as a callback of `session`
                    // (`launch`): only if the session has not ended, and the session
                    // holds the loop until the callbacks in progress at its end have
                    // returned (`LoopSession.pauser`).
                    launch(job, on: handlers[index].executor) { [unowned self] in
                        do {
                            try work(job)
                        } catch {
                            report(.effectFailed(effect: effect, error: error), fromCallbackOf: session)
                        }
                    }
                }
            }
        }
    }
}
