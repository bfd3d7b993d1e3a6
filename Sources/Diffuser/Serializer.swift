import Synchronization

/// The lock and run queue shared by every node of one connected diffuser graph.
///
/// Why one per graph: a node's cache is part of the node, and a node may be shared by
/// several trees (`let title = .into(render); .intoAll(title, .map(f, title))`). Locking
/// each root separately would let two threads update that shared cache at once; locking
/// each node would cost a lock per node per run. Instead every graph connected through
/// shared nodes runs under one serializer, and a run takes exactly one lock.
///
/// What it promises:
/// - Runs of nodes of one graph from several threads are serialized; none is lost.
/// - A run started on the thread that is already running the graph (an effect that
///   feeds a new value back, as in any unidirectional loop) is not run nested: it is
///   queued and runs, in order, right after the current pass and before the outermost
///   `run` returns. Caches are therefore never observed half-updated and no lock is
///   taken twice.
///
/// Serializers are created lazily, on a graph's first run, so building a tree costs
/// nothing here. The first run of a root gives its whole tree one serializer, merging
/// those of subtrees that were already run on their own or through another tree.
///
/// Lifetimes: a node keeps the serializer it was first given for its whole life, and a
/// merged serializer keeps the one it was merged into (`forward`), so a run reaches the
/// graph's current serializer by following `forward` from its node's, with no global
/// lock. A merge keeps one serializer (that of the merging thread's outermost pass, if
/// it runs one, else the first the walk met) and the others forward to it; a serializer
/// that forwards is never kept by a later merge, which finds the end of its chain, so
/// the references form no cycle.
@usableFromInline
final class Serializer: @unchecked Sendable {
    /// Guards giving nodes their serializer and merging serializers. Held only for
    /// pointer walks, never while user code runs.
    static let graphLock = Lock()

    /// Held for the whole of a pass over the graph.
    let lock = InlineLock()
    /// The thread holding `lock`, or 0. Written only by that thread, read by any.
    let owner = Atomic<UInt>(0)
    /// The address of the serializer this one was merged into (retained), or 0. Set
    /// once, with `graphLock` and this serializer's `lock` held; never changed again.
    private let forwardAddress = Atomic<UInt>(0)
    /// Runs requested by the owner thread during a pass and not started yet. Touched
    /// only with `lock` held.
    @exclusivity(unchecked) var pending: [() throws -> Void] = []
    /// When the pass in progress started, on `passClock`; written by the owner thread.
    /// Of two passes one thread has open, the outer one started first.
    @exclusivity(unchecked) var passStarted: UInt64 = 0

    /// Numbers passes in the order they start, across threads.
    private static let passClock = Atomic<UInt64>(0)

    init() {}

    deinit {
        if let forward { Unmanaged.passUnretained(forward).release() }
    }

    /// The serializer this one was merged into, if any.
    var forward: Serializer? { forwardUnretained?.takeUnretainedValue() }

    /// `forward` without taking a reference: valid while this serializer lives, since it
    /// holds the one it was merged into.
    var forwardUnretained: Unmanaged<Serializer>? {
        let bits = forwardAddress.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Serializer>.fromOpaque(pointer)
    }

    /// The serializer at the end of `forward`: the graph's current one.
    var current: Serializer { Serializer.current(of: .passUnretained(self)).takeUnretainedValue() }

    /// The serializer at the end of `start`'s `forward` chain, without taking references:
    /// each serializer of the chain holds the next, so the end lives as long as `start`.
    static func current(of start: Unmanaged<Serializer>) -> Unmanaged<Serializer> {
        var top = start
        while let next = top._withUnsafeGuaranteedRef({ $0.forwardUnretained }) { top = next }
        return top
    }

    // MARK: Graph bookkeeping (with graphLock held)

    /// Gives `serializer` to `node` and to every descendant reached through nodes that
    /// have none yet (walked ones included). Each node is visited once in its life.
    private static func adopt(_ node: AnyNode, into serializer: Serializer) {
        guard node.loadSerializer() == nil else { return }
        node.storeSerializer(serializer)
        node.forEachChild { adopt($0, into: serializer) }
    }

