extension Diffuser {
    // MARK: Effects

    /// A diffuser that runs `effect` on every value, changed or not.
    @inlinable
    public static func intoAlways(_ effect: @escaping Effect<A>) -> Diffuser<A> {
        Diffuser(node: EffectNode(ClosureEffect(effect)))
    }

    /// A diffuser that runs `effect` on every value; `effect` may throw to abort the run.
    @inlinable
    public static func intoAlways(throwing effect: @escaping (A) throws -> Void) -> Diffuser<A> {
        Diffuser(node: EffectNode(ClosureEffect(effect)))
    }

    /// A diffuser that runs every child, in order, on every value.
    ///
    /// The children keep their own gating; only this node does not gate.
    @inlinable
    public static func intoAlways(_ children: [Diffuser<A>]) -> Diffuser<A> {
        Diffuser(node: FanOutNode(children), above: deepest(of: children))
    }

    /// A diffuser that runs every child, in order, on every value.
    @inlinable
    public static func intoAlways(_ children: Diffuser<A>...) -> Diffuser<A> {
        intoAlways(children)
    }

    // MARK: Gates

    /// A diffuser that runs `diffuser` on the first value, and afterwards only when
    /// `didChange(old, new)` returns `true`.
    ///
    /// `didChange` is never called on the first run. The value is remembered after
    /// every run, whether or not `diffuser` ran.
    @inlinable
    public static func intoWhen(_ didChange: @escaping DidChange<A>, _ diffuser: Diffuser<A>) -> Diffuser<A> {
        Diffuser<A>(node: GateNode(taking: ClosureChange(didChange), ChildNode(diffuser.node)), above: diffuser.depth)
    }

    /// Like `intoWhen(_:_:)` with a diffuser, for a single effect.
    @inlinable
    public static func intoWhen(_ didChange: @escaping DidChange<A>, _ effect: @escaping Effect<A>) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: ClosureChange(didChange), CalledEffect(ClosureEffect(effect))))
    }

    /// Like `intoWhen(_:_:)` for a single effect that may throw to abort the run.
    @inlinable
    public static func intoWhen(_ didChange: @escaping DidChange<A>, throwing effect: @escaping (A) throws -> Void) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: ClosureChange(didChange), CalledEffect(ClosureEffect(effect))))
    }

    /// Like `intoWhen(_:_:)` for a single effect, where both the predicate and the effect
    /// may throw to abort the run. The building block of bindings whose equality can fail.
    @inlinable
    public static func intoWhen(
        throwing didChange: @escaping (A, A) throws -> Bool,
        effect: @escaping (A) throws -> Void
    ) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: ClosureChange(didChange), CalledEffect(ClosureEffect(effect))))
    }

    /// Like `intoWhen(_:_:)`, with a predicate that may throw to abort the run.
    @inlinable
    public static func intoWhen(
        throwing didChange: @escaping (A, A) throws -> Bool,
        _ diffuser: Diffuser<A>
    ) -> Diffuser<A> {
        Diffuser<A>(node: GateNode(taking: ClosureChange(didChange), ChildNode(diffuser.node)), above: diffuser.depth)
    }

    /// A diffuser that runs `effect` on the first value only.
    ///
    /// Equivalent to `intoWhen({ _, _ in false }, effect)`.
    @inlinable
    public static func intoOnce(_ effect: @escaping Effect<A>) -> Diffuser<A> {
        Diffuser(node: OnceNode(CalledEffect(ClosureEffect(effect))))
    }

    /// Like `intoOnce(_:)` with an effect that may throw: a failed first run is retried
    /// on the next value.
    @inlinable
    public static func intoOnce(throwing effect: @escaping (A) throws -> Void) -> Diffuser<A> {
        Diffuser(node: OnceNode(CalledEffect(ClosureEffect(effect))))
    }

    /// A diffuser that runs `diffuser` on the first value only.
    @inlinable
    public static func intoOnce(_ diffuser: Diffuser<A>) -> Diffuser<A> {
        Diffuser<A>(node: OnceNode(ChildNode(diffuser.node)), above: diffuser.depth)
    }

    // MARK: Focus

    /// A diffuser that feeds `diffuser` the part of each value that `transform` selects.
    ///
    /// Also called contramap. `transform` runs on every value that reaches this node;
    /// gating happens in `diffuser`.
    @inlinable
    public static func map<B>(_ transform: @escaping (A) -> B, _ diffuser: Diffuser<B>) -> Diffuser<A> {
        Diffuser<A>(node: MapNode(owning: ClosureTransform(transform), diffuser.node), above: diffuser.depth)
    }

    /// Like `map(_:_:)` with a transform that may throw to abort the run.
    @inlinable
    public static func map<B>(throwing transform: @escaping (A) throws -> B, _ diffuser: Diffuser<B>) -> Diffuser<A> {
        Diffuser<A>(node: MapNode(owning: ThrowingClosureTransform(transform), diffuser.node), above: diffuser.depth)
    }

    /// A diffuser that feeds `diffuser` the property of each value at `keyPath`.
    ///
    /// A key path to a stored property (or a chain of them) is read in place; any other
    /// is projected on every value that reaches this node, as a transform is called.
    @inlinable
    public static func map<B>(_ keyPath: KeyPath<A, B>, _ diffuser: Diffuser<B>) -> Diffuser<A> {
        if let offset = MemoryLayout<A>.offset(of: keyPath) {
            return Diffuser<A>(node: FieldNode(offset: offset, diffuser.node), above: diffuser.depth)
        }
        return Diffuser<A>(node: MapNode(owning: KeyPathTransform(keyPath), diffuser.node), above: diffuser.depth)
    }

    // MARK: Key paths

    /// A diffuser that assigns every value to the property at `keyPath` of each subject.
    ///
    /// Runs on every value; wrap it in `into`-style gating (`intoAll`, `intoWhen`) or
    /// reach it through a gated parent to skip unchanged values.
    @inlinable
    public static func intoKeypath<Subject>(
        _ keyPath: ReferenceWritableKeyPath<Subject, A>,
        on subjects: Subject...
    ) -> Diffuser<A> {
        intoAlways { value in
            for subject in subjects { subject[keyPath: keyPath] = value }
        }
    }

    /// A diffuser that assigns every value to the optional property at `keyPath` of each
    /// subject.
    @inlinable
    public static func intoKeypath<Subject>(
        _ keyPath: ReferenceWritableKeyPath<Subject, A?>,
        on subjects: Subject...
    ) -> Diffuser<A> {
        intoAlways { value in
            for subject in subjects { subject[keyPath: keyPath] = value }
        }
    }
}

