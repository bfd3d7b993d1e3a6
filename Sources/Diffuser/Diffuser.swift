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
/// struct Model: Equatable { var title: String; var items: [Item] }
///
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
/// `run` may be called from any thread. Runs over one graph are serialized and none is
/// lost. Running forms the graph: a diffuser's first run joins it with every diffuser it
/// was composed from (and with every graph that shares a node with it), and from then on
/// runs of any of them are serialized; composing alone joins nothing. A `run` called from
/// inside one of the graph's own effects on the same thread is queued and performed
/// right after the current pass, before the outermost `run` returns, so an effect never
/// sees caches half-updated and nothing deadlocks. Effects run on the calling thread.
///
/// `Diffuser` is not `Sendable`, since the compiler cannot check that its effects may run
/// on another thread (an effect isolated to the main actor may not). Keep a diffuser where
/// its effects belong (a `@MainActor` view model runs its own), or, to run one from
/// several threads, declare that its code is safe there: `nonisolated(unsafe) let`.
///
/// A run holds its graph's lock while its effects run, and a connection's `dispose()`
/// waits for an event being delivered on another thread (in the connection's transforms
/// or its effect). Like any two locks, they deadlock when threads wait for each other in
/// a circle: an effect that waits for another thread's run of its own graph; graph A's
/// effect running graph B on one thread while B's effect runs A on another; an effect
/// that disposes a connection whose transform or effect, delivering an event on another
/// thread, runs the first effect's graph. Keep such calls
/// one-way, or make the second call after the run has returned.
///
/// ## Gates
/// A gate (`into`, `intoAll`, `intoWhen`) compares each new value with the value of the
/// previous run, and keeps the new value after every successful run, equal or not. `==`
/// decides every comparison of `into` and `intoAll`; two values with the same bits are
/// compared too (`Double.nan` run twice runs the effect twice).
///
/// ## Depth
/// A run steps from each combinator into its children on the calling thread's stack, and
/// releasing a tree releases its nodes the same way, so a tree may nest at most
/// `maximumDepth` combinators from its root to an effect; composing a deeper one stops
/// the program with a message. Width is not limited.
///
/// ## Failures
/// Effects, predicates and transforms built with the `throwing:` combinators may throw.
/// A throw stops the pass; every gate on the way to the failing node keeps its previous
/// cache, so the next run retries. `tryRun(_:)` reports the error; `run(_:)` discards it.
public struct Diffuser<A> {
    @usableFromInline
    let node: Node<A>
    /// How many combinators the longest path from this diffuser down to an effect passes
    /// through, this one included: 1 for a diffuser of effects only. At most
    /// `maximumDepth`.
    public let depth: Int

    /// A diffuser that nests no other: its node calls user code only.
    @inlinable
    init(node: Node<A>) {
        self.node = node
        self.depth = 1
    }

    /// A combinator over children whose deepest is `childDepth` deep.
    @inlinable
    init(node: Node<A>, above childDepth: Int) {
        require(
            childDepth < Self.maximumDepth,
            "a diffuser nests at most \(Self.maximumDepth) combinators; this one would nest \(childDepth + 1)")
        self.node = node
        self.depth = childDepth + 1
    }

    /// Renders `newValue`: runs every effect whose input changed since the last run.
    ///
    /// Errors thrown by `throwing:` effects are discarded; use `tryRun(_:)` to see them.
    @inlinable
    public func run(_ newValue: A) {
        try? tryRun(newValue)
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
    @_spi(Bindings) @inlinable
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

// Not `Sendable`: a diffuser calls its effects, predicates, equalities and transforms on
// the thread that runs it, and they are closures the compiler cannot check for that: an
// effect isolated to the main actor, or a gate's cache of a value that is not `Sendable`,
// must not be reached from another thread. The diffuser itself is safe from any thread
// (runs are serialized); sharing one across threads asserts that its code is too
// (`nonisolated(unsafe) let`, see "Threads and reentrancy" above).
