/// An observable value: Minimalist's `Property` (RxSwift's `BehaviorRelay`, Combine's
/// `CurrentValueSubject`).
///
/// ```swift
/// final class ViewModel {
///     @Property var items: [Item] = []
/// }
/// viewModel.items = newItems                               // store and notify
/// viewModel.$items.observe(with: self) { me, items in … }  // bound to self's lifetime
/// viewModel.$items.observe(\.count) { count in … }         // distinct counts only
/// ```
///
/// Reading returns the value last stored, on every thread. Observers receive the
/// current value first, then every value stored, in the order stored, one at a time: a
/// value stored from inside an observer, or from another thread meanwhile, is delivered
/// after the one in progress, never recursively, by the thread delivering it (whose
/// store therefore does not return while other threads keep storing). Errors thrown by a
/// `subscribe` receiver are discarded.
@propertyWrapper
public final class Property<Value>: Subscribable {
    @usableFromInline let broadcast: Broadcast<Value>

    /// A property holding `value`.
    public init(_ value: Value) {
        broadcast = Broadcast(holding: value)
    }

    /// A property holding `wrappedValue`, for `@Property var x = …`.
    public convenience init(wrappedValue: Value) {
        self.init(wrappedValue)
    }

    /// The value. Setting it notifies every observer, equal or not (observe a key path,
    /// `\.self` included, to skip equal values).
    @inlinable
    public var value: Value {
        get { broadcast.value }
        set { broadcast.send(newValue) }
    }

    /// The value, for `@Property`.
    @inlinable
    public var wrappedValue: Value {
        get { value }
        set { value = newValue }
    }

    /// The property itself, for `$name.observe(…)`.
    public var projectedValue: Property<Value> { self }

    /// Changes the value in place, as one change, and notifies observers: two threads
    /// modifying at once lose neither change. `transform` may use the property: a read
    /// gives the value last stored, and a value it stores (or a `modify` inside it
    /// makes) is delivered first, then replaced by its result, so a nested change is
    /// lost unless the transform reads it back. If `transform` throws, its result is not
    /// stored; what it stored or observed meanwhile stands.
    @inlinable
    public func modify(_ transform: (inout Value) throws -> Void) rethrows {
        try broadcast.modify(transform)
    }

    public func subscribe(_ receiver: @escaping (Value) throws -> Void) -> _Disposable {
        broadcast.subscribe(receiver)
    }
}

/// A property may be shared between tasks when its values may.
extension Property: @unchecked Sendable where Value: Sendable {}
