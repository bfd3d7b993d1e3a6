/// The forms in which a node holds the code it calls: an effect, a "did change"
/// predicate, a transform.
///
/// Nodes are generic over these forms instead of storing closures. The closure
/// combinators wrap their closures (`ClosureEffect` and friends), which costs what a
/// stored closure costs. The `calling:` combinators take any conforming value: a struct
/// holding a C function and its context (what the C ABI does), or a value whose method
/// is the effect. Once the node is specialized for that type, a visit makes one direct
/// call, with no closure context and no reabstraction thunk in between.

/// A side effect a node runs on a value.
public protocol EffectFunction {
    associatedtype Value
    /// Runs the effect; a throw aborts the pass.
    func run(_ value: Value) throws
}

/// Decides whether a change from `old` to `new` is worth reacting to.
public protocol ChangeFunction {
    associatedtype Value
    /// Whether `new` differs from `old` in a way the gate should pass; a throw aborts
    /// the pass.
    func didChange(_ old: Value, _ new: Value) throws -> Bool
    /// What the gate stores to keep `value` past the pass; see `EqualityFunction.keep(_:)`.
    func keep(_ value: Value) throws -> Value
}

extension ChangeFunction {
    /// `value` itself: a Swift value keeps itself.
    @inlinable
    @inline(__always)
    public func keep(_ value: Value) -> Value { value }
}

/// Selects the part of a value a `map` feeds its child.
public protocol TransformFunction {
    associatedtype Input
    associatedtype Output
    /// The selected part; a throw aborts the pass.
    func select(_ value: Input) throws -> Output
    /// Calls `body` with the part `select(value)` would return: what a `map` does with
    /// a transform that does not lend its parts. A throw from either aborts the pass.
    ///
    /// The default is `body(select(value))`.
    func withSelected(_ value: Input, _ body: (Output) throws -> Void) throws
    /// Whether a `map` selects its parts with `select(_:into:)` instead of
    /// `withSelected(_:_:)`, because some of them hold nothing to release (a binding's
    /// lent pointer). Default `false`.
    static var lendsParts: Bool { get }
    /// Puts the part `select(value)` would return into `part`, which is uninitialized,
    /// and says whether the node must destroy it after use; what a `map` does with a
    /// transform that `lendsParts`. A throw aborts the pass; `part` is then left
    /// uninitialized.
    ///
    /// A conformance that lends parts returns `false` for those that hold nothing to
    /// release, and the node forgets them instead of destroying them. The part stays
    /// where the node put it: the node looks at it in place before deciding whether to
    /// run its child, so a lent part is neither copied nor released. The default
    /// initializes `part` with `select(value)` and returns `true`.
    func select(_ value: Input, into part: UnsafeMutablePointer<Output>) throws -> Bool
    /// Throws what `select(_:into:)` would throw for `value` before reading it, when
    /// every transform of this type accepts or refuses a value alike (a binding's NULL
    /// check). The default accepts every value.
    ///
    /// A fan-out that runs its maps in its own loop (see
    /// `intoAll(comparing:_:mapsCalling:or:)`) asks the first map's transform once per
    /// pass, then selects every part with `select(checked:into:)`: the pass fails where
    /// the first map would have failed, and no other map checks again.
    func check(_ value: Input) throws
    /// `select(_:into:)` for a value that `check(_:)` accepted, which it need not check
    /// again. The default is `select(_:into:)`.
    func select(checked value: Input, into part: UnsafeMutablePointer<Output>) throws -> Bool
    /// `select(checked:into:)` by the transform at `transform`, read where it lies: what
    /// a fan-out that keeps its maps' transforms in an array calls (see `ChildNodes`,
    /// lanes). The default calls `select(checked:into:)` on a copy of the transform,
    /// which retains what it holds; a conformance that holds references can read just
    /// the fields it needs, which copies nothing.
    static func select(checked value: Input, lentFrom transform: UnsafePointer<Self>,
                       into part: UnsafeMutablePointer<Output>) throws -> Bool
}

extension TransformFunction {
    @inlinable
    @inline(__always)
    public func withSelected(_ value: Input, _ body: (Output) throws -> Void) throws {
        try body(select(value))
    }

    @inlinable
    public static var lendsParts: Bool { false }

    @inlinable
    @inline(__always)
    public func select(_ value: Input, into part: UnsafeMutablePointer<Output>) throws -> Bool {
        part.initialize(to: try select(value))
        return true
    }

    @inlinable
    @inline(__always)
    public func check(_ value: Input) {}

    @inlinable
    @inline(__always)
    public func select(checked value: Input, into part: UnsafeMutablePointer<Output>) throws -> Bool {
        try select(value, into: part)
    }

    @inlinable
    @inline(__always)
    public static func select(checked value: Input, lentFrom transform: UnsafePointer<Self>,
                              into part: UnsafeMutablePointer<Output>) throws -> Bool {
        try transform.pointee.select(checked: value, into: part)
    }
}