extension Diffuser where A: Equatable {
    /// A diffuser that runs `children`, in order, whenever the value changed: the same
    /// as `intoAll(children)`.
    @inlinable
    public init(_ children: [Diffuser<A>]) {
        self = .intoAll(children)
    }

    /// A diffuser that runs `children`, in order, whenever the value changed: the same
    /// as `intoAll(children...)`.
    @inlinable
    public init(_ children: Diffuser<A>...) {
        self = .intoAll(children)
    }

    /// A diffuser that runs `effect` on the first value and whenever the value is not
    /// equal (`!=`) to the previous one.
    @inlinable
    public static func into(_ effect: @escaping Effect<A>) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: Inequality(StandardEquality()), CalledEffect(ClosureEffect(effect))))
    }

    /// Like `into(_:)` with an effect that may throw to abort the run.
    @inlinable
    public static func into(throwing effect: @escaping (A) throws -> Void) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: Inequality(StandardEquality()), CalledEffect(ClosureEffect(effect))))
    }

    /// A diffuser that runs every child, in order, on the first value and whenever the
    /// value is not equal to the previous one.
    @inlinable
    public static func intoAll(_ children: [Diffuser<A>]) -> Diffuser<A> {
        Diffuser(node: GateNode(taking: Inequality(StandardEquality()), ChildNode(FanOutNode(children))), above: deepest(of: children))
    }

    /// A diffuser that runs every child, in order, on the first value and whenever the
    /// value is not equal to the previous one.
    @inlinable
    public static func intoAll(_ children: Diffuser<A>...) -> Diffuser<A> {
        intoAll(children)
    }
}

extension Diffuser where A == Bool {
    /// A diffuser that feeds `diffuser` the negation of each value.
    @inlinable
    public static func invert(_ diffuser: Diffuser<Bool>) -> Diffuser<Bool> {
        map({ !$0 }, diffuser)
    }
}

// MARK: Callable values

/// The combinators that call user code, for code held in a value conforming to
/// `EffectFunction`, `ChangeFunction` or `TransformFunction` rather than in a closure.
/// Semantics are those of the closure combinators of the same name; only the call is
/// cheaper once specialized.
extension Diffuser {
    /// `intoAlways(throwing:)` for an effect in any form.
    @inlinable
    public static func intoAlways<Effect: EffectFunction>(calling effect: Effect) -> Diffuser<A>
    where Effect.Value == A {
        Diffuser(node: EffectNode(effect))
    }

    /// `intoWhen(throwing:effect:)` for a predicate and an effect in any form.
    @inlinable
    public static func intoWhen<Change: ChangeFunction, Effect: EffectFunction>(
        calling change: Change, effect: Effect
    ) -> Diffuser<A> where Change.Value == A, Effect.Value == A {
        Diffuser(node: GateNode(change, CalledEffect(effect)))
    }

