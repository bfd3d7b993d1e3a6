/// Spin's mediator between loops: a bus of gear events that feedbacks of one loop push
/// from its models and feedbacks of another loop turn into their own events.
///
/// ```swift
/// let gear = Gear<AuthEvent>()
/// // The feature loop pushes when its model says the user is unauthorized…
/// let feature = Loop(…, feedbacks: [.pushing(to: gear) { $0.unauthorized ? .authorizationIssue : nil }])
/// // …and the routing loop turns that into a check of its own.
/// let routing = Loop(…, feedbacks: [.attached(to: gear) { $0 == .authorizationIssue ? .checkAuthorization : nil }])
/// ```
///
/// A gear event pushed during a step reaches the other loops as dispatched events:
/// queued there, handled on their turn. A loop hears a gear only while it runs. Events
/// sent from several threads reach the loops one at a time, in the order sent, each
/// delivered by the thread delivering when it was sent (as a `Signal`'s), whose `send`
/// does not return while other threads keep sending.
///
/// Sending and the gear's feedbacks are inlinable, so that they are compiled for the
/// event and model types where they are used, as `Signal`'s sending is.
public final class Gear<GearEvent>: Subscribable {
    @usableFromInline let signal = Signal<GearEvent>()

    /// A gear with no loop attached.
    public init() {}

    /// Pushes `event` to every loop attached to the gear.
    @inlinable
    public func send(_ event: GearEvent) {
        signal.send(event)
    }

    public func subscribe(_ receiver: @escaping (GearEvent) throws -> Void) -> _Disposable {
        signal.subscribe(receiver)
    }
}

extension Feedback {
    /// A feedback that pushes into `gear` the gear event `propagate` makes of a model,
    /// if any (Spin's `Feedback(attachedTo:propagating:)` from states).
    @inlinable
    public static func pushing<GearEvent>(
        to gear: Gear<GearEvent>,
        _ propagate: @escaping (Model) -> GearEvent?
    ) -> Feedback {
        Feedback { _ in
            FeedbackReactor(receive: { model in if let event = propagate(model) { gear.send(event) } }, stop: {})
        }
    }

    /// A feedback that pushes `event` into `gear` on every model equal to `model`
    /// (Spin's `Feedback(attachedTo:catching:propagating:)`).
    @inlinable
    public static func pushing<GearEvent>(
        to gear: Gear<GearEvent>,
        catching model: Model,
        propagating event: GearEvent
    ) -> Feedback where Model: Equatable {
        pushing(to: gear) { $0 == model ? event : nil }
    }

    /// A feedback that turns the gear events of `gear` into events of this loop, while
    /// the loop runs (Spin's `Feedback(attachedTo:propagating:)` from gear events).
    /// Events arrive in the loop's queue like dispatched ones. `propagate` runs on the
    /// thread that sends into the gear, as a callback of the loop's run (a stop or
    /// dispose from it behaves as from any callback); a gear event sent once the run has
    /// ended is dropped unseen. With the caller's executor, an event `propagate` makes
    /// while the loop is idle is handled on the sending thread once `propagate` has
    /// returned, outside the gear's lock and before the gear moves on to its next loop;
    /// inside a delivery of a loop's source (or another gear's `propagate`), once the
    /// outermost one is over. (While the loop drains, the event waits its turn in the
    /// queue, as a dispatched one does.)
    @inlinable
    public static func attached<GearEvent>(
        to gear: Gear<GearEvent>,
        _ propagate: @escaping (GearEvent) -> Event?
    ) -> Feedback {
        Feedback { session in
            // The loop's turn that removes this feedback waits for a propagate in
            // progress: a close from that propagate must not wait for that turn (the
            // session's `pause`; typed, so that the subscription is surely one that uses
            // it).
            // The drain an event starts is deferred to after the delivery, outside the
            // subscription's lock (`afterDelivery`), as a source's is: a stop from the
            // inspector, which the drain's traces wait for, disconnects the gear, which
            // waits for that lock.
            let subscription = gear.signal.broadcast.subscribe({ gearEvent in
                // `propagate` runs on the sending thread, user code that may stop,
                // dispose or start the loop: as a callback of the run, so that such a
                // call does not wait for another thread's close, which waits for this
                // delivery to disconnect the gear. Once the run has ended, the gear
                // event is dropped, as a source's event is.
                guard session.enter() else { return }
                defer { session.leave() }
                LoopDeliveries.enter()
                defer { LoopDeliveries.leave() }
                if let event = propagate(gearEvent), !session.isCancelled {
                    _ = session.enqueue(event, nil, deferring: true)
                }
            }, pausing: { waitingFor, wait in session.pause(waitingFor: waitingFor, wait) },
               afterDelivery: session.debtPayer)
            let action = session.onCancel { subscription.dispose() }
            return FeedbackReactor(receive: { _ in }, stop: {
                subscription.dispose()
                session.removeAction(action)
            })
        }
    }

    /// A feedback that dispatches `event` into this loop whenever `gear` carries
    /// `gearEvent` (Spin's `Feedback(attachedTo:catching:emitting:)`).
    @inlinable
    public static func attached<GearEvent: Equatable>(
        to gear: Gear<GearEvent>,
        catching gearEvent: GearEvent,
        emitting event: Event
    ) -> Feedback {
        attached(to: gear) { $0 == gearEvent ? event : nil }
    }
}

/// A gear may be shared between tasks when its events may: they reach the attached loops
/// from the sending thread.
extension Gear: @unchecked Sendable where GearEvent: Sendable {}
