/// A broadcast of events: Minimalist's `Signal` (RxSwift's `PublishRelay`, Combine's
/// `PassthroughSubject`).
///
/// ```swift
/// let didReceiveMessage = Signal<Message>()
/// didReceiveMessage.observe(with: self) { me, message in … }
/// didReceiveMessage.send(message)
/// ```
///
/// Unlike a `Property` it holds no value: an observer hears of the events sent after
/// it subscribed. Events reach observers one at a time, in the order sent; an event
/// sent from inside an observer, or from another thread meanwhile, is delivered after
/// the one in progress, by the thread delivering it (whose `send` therefore does not
/// return while other threads keep sending). Errors thrown by a `subscribe` receiver
/// are discarded.
public final class Signal<Value>: Subscribable {
    @usableFromInline let broadcast = Broadcast<Value>()

    /// A signal with no observer.
    public init() {}

    /// Delivers `value` to every observer.
    @inlinable
    public func send(_ value: Value) {
        broadcast.send(value)
    }

    public func subscribe(_ receiver: @escaping (Value) throws -> Void) -> _Disposable {
        broadcast.subscribe(receiver)
    }
}

extension Signal where Value == Void {
    /// Delivers `()` to every observer.
    @inlinable
    public func send() {
        broadcast.send(())
    }
}

/// A signal may be shared between tasks when its values may.
extension Signal: @unchecked Sendable where Value: Sendable {}
