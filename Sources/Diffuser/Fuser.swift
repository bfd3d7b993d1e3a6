/// Gathers events from many sources into one stream.
///
/// A fuser is a description: building one connects nothing. `connect(_:)` connects
/// every source of the description to the given effect and returns a disposable that
/// disconnects them all.
///
/// ```swift
/// let fuser = Fuser<LoginEvent>(
///     .extract({ .usernameChanged($0) }, .from(usernameField)),
///     .extractConstant(.loginClicked, .from(loginButton))
/// )
/// let connection = fuser.connect { event in print(event) }
/// // …
/// connection.dispose()
/// ```
///
/// Here `usernameField` and `loginButton` are `Source`s (a text field's changes, a
/// button's taps). For an `Output` hub, use its `fuser` (or `fromFuseable(_:)`). To feed
/// a loop, connect the fuser to it with `Loop.connect(_:)`: the loop then runs its steps
/// once the connection has delivered each event, not inside the effect.
///
/// ## Threads
/// Sources may emit on any thread. Each connection delivers one event at a time, on the
/// emitting thread: an event's transforms (`extract`, `extractUnlessNil`) and the effect
/// run holding the connection's lock, so no two of them run at once, and once its
/// `dispose()` has returned neither runs again. So a transform or an effect that waits
/// for another thread (a `Loop.dispatch` that drains a loop with the caller's executor,
/// whose step may wait for a callback on another thread) makes that thread wait too if
/// it emits into the same connection. An event a transform or the effect causes on the
/// delivering thread, emitting into a source of the same connection, is delivered at
/// once, nested in the delivery in progress. A `dispose()` made while another is under
/// way on another thread returns once no transform or effect can run; the sources'
/// disconnects may then still be running on that thread.
/// A source's connecting and disconnecting may run inside its own emission, on the
/// emitting thread: an effect that disposes its connection disconnects the sources right
/// after it returns, and a loop the sources feed connects and disconnects sources as the
/// emitting thread runs its work (see `Loop.connect(_:)`). So a source must not hold a
/// lock of its own while it emits that its connecting or disconnecting takes: take the
/// sinks under the lock and call them once it is released, as `Output` does.
/// `connect` and `dispose` may be called from any thread. `Fuser` and its connections are not
/// `Sendable` (a connection is a `Disposable`, which need not be): a fuser or a
/// connection shared with another task is declared safe there by the caller
/// (`nonisolated(unsafe) let`).
///
/// ## Depth
/// A fuser nests at most `maximumDepth` combinators from itself down to a source (see
/// `Depth.swift`); composing a deeper one stops the program with a message.
///
/// ## Failures
/// Effects and transforms built with the `throwing:` variants may throw; the error
/// goes back to the source that emitted the event (see `tryConnect(_:)`), and the
/// connection stays usable.
public class Fuser<A> {
    /// What `connect` returns: dispose it to stop receiving events.
    public typealias Disposable = _Disposable

    /// Connects the description to a sink, each source through `entry`: a source hands
    /// each event's climb through the transforms to the sink to the connection's entry,
    /// so that the whole climb is one delivery. The sink may throw (an error for the
    /// emitter); connecting may throw (a source that refused to connect), in which case
    /// every connection already made has been disposed.
    let connector: (_ entry: ConnectionEntry, _ sink: @escaping (A) throws -> Void) throws -> Disposable

    /// How many combinators the longest path from this fuser down to a source passes
    /// through, this one and the source included: 1 for a source. At most `maximumDepth`.
    public let depth: Int

    /// A fuser whose connections are made by `connector`.
    ///
    /// The lowest-level initializer, for bindings: `connector` receives a sink that
    /// throws the error of a failing downstream effect back to the emitter, and may
    /// itself throw to refuse the connection (after disposing what it connected). It
    /// counts as a source (1 deep).
    public init(tryConnector connector: @escaping (@escaping (A) throws -> Void) throws -> Disposable) {
        self.connector = { entry, sink in
            try connector { event in try entry.enter { try sink(event) } }
        }
        self.depth = 1
    }

    /// A fuser over fusers whose deepest is `childDepth` deep, connected by `connector`.
    init(
        above childDepth: Int,
        connector: @escaping (_ entry: ConnectionEntry, _ sink: @escaping (A) throws -> Void) throws -> Disposable
    ) {
        self.depth = Self.depth(above: childDepth)
        self.connector = connector
    }

    /// A fuser with a single source.
    public init(source: AnySource<A>) {
        connector = { entry, sink in
            source.connect { event in try? entry.enter { try sink(event) } }
        }
        depth = 1
    }

    /// A fuser that merges the events of `children`.
    public init(_ children: [Fuser<A>]) {
        depth = Self.depth(above: children.lazy.map(\.depth).max() ?? 0)
        let connectors = children.map(\.connector)
        connector = { entry, sink in
            var made: [Disposable] = []
            made.reserveCapacity(connectors.count)
            do {
                for connect in connectors { made.append(try connect(entry, sink)) }
            } catch {
                for part in made { part.dispose() }
                throw error
            }
            return CompositeDisposable(made)
        }
    }

    /// A fuser that merges the events of `children`.
    public convenience init(_ children: Fuser<A>...) {
        self.init(children)
    }