    /// `intoWhen(throwing:_:)` for a predicate in any form.
    @inlinable
    public static func intoWhen<Change: ChangeFunction>(calling change: Change, _ diffuser: Diffuser<A>) -> Diffuser<A>
    where Change.Value == A {
        Diffuser(node: GateNode(change, ChildNode(diffuser.node)), above: diffuser.depth)
    }

    /// `intoOnce(throwing:)` for an effect in any form.
    @inlinable
    public static func intoOnce<Effect: EffectFunction>(calling effect: Effect) -> Diffuser<A>
    where Effect.Value == A {
        Diffuser(node: OnceNode(CalledEffect(effect)))
    }

    /// `map(throwing:_:)` for a transform in any form.
    @inlinable
    public static func map<Transform: TransformFunction>(
        calling transform: Transform, _ diffuser: Diffuser<Transform.Output>
    ) -> Diffuser<A> where Transform.Input == A {
        Diffuser(node: MapNode(transform, diffuser.node), above: diffuser.depth)
    }

    /// `into(throwing:)` for an effect in any form.
    @inlinable
    public static func into<Effect: EffectFunction>(calling effect: Effect) -> Diffuser<A>
    where A: Equatable, Effect.Value == A {
        Diffuser(node: GateNode(taking: Inequality(StandardEquality()), CalledEffect(effect)))
    }

    /// `into(throwing:)` with values compared by `equality` instead of `==`: the effect
    /// runs on the first value and whenever `equality` says the value differs from the
    /// cached one.
    @inlinable
    public static func into<Equality: EqualityFunction, Effect: EffectFunction>(
        comparing equality: Equality, calling effect: Effect
    ) -> Diffuser<A> where Equality.Value == A, Effect.Value == A {
        Diffuser(node: GateNode(Inequality(equality), CalledEffect(effect)))
    }

    /// `intoAll(_:)` with values compared by `equality` instead of `==`.
    @inlinable
    public static func intoAll<Equality: EqualityFunction>(
        comparing equality: Equality, _ children: [Diffuser<A>]
    ) -> Diffuser<A> where Equality.Value == A {
        Diffuser(node: GateNode(Inequality(equality), ChildNode(FanOutNode(children))), above: deepest(of: children))
    }
}

// MARK: Gates of bindings

/// The gates of the callable-value combinators, for a binding that knows, when it builds
/// a gate, that its `keep` returns the value it is given (the same bits) and calls no
/// user code, although the type of its predicate does not say so: a C type without
/// `retain`. Such a gate, like those of the closure combinators, leaves an equal value
/// with its cache's very bits as it is instead of keeping it again. With `keepsItself`
/// false each is the public combinator of the same name.
extension Diffuser {
    /// `intoWhen(calling:effect:)`, with what `change.keep` does known.
    @_spi(Bindings) @inlinable
    public static func intoWhen<Change: ChangeFunction, Effect: EffectFunction>(
        calling change: Change, effect: Effect, keepsItself: Bool
    ) -> Diffuser<A> where Change.Value == A, Effect.Value == A {
        Diffuser(node: GateNode(change, CalledEffect(effect), keepsItself: keepsItself))
    }

    /// `intoWhen(calling:_:)`, with what `change.keep` does known.
    @_spi(Bindings) @inlinable
    public static func intoWhen<Change: ChangeFunction>(
        calling change: Change, _ diffuser: Diffuser<A>, keepsItself: Bool
    ) -> Diffuser<A> where Change.Value == A {
        Diffuser(node: GateNode(change, ChildNode(diffuser.node), keepsItself: keepsItself), above: diffuser.depth)
    }

    /// `into(comparing:calling:)`, with what `equality.keep` does known.
    @_spi(Bindings) @inlinable
    public static func into<Equality: EqualityFunction, Effect: EffectFunction>(
        comparing equality: Equality, calling effect: Effect, keepsItself: Bool
    ) -> Diffuser<A> where Equality.Value == A, Effect.Value == A {
        Diffuser(node: GateNode(Inequality(equality), CalledEffect(effect), keepsItself: keepsItself))
    }

    /// `intoAll(comparing:_:)`, with what `equality.keep` does known.
    @_spi(Bindings) @inlinable
    public static func intoAll<Equality: EqualityFunction>(
        comparing equality: Equality, _ children: [Diffuser<A>], keepsItself: Bool
    ) -> Diffuser<A> where Equality.Value == A {
        Diffuser(
            node: GateNode(Inequality(equality), ChildNode(FanOutNode(children)), keepsItself: keepsItself),
            above: deepest(of: children))
    }
}