/// A Swift closure as an effect.
@usableFromInline
struct ClosureEffect<Value>: EffectFunction {
    @usableFromInline
    let body: (Value) throws -> Void

    @inlinable
    init(_ body: @escaping (Value) throws -> Void) {
        self.body = body
    }

    @inlinable
    @inline(__always)
    func run(_ value: Value) throws {
        try body(value)
    }
}

/// A Swift closure as a "did change" predicate.
@usableFromInline
struct ClosureChange<Value>: ChangeFunction {
    @usableFromInline
    let body: (Value, Value) throws -> Bool

    @inlinable
    init(_ body: @escaping (Value, Value) throws -> Bool) {
        self.body = body
    }

    @inlinable
    @inline(__always)
    func didChange(_ old: Value, _ new: Value) throws -> Bool {
        try body(old, new)
    }
}

/// A Swift closure as a transform.
@usableFromInline
struct ClosureTransform<Input, Output>: TransformFunction {
    @usableFromInline
    let body: (Input) throws -> Output

    @inlinable
    init(_ body: @escaping (Input) throws -> Output) {
        self.body = body
    }

    @inlinable
    @inline(__always)
    func select(_ value: Input) throws -> Output {
        try body(value)
    }
}

/// Decides whether a new value equals the cached one, for the gates of `into` and
/// `intoAll`: an equal value neither passes the gate nor replaces the cache.
public protocol EqualityFunction {
    associatedtype Value
    /// Whether `new` equals `cached`; a throw aborts the pass.
    func equals(_ cached: Value, _ new: Value) throws -> Bool
    /// What the gate stores to keep `value` past the pass: by default `value` itself.
    ///
    /// For bindings whose values may be only borrowed during a pass (the C ABI's run
    /// values and borrowed parts), so that a gate takes a reference only when it caches,
    /// not on every pass. Called before the gate's child runs; a throw aborts the pass
    /// there, cache unchanged.
    func keep(_ value: Value) throws -> Value
    /// Whether `new` equals the cached value that `cached` points to; by default
    /// `equals(cached.pointee, new)`.
    ///
    /// Gates compare through this so that a value can be compared where it lies: a
    /// value passed on from the cache would be copied first (retaining every reference
    /// in it) whenever the comparison calls code the compiler cannot see, such as a C
    /// callback. A conformance whose comparison needs only part of the value (a
    /// binding's pointer) reads just that part.
    func equals(cachedAt cached: UnsafePointer<Value>, _ new: Value) throws -> Bool
    /// How many leading bytes of a value identify it: two values whose first
    /// `identifyingBytes` bytes are the same must be equal by `equals`. 0 (the default)
    /// when no bytes do.
    ///
    /// A diffuser whose root is a gate with such an equality returns from `run` at once
    /// when given the very value its root holds and no pass is in progress, taking no
    /// lock and calling no `equals`: the common re-render of an unchanged model.
    /// `Equatable`'s `==` (the `into` and `intoAll` of the Swift API): the whole value,
    /// as `a == a`. The C ABI's values: the pointer.
    static var identifyingBytes: Int { get }
    /// Whether two values with the same `identifyingBytes` are equal at every gate, not
    /// only at a diffuser's root. False (the default) unless `equals` is reflexive for
    /// every value.
    ///
    /// When true, a `map` whose child is a gate with this equality does not run the gate
    /// for a part that is the very value the gate holds (the common case of a part of an
    /// unchanged model): the gate would find it equal and stop it.
    static var identicalValuesAreEqual: Bool { get }
    /// Whether the cache at `cached`, which may be `nil`, holds nothing to release, so
    /// that a gate may write its next value over it without destroying it. False (the
    /// default) unless a conformance can tell by a glance at the bytes (a binding's
    /// value that has no owner): destroying it would call the runtime for nothing.
    static func holdsNothing(cachedAt cached: UnsafePointer<Value?>) -> Bool
    /// Whether `keep(_:)` returns the value itself, a plain copy: a gate may then keep a
    /// part that the `map` running it owns and hands over, instead of a copy of it (see
    /// `GateNode.keep(_:offered:by:)`). False (the default) for a conformance that makes
    /// something else (a binding's reference).
    static var keepsValueItself: Bool { get }
}

extension EqualityFunction {
    @inlinable
    @inline(__always)
    public func equals(cachedAt cached: UnsafePointer<Value>, _ new: Value) throws -> Bool {
        try equals(cached.pointee, new)
    }

    /// `value` itself: a Swift value keeps itself.
    @inlinable
    @inline(__always)
    public func keep(_ value: Value) -> Value { value }

    /// 0: nothing is known about the equality, so a value is always compared.
    @inlinable
    public static var identifyingBytes: Int { 0 }

    /// False: below the root, a value is always compared.
    @inlinable
    public static var identicalValuesAreEqual: Bool { false }

