#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A serial executor with one thread of its own: work runs on that thread, one piece at
/// a time, in the order it was handed.
///
/// The thread starts with the executor and ends once the executor is gone and the work
/// handed before has run. No Foundation or Dispatch: a POSIX thread and a condition
/// variable, so the C library has no dependency the Swift core does not.
public final class BackgroundExecutor: LoopExecutor, @unchecked Sendable {
    private let worker: Worker

    /// Starts the thread. Stops the program if the system cannot start one (see
    /// `started()` for a version that throws).
    public convenience init() {
        do {
            try self.init(worker: Worker())
        } catch {
            fatalError("BackgroundExecutor: \(error)")
        }
    }

    /// A new executor with its thread started, or an error if the system cannot start
    /// a thread (too many threads, or no memory for its stack).
    @_spi(Bindings)
    public static func started() throws(ThreadStartError) -> BackgroundExecutor {
        try BackgroundExecutor(worker: Worker())
    }

    private init(worker: Worker) throws(ThreadStartError) {
        try worker.start()
        self.worker = worker
    }

    deinit {
        worker.finish()
    }

    public func execute(_ work: @escaping @Sendable () -> Void) {
        worker.enqueue(work)
    }

    /// True unless called on this executor's own thread, which must not wait for work it
    /// has yet to run.
    public var canWaitForWork: Bool { !isCurrent }

    /// Whether the calling thread is this executor's thread.
    public var isCurrent: Bool { worker.thread.load(ordering: .acquiring) == currentThreadID() }

    /// The thread's queue. Separate from the executor so that the thread does not keep
    /// the executor alive.
    private final class Worker: @unchecked Sendable {
        let monitor = Monitor()
        var queue = RingQueue<() -> Void>()
        var finished = false
        let thread = Atomic<UInt>(0)

        func enqueue(_ work: @escaping () -> Void) {
            monitor.withLock {
                queue.append(work)
                monitor.broadcast()
            }
        }

        func finish() {
            monitor.withLock {
                finished = true
                monitor.broadcast()
            }
        }

        func start() throws(ThreadStartError) {
            let context = Unmanaged.passRetained(self).toOpaque()
            var handle = pthread_t()
            let made = pthread_create(&handle, nil, { context in
                #if canImport(Darwin)
                let worker = Unmanaged<Worker>.fromOpaque(context).takeRetainedValue()
                #else
                let worker = Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue()
                #endif
                worker.run()
                return nil
            }, context)
            guard made == 0 else {
                Unmanaged<Worker>.fromOpaque(context).release()
                throw ThreadStartError(code: made)
            }
            pthread_detach(handle)
        }

        func run() {
            thread.store(currentThreadID(), ordering: .releasing)
            while true {
                let work: (() -> Void)? = monitor.withLock {
                    while queue.isEmpty && !finished { monitor.wait() }
                    return queue.popFirst()
                }
                guard let work else { return }
                work()
            }
        }
    }
}

/// The system could not start a thread: `code` is `pthread_create`'s error number.
@_spi(Bindings)
public struct ThreadStartError: Error, CustomStringConvertible {
    public let code: Int32

    public var description: String {
        "could not start a thread (pthread_create: \(String(cString: strerror(code))))"
    }
}
