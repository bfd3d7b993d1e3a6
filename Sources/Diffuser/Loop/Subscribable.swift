/// Something whose values can be observed: a loop's models, a `Property`'s values, a
/// `Signal`'s or a `Gear`'s events.
///
/// The one requirement is `subscribe`; every form of observing is built on it:
///
/// ```swift
/// loop.observe { model in … }                          // every value
/// loop.observe(\.title) { title in … }                 // distinct values at a key path
/// loop.observe(select: { $0.items.count }) { n in … }  // distinct values of a selector
/// loop.observe(\.title, with: self) { me, title in … } // bound to self's lifetime
/// loop.render(diffuser)                                // through a Diffuser
/// ```
///
/// Something that has a current value (a loop, a property) sends it first, then every
/// new one. Key-path and selector forms are gated by a `Diffuser` (`map(…, into(…))`),
/// so a value equal to the previous one is not sent: RaspSwift's selectors,
/// Minimalist's `observe(\.kp, with:)`.
public protocol Subscribable<Value>: AnyObject {
    associatedtype Value

    /// Calls `receiver` with the current value, if there is one, then with every new
    /// value, until the result is disposed. Where an error `receiver` throws goes
    /// depends on the type (a loop reports it to its inspector).
    func subscribe(_ receiver: @escaping (Value) throws -> Void) -> _Disposable
}

// The forms are inlinable: a Diffuser they build is then built where they are called,
// for the value's type; built in the library, it would run unspecialized generic code
// (several times slower) at every value.
extension Subscribable {
    /// What observing returns: dispose it to stop.
    public typealias Disposable = _Disposable

    /// Observes every value.
    @inlinable @discardableResult
    public func observe(_ observer: @escaping (Value) -> Void) -> Disposable {
        subscribe(observer)
    }

    /// Observes the part of each value at `keyPath`, skipping a part equal to the
    /// previous one. `\.self` observes distinct whole values.
    @inlinable @discardableResult
    public func observe<Part: Equatable>(
        _ keyPath: KeyPath<Value, Part>,
        _ observer: @escaping (Part) -> Void
    ) -> Disposable {
        let diffuser = Diffuser<Value>.map(keyPath, .into(observer))
        return subscribe { diffuser.run($0) }
    }

    /// Observes the part of each value that `select` computes, skipping a part equal to
    /// the previous one (RaspSwift's selectors).
    @inlinable @discardableResult
    public func observe<Part: Equatable>(
        select: @escaping (Value) -> Part,
        _ observer: @escaping (Part) -> Void
    ) -> Disposable {
        let diffuser = Diffuser<Value>.map(select, .into(observer))
        return subscribe { diffuser.run($0) }
    }

    /// Observes every value for as long as `owner` lives (Minimalist's
    /// `observe(with:)`). The owner is held weakly and handed to `observer`, so no
    /// `[weak self]` is needed; the subscription ends on the first value after the
    /// owner is gone, or when the result is disposed.
    @inlinable @discardableResult
    public func observe<Owner: AnyObject>(
        with owner: Owner,
        _ observer: @escaping (Owner, Value) -> Void
    ) -> Disposable {
        let link = DisposableLink()
        link.link(subscribe { [weak owner] value in
            guard let owner else {
                link.dispose()
                return
            }
            observer(owner, value)
        })
        return link
    }

    /// Observes the part of each value at `keyPath`, skipping a part equal to the
    /// previous one, for as long as `owner` lives (Minimalist's
    /// `observe(\.kp, with:)`).
    @inlinable @discardableResult
    public func observe<Owner: AnyObject, Part: Equatable>(
        _ keyPath: KeyPath<Value, Part>,
        with owner: Owner,
        _ observer: @escaping (Owner, Part) -> Void
    ) -> Disposable {
        let link = DisposableLink()
        let diffuser = Diffuser<Value>.map(keyPath, .into { [weak owner] (part: Part) in
            if let owner { observer(owner, part) }
        })
        link.link(subscribe { [weak owner] value in
            guard owner != nil else {
                link.dispose()
                return
            }
            diffuser.run(value)
        })
        return link
    }

    /// Renders every value through `diffuser`, whose gates skip the parts that did not
    /// change. An error a `throwing:` effect of the diffuser throws goes where
    /// `subscribe` sends errors.
    @inlinable @discardableResult
    public func render(_ diffuser: Diffuser<Value>) -> Disposable {
        subscribe { try diffuser.tryRun($0) }
    }
}
