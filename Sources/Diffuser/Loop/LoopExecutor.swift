/// Where a loop, a feedback or an effect handler runs its work.
///
/// A loop never runs two of its steps at once, whatever the executor: the executor only
/// decides which thread drains the loop's queue. Three come with the library:
/// - `CallerExecutor` (the default): the thread that dispatches an event into an idle
///   loop drains the queue before `dispatch` returns;
/// - `BackgroundExecutor`: one serial background thread;
/// - `ManualExecutor`: nothing runs until a test says so.
///
/// Any other (a main-thread queue in an app) is a value of this protocol, or an
/// `AnyLoopExecutor` made from a closure:
///
/// ```swift
/// let main = AnyLoopExecutor { work in DispatchQueue.main.async { work() } }
/// ```
///
/// The loop's update, observers and inline handlers and feedbacks run where the executor
/// runs its work: a loop whose callbacks are isolated to the main actor needs an executor
/// that runs on the main thread, and the compiler does not check it.
public protocol LoopExecutor {
    /// Runs `work` once, now or later, on a thread of the executor's choosing. Work
    /// handed to a serial executor must run in the order it was handed. `work` may be
    /// sent to any thread (a queue, a task on the main actor).
    ///
    /// An executor may run `work` at once, inside `execute`. When that work is the rest
    /// of a loop's queue handed back after `stepsPerRun` entries, it returns at once and
    /// the drain that handed it over goes on with the queue once `execute` returns, so
    /// that a long queue does not take a stack level per piece: those steps run inside
    /// the piece of work that was already running, not inside this `execute`. A stop or
    /// dispose made inside `execute` after such work returned comes from that drain, as
    /// one made inside a step: it does not wait, and the queued events are dropped.
    func execute(_ work: @escaping @Sendable () -> Void)

    /// The most queued entries a loop processes in one piece of work before handing
    /// the rest to `execute` again, so that a busy loop lets the executor's other work
    /// in. Default: no limit.
    var stepsPerRun: Int { get }

    /// Whether the calling thread may wait for work already handed to `execute`: true
    /// when that work will run without the calling thread's help. A loop's `dispose()`
    /// then waits for the events it accepted to be handled; otherwise it drops them (the
    /// inspector sees each). Default: false. Asked on the calling thread when a loop
    /// starts, stops or is disposed, before the loop takes its lock: the answer may use
    /// the loop.
    var canWaitForWork: Bool { get }
}

extension LoopExecutor {
    public var stepsPerRun: Int { .max }
    public var canWaitForWork: Bool { false }
}

/// Runs work at once on the calling thread: a loop with this executor is drained by
/// whoever dispatches into it while it is idle.
public struct CallerExecutor: LoopExecutor {
    /// The executor of the calling thread.
    public init() {}

    public func execute(_ work: @escaping @Sendable () -> Void) { work() }

    /// Work handed to this executor is already running, on the thread that handed it.
    public var canWaitForWork: Bool { true }
}

/// An executor made from a closure, for a queue the library does not know (a main-thread
/// queue, an event loop of a toolkit).
public struct AnyLoopExecutor: LoopExecutor {
    private let schedule: (@escaping @Sendable () -> Void) -> Void
    /// How many entries a loop handles in one piece of work it hands to `schedule`.
    public let stepsPerRun: Int

    /// An executor that hands work to `schedule`. `stepsPerRun` bounds how many entries
    /// of a loop's queue one piece of work processes.
    public init(stepsPerRun: Int = .max, _ schedule: @escaping (@escaping @Sendable () -> Void) -> Void) {
        self.schedule = schedule
        self.stepsPerRun = Swift.max(1, stepsPerRun)
    }

    public func execute(_ work: @escaping @Sendable () -> Void) { schedule(work) }
}

extension LoopExecutor where Self == CallerExecutor {
    /// The calling thread (`CallerExecutor`).
    public static var caller: CallerExecutor { CallerExecutor() }
}
