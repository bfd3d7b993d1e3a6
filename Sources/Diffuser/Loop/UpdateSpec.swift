/// A test of an update alone: given a model, when events happen, then this model and
/// these effects (Mobius's `UpdateSpec`).
///
/// ```swift
/// let spec = UpdateSpec(update)
/// try spec.given(LoginModel()).when(.loginClicked).then(
///     model: LoginModel(loading: true),
///     effects: [.login]
/// )
/// spec.given(model).when(.a, .b).then { outcome in
///     XCTAssertEqual(outcome.models.count, 2)
/// }
/// ```
///
/// Events are applied in order, each to the model the previous one left, exactly as a
/// loop would: an update that throws leaves the model unchanged, and the next event
/// goes on from it. The checks throw `UpdateSpec.Mismatch`, whose description says
/// what differed; no test framework is needed.
public struct UpdateSpec<Model, Event, Effect> {
    /// The update under test.
    public let update: Update<Model, Event, Effect>

    /// A spec of `update`.
    public init(_ update: Update<Model, Event, Effect>) {
        self.update = update
    }

    /// The model the events will start from.
    public func given(_ model: Model) -> Given {
        Given(update: update, model: model)
    }

    /// A model the update will be given events in (made by `given(_:)`).
    public struct Given {
        let update: Update<Model, Event, Effect>
        let model: Model

        /// Applies `events` in order.
        public func when(_ events: Event...) -> Outcome {
            when(events)
        }

        /// Applies `events` in order.
        public func when(_ events: [Event]) -> Outcome {
            var current = model
            var steps: [Step] = []
            for event in events {
                do {
                    let next = try update.next(current, event)
                    steps.append(Step(event: event, model: current, result: .success(next)))
                    if let newModel = next.model { current = newModel }
                } catch {
                    steps.append(Step(event: event, model: current, result: .failure(error)))
                }
            }
            return Outcome(initial: model, steps: steps, model: current)
        }
    }

    /// One event's step: the model it met and what the update made of it.
    public struct Step {
        /// The event of the step.
        public let event: Event
        /// The model the event met.
        public let model: Model
        /// What the update returned, or the error it threw.
        public let result: Result<Next<Model, Effect>, Error>
    }

    /// What the events did.
    public struct Outcome {
        /// The model given.
        public let initial: Model
        /// One step per event, in order.
        public let steps: [Step]
        /// The model after the last event.
        public let model: Model

        /// Every effect, in the order the steps made them.
        public var effects: [Effect] {
            steps.flatMap { step -> [Effect] in
                if case .success(let next) = step.result { return next.effects }
                return []
            }
        }

        /// Every new model, in order (a step without one adds none).
        public var models: [Model] {
            steps.compactMap { step -> Model? in
                if case .success(let next) = step.result { return next.model }
                return nil
            }
        }

        /// What the last event's update returned, or nil if it threw (or no event).
        public var lastNext: Next<Model, Effect>? {
            guard case .success(let next)? = steps.last?.result else { return nil }
            return next
        }

        /// The errors the update threw, in order.
        public var errors: [Error] {
            steps.compactMap { step -> Error? in
                if case .failure(let error) = step.result { return error }
                return nil
            }
        }

        /// Runs `check` on the outcome; for assertions of any kind.
        @discardableResult
        public func then(_ check: (Outcome) throws -> Void) rethrows -> Outcome {
            try check(self)
            return self
        }

        /// Throws unless no update threw.
        @discardableResult
        public func thenNoError() throws -> Outcome {
            if let error = errors.first { throw Mismatch("expected no error, the update threw \(error)") }
            return self
        }
    }

    /// What an `Outcome` check found different.
    public struct Mismatch: Error, CustomStringConvertible {
        /// What differed.
        public let description: String

        /// A mismatch described by `description`.
        public init(_ description: String) {
            self.description = description
        }
    }
}

extension UpdateSpec.Outcome where Model: Equatable {
    /// Throws unless the final model is `expected`.
    @discardableResult
    public func then(model expected: Model) throws -> Self {
        if model != expected {
            throw UpdateSpec.Mismatch("expected the model \(expected), got \(model)")
        }
        return self
    }
}

extension UpdateSpec.Outcome where Effect: Equatable {
    /// Throws unless the effects of every step, in order, are `expected`.
    @discardableResult
    public func then(effects expected: [Effect]) throws -> Self {
        if effects != expected {
            throw UpdateSpec.Mismatch("expected the effects \(expected), got \(effects)")
        }
        return self
    }
}

extension UpdateSpec.Outcome where Model: Equatable, Effect: Equatable {
    /// Throws unless the final model is `model` and the effects of every step are
    /// `effects`.
    @discardableResult
    public func then(model: Model, effects: [Effect]) throws -> Self {
        try then(model: model)
        return try then(effects: effects)
    }
}