    /// False: a replaced cache is destroyed.
    @inlinable
    @inline(__always)
    public static func holdsNothing(cachedAt cached: UnsafePointer<Value?>) -> Bool { false }

    /// False: a gate keeps what `keep(_:)` makes.
    @inlinable
    public static var keepsValueItself: Bool { false }
}

/// `==` of an `Equatable` type, the equality of the Swift API's `into` and `intoAll`.
///
/// At a diffuser's root, a value identical bit for bit to the cached one needs no `==`:
/// `Equatable` requires `a == a`. (Floating-point NaN is the one exception in the
/// standard library: a root model that is a NaN, run again as the same bits, is not
/// rendered again, as `Array` treats the elements of storage it shares.)
@usableFromInline
struct StandardEquality<Value: Equatable>: EqualityFunction {
    @inlinable
    init() {}

    @inlinable
    @inline(__always)
    func equals(_ cached: Value, _ new: Value) -> Bool {
        cached == new
    }

    /// The whole value: the same bits are equal, by `Equatable`'s reflexivity.
    @inlinable
    static var identifyingBytes: Int { MemoryLayout<Value>.size }

    /// False: below the root, `==` decides, as for a NaN, which is not equal to itself.
    @inlinable
    static var identicalValuesAreEqual: Bool { false }

    /// True: a gate keeps the value itself, so it may keep a part a map hands over.
    @inlinable
    static var keepsValueItself: Bool { true }
}

/// Whether the `count` bytes at `a` and `b` are the same, compared word by word where
/// the size allows.
@inlinable
@inline(__always)
func sameBits(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
    var offset = 0
    while offset + MemoryLayout<UInt>.size <= count {
        if a.loadUnaligned(fromByteOffset: offset, as: UInt.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt.self) {
            return false
        }
        offset += MemoryLayout<UInt>.size
    }
    while offset < count {
        if a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) {
            return false
        }
        offset += 1
    }
    return true
}

/// Selects the parts of a value for many children at once, for `mapAll`: what a
/// fan-out of `map`s does with one call instead of one per child.
public protocol SelectionFunction {
    associatedtype Input
    associatedtype Output
    /// Appends the part for each child, in order, to `parts`, which comes in empty with
    /// room for one part per child (`parts.capacity`).
    ///
    /// To fail, throw after appending the parts made so far: their children still run,
    /// in order, then the pass aborts with the error, as if the transform of the next
    /// child had thrown. If one of those children fails too, the pass stops there and
    /// still reports the selection's error, the first one thrown. Parts past the
    /// capacity are ignored; children past the last part do not run.
    func selectAll(_ value: Input, into parts: inout SelectedParts<Output>) throws

    /// Whether `mapAll` calls `selectAll(_:judging:into:verdicts:)` instead of
    /// `selectAll(_:into:)`. False unless a conformance says otherwise.
    ///
    /// A selection judges parts when comparing a part with its child's cache costs much
    /// less inside the selection than in the child: a binding that would otherwise make
    /// one call into its runtime per comparison makes them all in the one call that
    /// selects the parts.
    static var judgesParts: Bool { get }

    /// `selectAll(_:into:)` that may also judge each part against the cache of the
    /// child that receives it, before any child runs.
    ///
    /// `verdicts` has one element per child, all `.unknown` on entry. For a child that
    /// `children` reports as judged, the selection may set `.unchanged` if the part
    /// equals the cached value (the child is then not run: an equality gate would stop
    /// the part anyway), or `.changed` if it differs (the gate lets the part through
    /// without comparing it again). A verdict must be what the child's equality would
    /// answer for (cached value, part); verdicts of children that are not judged are
    /// ignored. A part judged `.unchanged` is still appended (any value will do: it is
    /// not used).
    ///
    /// The default ignores `children` and `verdicts` and calls `selectAll(_:into:)`.
    func selectAll(
        _ value: Input, judging children: JudgedChildren<Output>,
        into parts: inout SelectedParts<Output>, verdicts: UnsafeMutableBufferPointer<PartVerdict>
    ) throws

    /// Whether every part this selection makes is trivial to destroy, so that the
    /// fan-out may drop the parts of a pass without destroying them one by one. False
    /// unless a conformance says otherwise; say true only if destroying a part would do
    /// nothing (a pointer lent for the pass, a value with no references in it).
    var makesTrivialParts: Bool { get }
}

extension SelectionFunction {
    /// False: the selection only selects.
    @inlinable
    public static var judgesParts: Bool { false }

    /// False: the fan-out destroys each part.
    @inlinable
    public var makesTrivialParts: Bool { false }

    /// Selects the parts and leaves every verdict `.unknown`.
    @inlinable
    public func selectAll(
        _ value: Input, judging children: JudgedChildren<Output>,
        into parts: inout SelectedParts<Output>, verdicts: UnsafeMutableBufferPointer<PartVerdict>
    ) throws {
        try selectAll(value, into: &parts)
    }
}