    /// What the walk down from a node without a serializer finds (`frontier(of:)`).
    struct Frontier {
        /// The distinct current serializers met, in the order first met.
        var serializers: [Serializer] = []
        /// The identities of `serializers`.
        var seen: Set<ObjectIdentifier> = []
        /// The nodes the walk entered: each once, however many parents share it.
        var nodesWalked = 0
    }

    /// The distinct current serializers met when walking down from `node` through nodes
    /// that have none. Every node entered is marked walked (`AnyNode.walked`) and not
    /// entered again, so a graph that shares nodes (`intoAll(d, d)`, repeated) costs its
    /// number of nodes, not its number of paths. Call with `graphLock` held; then give
    /// the region a serializer (`adopt`, which replaces the marks) or clear the marks
    /// (`node.clearWalked()`) before letting go of the lock.
    static func frontier(of node: AnyNode) -> Frontier {
        var frontier = Frontier()
        walk(node, &frontier)
        return frontier
    }

    private static func walk(_ node: AnyNode, _ frontier: inout Frontier) {
        if let own = node.loadSerializer() {
            let top = own.current
            if frontier.seen.insert(ObjectIdentifier(top)).inserted { frontier.serializers.append(top) }
            return
        }
        guard node.markWalked() else { return }
        frontier.nodesWalked += 1
        node.forEachChild { walk($0, &frontier) }
    }

    /// The serializer of `node`'s graph, making one if needed; `nil` if serializers had
    /// to be merged first (the caller then looks again). Called and returns with
    /// `graphLock` held.
    ///
    /// A node without a serializer may sit above nodes that have one (a leaf already run
    /// through another tree). Every serializer on the frontier of the region without
    /// serializers is merged into one, which the whole region adopts, so a shared node
    /// and all its parents end up under one lock.
    private static func resolveLocked(_ node: AnyNode, me: UInt) -> Serializer? {
        if let own = node.loadSerializer() { return own }
        let roots = frontier(of: node).serializers
        if roots.count <= 1 {
            let target = roots.first ?? Serializer()
            adopt(node, into: target)
            return target
        }
        node.clearWalked()
        graphLock.unlock()
        merge(roots, me: me)
        graphLock.lock()
        return nil
    }

    /// Merges `roots` into one serializer, waiting for passes in progress on other
    /// threads. A serializer the calling thread is running (a new tree run from inside an
    /// effect) is kept as the target, so the pass in progress keeps its lock; when the
    /// thread is running several (a pass of one graph inside an effect of another), the
    /// one of its outermost pass is, whose lock is held until that pass and every pass
    /// nested in it are over. Runs queued on the others and not started yet move to it.
    ///
    /// Two threads that each run a graph and, from inside an effect, run a new tree over
    /// both graphs wait for each other, like any two locks taken in opposite orders.
    private static func merge(_ roots: [Serializer], me: UInt) {
        let toLock = roots.filter { $0.owner.load(ordering: .acquiring) != me }
        lockAll(toLock)
        graphLock.lock()
        // Another thread may have merged some of them meanwhile; merge what is left, but
        // only serializers whose lock is held here (by this merge or by this thread's
        // pass): one merged into a serializer this thread does not hold may be running.
        // The caller then looks for the roots again and merges those.
        var tops: [Serializer] = []
        var seen: Set<ObjectIdentifier> = []
        for serializer in roots {
            let top = serializer.current
            if seen.insert(ObjectIdentifier(top)).inserted { tops.append(top) }
        }
        let locked = Set(toLock.lazy.map(ObjectIdentifier.init))
        let allHeld = tops.allSatisfy { top in
            locked.contains(ObjectIdentifier(top)) || top.owner.load(ordering: .relaxed) == me
        }
        let running = tops.filter { $0.owner.load(ordering: .relaxed) == me }
        if allHeld, let target = running.min(by: { $0.passStarted < $1.passStarted }) ?? tops.first {
            for other in tops where other !== target {
                let bits = UInt(bitPattern: Unmanaged.passRetained(target).toOpaque())
                other.forwardAddress.store(bits, ordering: .releasing)
                if !other.pending.isEmpty {
                    target.pending.append(contentsOf: other.pending)
                    other.pending.removeAll()
                }
            }
        }
        graphLock.unlock()
        for serializer in toLock.reversed() { serializer.lock.unlock() }
    }

