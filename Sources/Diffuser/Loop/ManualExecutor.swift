/// An executor that runs nothing until told to: a test hands a loop this executor and
/// steps it, one queued entry at a time or until nothing is left.
///
/// ```swift
/// let executor = ManualExecutor()
/// let loop = Loop(model: 0, update: update, executor: executor)
/// loop.dispatch(.increment)      // queued, not handled yet
/// executor.runNext()             // the loop's start
/// executor.runAll()              // everything else, including what it dispatches
/// ```
///
/// A loop on this executor handles one queued entry per piece of work, so each
/// `runNext()` is one step. Thread-safe: work may be handed from any thread; it runs on
/// the thread that calls `runNext` or `runAll`.
public final class ManualExecutor: LoopExecutor, @unchecked Sendable {
    private let lock = Lock()
    private var queue = RingQueue<() -> Void>()

    /// An executor holding no work.
    public init() {}

    public func execute(_ work: @escaping @Sendable () -> Void) {
        lock.withLock { _ = queue.append(work) }
    }

    public var stepsPerRun: Int { 1 }

    /// How many pieces of work wait.
    public var pending: Int { lock.withLock { queue.count } }

    /// Runs the oldest piece of work, if any; returns whether there was one.
    @discardableResult
    public func runNext() -> Bool {
        guard let work = lock.withLock({ queue.popFirst() }) else { return false }
        work()
        return true
    }

    /// Runs work until none is left, including work handed in meanwhile; returns how
    /// many pieces ran.
    @discardableResult
    public func runAll() -> Int {
        var ran = 0
        while runNext() { ran += 1 }
        return ran
    }
}
