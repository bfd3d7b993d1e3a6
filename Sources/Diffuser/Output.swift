/// A type that exposes its events through an `Output`, so that a fuser can be made
/// from it with `Fuser.fromFuseable(_:)`.
public protocol Fuseable {
    /// The type of event this value produces.
    associatedtype Event

    /// The hub through which the events are sent.
    var output: Output<Event> { get }
}

/// A hub: every event passed to `send(_:)` reaches every effect connected through
/// `fuser` at that moment. (An output is not a `Source`: compose `output.fuser`.)
///
/// Connecting and sending may happen on any thread. Effects are called in the order
/// they connected, on the thread that sends: an output of `Sendable` events is
/// `Sendable`, and the compiler does not check that the connected effects may run there.
/// An effect that sends into the same output sends at once, nested in the send in
/// progress: every effect, the sender too (inside its own call), gets the new event
/// then, so effects connected after the sender get it before the one that caused it,
/// and an effect that sends on every event never returns. (A `Property` or `Signal` delivers such an event after the one in progress.)
public final class Output<Event> {
    @usableFromInline let lock = InlineLock()
    @usableFromInline var sinks: [(id: UInt64, sink: (Event) throws -> Void)] = []
    private var nextID: UInt64 = 0

    /// Creates a hub with no connections.
    public init() {}

    /// Sends `event` to every connected effect.
    ///
    /// Errors of effects built with the `throwing:` variants are discarded; use
    /// `trySend(_:)` to see the first one.
    @inlinable
    public func send(_ event: Event) {
        try? trySend(event)
    }

    /// Sends `event` to every connected effect, then rethrows the first error one of
    /// them threw. Every effect receives the event even if an earlier one failed.
    ///
    /// Inlinable, so that sending is compiled for the event's type where it is called:
    /// compiled once for every type, each send would look up the metadata of the sinks'
    /// array.
    @inlinable
    public func trySend(_ event: Event) throws {
        lock.lock()
        let snapshot = sinks
        lock.unlock()
        var failure: Error?
        for entry in snapshot {
            do {
                try entry.sink(event)
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// A fuser whose connections receive the events sent to this hub.
    public var fuser: Fuser<Event> {
        Fuser(tryConnector: { [self] sink in
            lock.lock()
            nextID += 1
            let id = nextID
            sinks.append((id, sink))
            lock.unlock()
            return AnonymousDisposable { [weak self] in
                guard let self else { return }
                self.lock.lock()
                let removed = self.sinks.firstIndex { $0.id == id }.map { self.sinks.remove(at: $0) }
                self.lock.unlock()
                // Released once the lock is given back: what the sink holds (a connection's
                // transforms, what they capture) may send into this output when freed.
                withExtendedLifetime(removed) {}
            }
        })
    }
}

/// An output may be shared between tasks when its events may: each reaches the effects on
/// the sending thread.
extension Output: @unchecked Sendable where Event: Sendable {}