    /// Starts delivering the events of every source to `effect`.
    ///
    /// Dispose the result to disconnect every source; after `dispose()` returns,
    /// `effect` receives nothing more.
    ///
    /// A source made with `tryConnector` may refuse to connect. `connect` then connects
    /// nothing (the sources connected before the refusal are disconnected) and returns a
    /// disposable that does nothing: the refusal is dropped. Use `tryConnect(_:)` to
    /// receive it, as C's `dfs_fuser_connect` and Java's `Fuser.connect` report it.
    public func connect(_ effect: @escaping Effect<A>) -> Disposable {
        // A non-throwing effect cannot make the sink throw; only a throwing source
        // connector could fail here, and such fusers are built with `tryConnector`.
        (try? tryConnect(effect)) ?? AnonymousDisposable(disposeFn: {})
    }

    /// Starts delivering events to `effect`, which may throw: the error goes back to the
    /// source that emitted the event. Throws if a source refused to connect; nothing
    /// stays connected then. Events are delivered as they are emitted, also while the
    /// sources connect: those emitted before a source refused have reached `effect`.
    public func tryConnect(_ effect: @escaping (A) throws -> Void) throws -> Disposable {
        try tryConnect(effect, afterDelivery: nil)
    }

    /// `tryConnect(_:)`, running each event's delivery through `aroundDelivery` (under
    /// the connection's lock), and `afterDelivery` on the delivering thread after it,
    /// once the lock is released. `whenMade` is given the connection before any source
    /// connects: a receiver that another thread may end meanwhile (a loop's registration)
    /// disposes it from then on, and nothing reaches `effect` after that dispose returns;
    /// the sources are disconnected once they have connected.
    func tryConnect(
        _ effect: @escaping (A) throws -> Void,
        afterDelivery: (() -> Void)?,
        aroundDelivery: ((() throws -> Void) throws -> Void)? = nil,
        whenMade: ((Connection<A>) -> Void)? = nil
    ) throws -> Disposable {
        let connection = Connection(effect, afterDelivery: afterDelivery, aroundDelivery: aroundDelivery)
        whenMade?(connection)
        do {
            let sources = try connector(connection) { event in try connection.deliver(event) }
            connection.attach(sources)
        } catch {
            connection.dispose()
            throw error
        }
        return connection
    }
}

// Not `Sendable`: a fuser holds its sources and transforms, closures the compiler cannot
// check for the thread they run on (a connection's effect and the fuser's transforms run
// on the thread of the source that emitted the event). The fuser is an immutable
// description, and each connection delivers one event at a time under its own lock;
// sharing a fuser across threads asserts that its code is safe there.

extension Fuser {
    /// A fuser with the single source `source`.
    public static func from<S: Source>(_ source: S) -> Fuser<A> where S.A == A {
        Fuser(source: AnySource(source))
    }

    /// A fuser whose source is the closure `source`: it receives the effect to call
    /// with each event and returns the disposable that stops it.
    public static func from(_ source: @escaping (@escaping Effect<A>) -> Disposable) -> Fuser<A> {
        Fuser(source: AnySource(source))
    }

    /// A fuser whose source is the `Output` of a `Fuseable`.
    public static func fromFuseable<F: Fuseable>(_ fuseable: F) -> Fuser<A> where F.Event == A {
        fuseable.output.fuser
    }

    /// A fuser that merges the events of `children`, in the order they arrive.
    public static func fromAll(_ children: [Fuser<A>]) -> Fuser<A> {
        Fuser(children)
    }

    /// A fuser that merges the events of `children`, in the order they arrive.
    public static func fromAll(_ children: Fuser<A>...) -> Fuser<A> {
        Fuser(children)
    }

    /// A fuser that turns each event of `fuser` into an event of this type.
    public static func extract<B>(_ transformation: @escaping (B) -> A, _ fuser: Fuser<B>) -> Fuser<A> {
        extract(throwing: transformation, fuser)
    }

    /// Like `extract(_:_:)` with a transformation that may throw: the error goes back
    /// to the emitter and the event is dropped.
    public static func extract<B>(throwing transformation: @escaping (B) throws -> A, _ fuser: Fuser<B>) -> Fuser<A> {
        let inner = fuser.connector
        return Fuser(above: fuser.depth, connector: { entry, sink in
            try inner(entry) { event in
                // A transform below may have disposed the connection: nothing more runs.
                if entry.isOpen { try sink(transformation(event)) }
            }
        })
    }

    /// A fuser that emits `constant` for each event of `fuser`: taps, for instance.
    public static func extractConstant<B>(_ constant: A, _ fuser: Fuser<B>) -> Fuser<A> {
        let inner = fuser.connector
        return Fuser(above: fuser.depth, connector: { entry, sink in
            try inner(entry) { _ in try sink(constant) }
        })
    }

    /// A fuser that transforms each event of `fuser` and drops those that become `nil`.
    public static func extractUnlessNil<B>(_ transformation: @escaping (B) -> A?, _ fuser: Fuser<B>) -> Fuser<A> {
        extractUnlessNil(throwing: transformation, fuser)
    }

    /// Like `extractUnlessNil(_:_:)` with a transformation that may throw.
    public static func extractUnlessNil<B>(
        throwing transformation: @escaping (B) throws -> A?,
        _ fuser: Fuser<B>
    ) -> Fuser<A> {
        let inner = fuser.connector
        return Fuser(above: fuser.depth, connector: { entry, sink in
            try inner(entry) { event in
                guard entry.isOpen else { return }
                if let value = try transformation(event) { try sink(value) }
            }
        })
    }
}