    /// Takes the locks of `serializers`, never waiting for one while holding another: a
    /// merge holds none of them while it waits, so it cannot close a circle with passes
    /// that wait for each other's graphs one way (A's effect running B while the merge
    /// of A and B waits). It waits for the lock it last found held, then tries the
    /// others, and if one is held lets go of those it took and starts again.
    private static func lockAll(_ serializers: [Serializer]) {
        guard !serializers.isEmpty else { return }
        var waitFor = 0
        while true {
            serializers[waitFor].lock.lock()
            var held: Int?
            for index in serializers.indices where index != waitFor {
                if !serializers[index].lock.tryLock() {
                    held = index
                    break
                }
            }
            guard let held else { return }
            for index in serializers.indices where index != held && (index == waitFor || index < held) {
                serializers[index].lock.unlock()
            }
            waitFor = held
        }
    }

    // MARK: Running

    /// Runs `pass` over `node`'s graph with the graph's lock held, or queues the pass
    /// that `queued` makes when the calling thread is already running that graph.
    ///
    /// Errors thrown by `pass` propagate. Queued passes run after the current one even if
    /// it failed; when the outermost caller's own pass succeeded, the first error of a
    /// queued pass is thrown to it, since nobody else can receive it.
    ///
    /// `node` lives until this returns (the caller lends it; `withExtendedLifetime`
    /// below says so): the serializers are used without taking references, and so are
    /// the nodes of the pass (a fan-out calls its children unretained), all of which
    /// `node` keeps alive.
    @usableFromInline
    static func perform(on node: AnyNode, _ pass: () throws -> Void, queued: () -> () throws -> Void) throws {
        try withExtendedLifetime(node) { try performHolding(node, pass, queued: queued) }
    }

    /// `perform`, with `node` alive for the whole call.
    private static func performHolding(
        _ node: AnyNode, _ pass: () throws -> Void, queued: () -> () throws -> Void
    ) throws {
        let me = currentThreadID()
        // Serializers are used unretained here: `node` (held by the caller) holds its
        // serializer, and every serializer holds the one it was merged into, so the
        // whole chain outlives this call. Taking references would cost two atomic
        // operations per serializer on every run.
        var serializer: Unmanaged<Serializer>
        if let own = node.loadSerializerUnretained() {
            serializer = current(of: own)
        } else {
            graphLock.lock()
            var found = resolveLocked(node, me: me)
            while found == nil { found = resolveLocked(node, me: me) }
            graphLock.unlock()
            // `node` now holds a serializer, the one found or one merged into it.
            serializer = current(of: .passUnretained(found.unsafelyUnwrapped))
        }
        while true {
            let next: Unmanaged<Serializer>? = try serializer._withUnsafeGuaranteedRef { serializer in
                if serializer.owner.load(ordering: .acquiring) == me {
                    // Reentrant: the calling thread is inside a pass of this graph.
                    serializer.pending.append(queued())
                    return nil
                }
                serializer.lock.lock()
                if let next = serializer.forwardUnretained {
                    // Merged into another serializer while we waited: follow it.
                    serializer.lock.unlock()
                    return current(of: next)
                }
                try serializer.run(pass, me: me)
                return nil
            }
            guard let next else { return }
            serializer = next
        }
    }

    /// Runs `pass` and the passes it queues, with `lock` already held by the calling
    /// thread; releases `lock` before returning.
    private func run(_ pass: () throws -> Void, me: UInt) throws {
        passStarted = Serializer.passClock.wrappingAdd(1, ordering: .relaxed).newValue
        owner.store(me, ordering: .releasing)
        var failure: Error?
        do {
            try pass()
        } catch {
            failure = error
        }
        if !pending.isEmpty { drain(firstFailure: &failure) }
        owner.store(0, ordering: .releasing)
        lock.unlock()
        if let failure { throw failure }
    }

    /// Runs the queued passes in order, keeping the first failure. A pass is taken off
    /// the queue before it starts, so that the queue holds only runs not started yet
    /// (which a merge during the pass may move to another serializer).
    private func drain(firstFailure: inout Error?) {
        while !pending.isEmpty {
            let next = pending.removeFirst()
            do {
                try next()
            } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
    }
}
