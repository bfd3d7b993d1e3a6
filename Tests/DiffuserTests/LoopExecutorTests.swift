import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Executors: the background executor, executors written by users (steps per run, a
/// queue, one that runs work at once), what a loop asks of them and when, and a handler
/// on an executor of its own.
final class LoopExecutorTests: XCTestCase {
    func testBackgroundExecutorRunsStepsOnItsThread() {
        let background = BackgroundExecutor()
        let onBackground = Recorder<Bool>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { _, _ in onBackground.append(background.isCurrent) }],
            executor: background
        )
        XCTAssertFalse(background.isCurrent)
        for _ in 0..<10 { loop.dispatch(.increment) }
        XCTAssertTrue(eventually { loop.model.count == 10 })
        XCTAssertTrue(eventually { onBackground.count == 10 })
        XCTAssertEqual(Set(onBackground.values), [true])
        loop.dispose()
    }

    /// A user executor (a main-queue stand-in) with a bound on steps per run: the loop
    /// hands back the rest of its queue, and no step overlaps another.
    func testUserExecutorWithStepsPerRun() {
        let queue = DispatchQueue(label: "main-like")
        let runs = Recorder<Int>()
        let executor = AnyLoopExecutor(stepsPerRun: 3) { work in
            queue.async {
                runs.append(1)
                work()
            }
        }
        let loop = Loop(model: Counter(), update: counterUpdate, executor: executor)
        queue.sync {
            for _ in 0..<10 { loop.dispatch(.increment) }
        }
        XCTAssertTrue(eventually { loop.model.count == 10 })
        XCTAssertGreaterThanOrEqual(runs.count, 4, "11 entries, 3 a run")
        loop.dispose()
    }

    /// An executor that hands the loop's work to a queue (a main-queue stand-in) is
    /// written without unsafe escapes in Swift 6: the work is `@Sendable`. Both forms, a
    /// type of its own and `AnyLoopExecutor`, run every step on the queue.
    func testAnExecutorHandsWorkToAQueueWithoutUnsafeEscapes() {
        struct QueueExecutor: LoopExecutor {
            let queue: DispatchQueue
            func execute(_ work: @escaping @Sendable () -> Void) { queue.async { work() } }
        }
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "main-like")
        queue.setSpecific(key: key, value: 1)
        let executors: [LoopExecutor] = [
            QueueExecutor(queue: queue),
            AnyLoopExecutor { work in queue.async { work() } },
        ]
        for executor in executors {
            let onQueue = Recorder<Bool>()
            let loop = Loop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler { _, _ in onQueue.append(DispatchQueue.getSpecific(key: key) == 1) }],
                executor: executor
            )
            for _ in 0..<5 { loop.dispatch(.increment) }
            XCTAssertTrue(eventually { onQueue.count == 5 })
            XCTAssertEqual(Set(onQueue.values), [true])
            loop.dispose()
        }
    }

    /// An executor that runs work at once, inside `execute`, with one step a run: each
    /// hand-back is run by the drain that made it, in a loop, not one stack level deeper
    /// (200,000 levels would overflow the stack). Every piece of work still runs.
    func testAnExecutorThatRunsWorkAtOnceDoesNotRecurse() {
        let pieces = Recorder<Int>()
        let executor = AnyLoopExecutor(stepsPerRun: 1) { work in
            pieces.append(1)
            work()
        }
        let events = 200_000
        let loop = Loop(model: Counter(), update: counterUpdate, executor: executor)
        let observation = loop.subscribe { model in
            if model.count == 1 {
                for _ in 1..<events { loop.dispatch(.increment) } // queued behind this step
            }
        }
        loop.dispatch(.increment)
        XCTAssertEqual(loop.model.count, events)
        XCTAssertGreaterThanOrEqual(pieces.count, events, "one piece of work a step")
        observation.dispose()
        loop.dispose()
    }

    /// An executor that runs work at once and says its thread may wait for work, and that
    /// disposes the loop inside `execute` right after running a handed-back drain: that
    /// drain goes on once `execute` returns, on this very thread, so the dispose must not
    /// wait for it (it would wait for ever). It ends the run as a dispose from a step
    /// does: the queued events are dropped.
    func testADisposeInsideExecuteAfterAHandBackDoesNotWaitForItself() {
        final class DisposingExecutor: LoopExecutor, @unchecked Sendable {
            weak var loop: Loop<Counter, CounterEvent, CounterEffect>?
            var disposeAfterNextWork = false
            var stepsPerRun: Int { 1 }
            var canWaitForWork: Bool { true }
            func execute(_ work: @escaping () -> Void) {
                let dispose = disposeAfterNextWork
                disposeAfterNextWork = false
                work()
                if dispose { loop?.dispose() }
            }
        }
        let finished = DispatchSemaphore(value: 0)
        let traces = TraceLog()
        let counts = Recorder<Int>()
        Thread {
            let executor = DisposingExecutor()
            let loop = Loop(model: Counter(), update: counterUpdate, executor: executor, inspector: traces.inspector)
            executor.loop = loop
            let observation = loop.subscribe { model in
                if model.count == 1 {
                    for _ in 0..<3 { loop.dispatch(.increment) } // queued behind this step
                    executor.disposeAfterNextWork = true // the hand-back after this step
                }
            }
            loop.dispatch(.increment)
            counts.append(loop.model.count)
            observation.dispose()
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success, "the dispose waited for its own thread")
        XCTAssertEqual(counts.values, [1])
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("dropped") }.count, 3, "\(traces.lines.values)")
    }

    /// A close asks the executor whether it may wait for the drain it holds without the
    /// loop's lock: `canWaitForWork` is the executor's own code, which may use the loop.
    func testAnExecutorIsAskedWhetherItMayWaitOutsideTheLoopsLock() {
        final class QueueingExecutor: LoopExecutor, @unchecked Sendable {
            weak var loop: Loop<Counter, CounterEvent, CounterEffect>?
            let work = Recorder<() -> Void>()
            let running = Recorder<Bool>()
            func execute(_ work: @escaping @Sendable () -> Void) { self.work.append(work) }
            var canWaitForWork: Bool {
                if let loop { running.append(loop.isRunning) }
                return false
            }
        }
        let executor = QueueingExecutor()
        let traces = TraceLog()
        let loop = Loop(model: Counter(), update: counterUpdate, executor: executor, inspector: traces.inspector)
        executor.loop = loop
        for work in executor.work.values { work() } // the start
        executor.work.clear()
        loop.dispatch(.increment) // its drain handed to the executor, not run
        guard returnsInTime("the executor was asked under the loop's lock", holding: loop, { loop.dispose() }) else {
            return
        }
        XCTAssertEqual(executor.running.count, 1, "asked once, by the dispose")
        XCTAssertTrue(loop.isDisposed)
        XCTAssertEqual(loop.model.count, 0)
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("dropped") }.count, 1, "\(traces.lines.values)")
    }

    func testHandlerOnItsOwnExecutorReportsErrorsAndSendsBack() {
        let handlerExecutor = ManualExecutor()
        let traces = TraceLog()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [
                .matching({ effect -> CounterEvent? in
                    if case .echo(let event) = effect { return event } else { return nil }
                }, on: handlerExecutor) { event, job in
                    if event == .fail { throw TestFailure(tag: "handler") }
                    job.send(event)
                },
                .events { effect in effect == .note("inc->1") ? [.add(10)] : [] },
            ],
            inspector: traces.inspector
        )
        loop.dispatch(.effects([.echo(.increment), .echo(.fail)]))
        XCTAssertEqual(loop.model.count, 0)
        XCTAssertEqual(handlerExecutor.runAll(), 2)
        XCTAssertEqual(loop.model.count, 11)
        XCTAssertTrue(traces.lines.values.contains("effectFailed echo(DiffuserTests.CounterEvent.fail)"))
        loop.dispose()
        XCTAssertEqual(handlerExecutor.runAll(), 0)
    }

    /// Work handed to a feedback's executor before a dispose never starts after it.
    func testWorkOnAnExecutorDoesNotStartAfterDispose() {
        let feedbackExecutor = ManualExecutor()
        let ran = Flag()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work(on: feedbackExecutor) { _, _ in ran.raise() }]
        )
        XCTAssertEqual(feedbackExecutor.pending, 1)
        loop.dispose()
        feedbackExecutor.runAll()
        XCTAssertFalse(ran.isRaised)
    }
}
