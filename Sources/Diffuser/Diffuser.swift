/// A side effect that receives a value.
public typealias Effect<A> = (A) -> Void

/// Decides whether a change from the old value to the new one is worth reacting to.
///
/// Called with `(old, new)`; return `true` to run the effect.
public typealias DidChange<A> = (A, A) -> Bool

/// Spreads an immutable value into side effects, running each effect only when the part
/// of the value it depends on changed.
///
/// Build a diffuser once from small pieces, then call `run(_:)` with every new model:
///
/// ```swift
/// let diffuser = Diffuser<Model>(
///     .map(\.title, .into { titleLabel.text = $0 }),
///     .map(\.items, .into { list.reload($0) })
/// )
/// diffuser.run(model1)   // runs every effect
/// diffuser.run(model2)   // runs only the effects whose part changed
/// ```
///
/// A diffuser remembers the values it has seen: every gating node (`into`, `intoWhen`,
/// `intoAll`, `intoOnce`) keeps a cache inside the node. Using one child in two places
/// shares that cache.
///
/// ## Threads and reentrancy
/// `run` may be called from any thread. Runs over one graph (a diffuser and every
/// diffuser it was composed with) are serialized and none is lost. A `run` called from
/// inside one of the graph's own effects on the same thread is queued and performed
/// right after the current pass, before the outermost `run` returns, so an effect never
/// sees caches half-updated and nothing deadlocks. Effects run on the calling thread.
///
/// ## Unchanged models
/// A run of the very value the root gate (`into`, `intoAll`) holds, with no pass in
/// progress, returns at once without taking the lock or calling `==`: the same bits
/// are equal by `Equatable`'s reflexivity. Re-rendering an unchanged model costs a few
/// loads.
///
/// ## Failures
/// Effects, predicates and transforms built with the `throwing:` combinators may throw.
/// A throw stops the pass; every gate on the way to the failing node keeps its previous
/// cache, so the next run retries. `tryRun(_:)` reports the error; `run(_:)` discards it.
public struct Diffuser<A> {
    @usableFromInline
    let node: Node<A>
    @usableFromInline
    init(node: Node<A>) {
        self.node = node
    }

    /// Renders `newValue`: runs every effect whose input changed since the last run.
    ///
    /// Errors thrown by `throwing:` effects are discarded; use `tryRun(_:)` to see them.
    @inlinable
    public func run(_ newValue: A) {
        if settles(newValue) { return }
        try? runLocked(newValue)
    }

    /// Renders `newValue` like `run(_:)`, rethrowing the first error an effect,
    /// predicate or transform threw.
    ///
    /// After an error the gates that led to the failing node keep their previous
    /// values, so the next run retries the parts that did not complete. A call made from
    /// inside one of this graph's effects is queued (see the type's documentation) and
    /// returns without error; an error of such a queued pass reaches the outermost
    /// caller if its own pass succeeded.
    @inlinable
    public func tryRun(_ newValue: A) throws {
        if settles(newValue) { return }
        try runLocked(newValue)
    }

    /// `tryRun(_:)` once the run is known to need the lock.
    @usableFromInline
    func runLocked(_ newValue: A) throws {
        let node = self.node
        try Serializer.perform(
            on: node,
            { try node.run(newValue) },
            queued: { { try node.run(newValue) } }
        )
    }
}

extension Diffuser {
    /// `tryRun(_:)` for a binding whose run values are only borrowed for the call: a
    /// run queued for later (one called from inside this graph's own effects) works on
    /// `keep(newValue)`, taken when it is queued, instead of `newValue`. If `keep`
    /// throws, the queued run fails with that error when its turn comes.
    ///
    /// Does not check `isSettled(on:)` itself: a binding checks it first, where that is
    /// cheapest (the C ABI under its handle table's lock), and calls this only when the
    /// run was not settled.
    @_spi(Bindings)
    public func tryRun(_ newValue: A, keepingQueued keep: (A) throws -> A) throws {
        let node = self.node
        try Serializer.perform(
            on: node,
            { try node.run(newValue) },
            queued: {
                do {
                    let kept = try keep(newValue)
                    return { try node.run(kept) }
                } catch {
                    return { throw error }
                }
            }
        )
    }
}

extension Diffuser {
    /// Whether a run of `newValue` would do nothing, decided as `run` decides it before
    /// taking the lock (see "Unchanged models"): for a binding that can check it more
    /// cheaply than it can set up a run.
    @_spi(Bindings)
    @inlinable
    public func isSettled(on newValue: A) -> Bool {
        settles(newValue)
    }

    /// `isSettled(on:)`, inlined where the value type is known, so that the value's
    /// address is taken without a generic call.
    @inlinable
    @inline(__always)
    func settles(_ newValue: A) -> Bool {
        withUnsafePointer(to: newValue) { node.isSettled(at: $0) }
    }
}

extension Diffuser: @unchecked Sendable {}

extension Diffuser {
    /// `isSettled(on:)`, found once: for a binding that checks it on every run of a
    /// diffuser it keeps, where the check then costs a few loads (see `SettledCheck`).
    @_spi(Bindings)
    public var settledCheck: SettledCheck<A> {
        SettledCheck(gate: node.settlingGate)
    }
}

/// What `Diffuser.isSettled(on:)` reads, found once, with the check compiled for `A`
/// where it is inlined (`isSettled(on:)` itself calls an unspecialized method of the
/// root). Valid while the diffuser it came from lives: it does not keep it alive.
@_spi(Bindings)
public struct SettledCheck<A> {
    /// The root gate, if a run can be settled at all.
    @usableFromInline
    let gate: Unmanaged<GateNode<A, A?>>?

    @usableFromInline
    init(gate: Unmanaged<GateNode<A, A?>>?) {
        self.gate = gate
    }

    /// The address of the root gate, `nil` if a run cannot be settled: for a binding
    /// that keeps it where a check made back from it (`init(gateAddress:)`) can find it.
    public var gateAddress: UnsafeMutableRawPointer? {
        gate?.toOpaque()
    }

    /// The check of the root gate at `gateAddress`, which a `SettledCheck` gave and
    /// whose diffuser is alive.
    @inlinable
    public init(gateAddress: UnsafeMutableRawPointer) {
        self.gate = Unmanaged.fromOpaque(gateAddress)
    }

    /// What `Diffuser.isSettled(on:)` says of `value`.
    @inlinable
    @inline(__always)
    public func isSettled(on value: A) -> Bool {
        withUnsafePointer(to: value) { isSettled(at: $0) }
    }

    /// What `Diffuser.isSettled(on:)` says of the value at `value`.
    @inlinable
    @inline(__always)
    public func isSettled(at value: UnsafePointer<A>) -> Bool {
        guard let gate else { return false }
        return gate._withUnsafeGuaranteedRef { $0.settles(at: value) }
    }

    /// Whether the gate's values are identified by their first word alone, so that
    /// `isSettled(identifiedBy:)` may be used: the case of values that are one pointer.
    public var identifiedByWord: Bool {
        guard let gate else { return false }
        return gate._withUnsafeGuaranteedRef { $0.identifiedByWord }
    }

    /// What `Diffuser.isSettled(on:)` says of a value whose first word is `word`, for a
    /// check that is `identifiedByWord`: the same answer, without the value in memory.
    @inlinable
    @inline(__always)
    public func isSettled(identifiedBy word: UInt) -> Bool {
        guard let gate else { return false }
        return gate._withUnsafeGuaranteedRef { $0.settles(identifiedBy: word) }
    }
}
