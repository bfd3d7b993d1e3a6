/// Something that produces events and can be listened to: a button's taps, a text
/// field's edits, a timer.
///
/// `connect` starts delivering events to `effect` and returns the disposable that stops
/// it. A source may be connected several times; each connection is independent.
public protocol Source {
    /// The type of event this source produces.
    associatedtype A

    /// Starts sending events to `effect` until the returned disposable is disposed.
    func connect(_ effect: @escaping Effect<A>) -> Fuser<A>.Disposable
}

/// A type-erased `Source`.
public class AnySource<T>: Source {
    /// The type of the events.
    public typealias A = T

    @usableFromInline
    let connectFn: (@escaping Effect<T>) -> Fuser<T>.Disposable

    /// Wraps `source`.
    public init<S: Source>(_ source: S) where S.A == T {
        connectFn = { source.connect($0) }
    }

    /// A source whose connections are made by `connect`.
    public init(_ connect: @escaping (@escaping Effect<T>) -> Fuser<T>.Disposable) {
        connectFn = connect
    }

    /// Starts sending events to `effect` until the returned disposable is disposed.
    public func connect(_ effect: @escaping Effect<T>) -> Fuser<T>.Disposable {
        connectFn(effect)
    }
}
