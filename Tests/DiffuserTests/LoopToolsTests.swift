import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Testing and inspection: update specs, the manual executor, the inspector; keyed
/// coalescing and the journal; executors.
final class LoopToolsTests: XCTestCase {
    // MARK: UpdateSpec

    func testUpdateSpecGivenWhenThen() throws {
        let spec = UpdateSpec(counterUpdate)
        try spec.given(Counter()).when(.increment, .add(2), .silent).then(
            model: Counter(count: 3),
            effects: [.note("inc->1")]
        )
        let outcome = spec.given(Counter(count: 1)).when(.increment, .fail, .increment)
        XCTAssertEqual(outcome.model, Counter(count: 3), "a failing update leaves the model for the next event")
        XCTAssertEqual(outcome.models.map(\.count), [2, 3])
        XCTAssertEqual(outcome.errors.count, 1)
        XCTAssertEqual(outcome.lastNext, .next(Counter(count: 3), effects: [.note("inc->3")]))
        XCTAssertThrowsError(try outcome.thenNoError())
        XCTAssertEqual(spec.given(Counter()).when(.silent).lastNext, .noChange)
    }

    func testUpdateSpecMismatchSaysWhatDiffered() {
        let spec = UpdateSpec(counterUpdate)
        XCTAssertThrowsError(try spec.given(Counter()).when(.increment).then(model: Counter(count: 2))) { error in
            XCTAssertEqual("\(error)", "expected the model Counter(2), got Counter(1)")
        }
        XCTAssertThrowsError(try spec.given(Counter()).when(.increment).then(effects: [])) { error in
            XCTAssertEqual("\(error)", "expected the effects [], got [DiffuserTests.CounterEffect.note(\"inc->1\")]")
        }
        var checked = false
        spec.given(Counter()).when([]).then { outcome in
            checked = true
            XCTAssertTrue(outcome.steps.isEmpty)
        }
        XCTAssertTrue(checked)
    }

    // MARK: Manual executor and inspector

    func testManualExecutorStepsTheLoopOneEntryAtATime() {
        let executor = ManualExecutor()
        let models = Recorder<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate, executor: executor)
        loop.observe { models.append($0.count) }
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(models.values, [])
        XCTAssertEqual(executor.pending, 1)
        XCTAssertTrue(executor.runNext())   // the start
        XCTAssertEqual(models.values, [])
        XCTAssertTrue(executor.runNext())   // the observer's registration
        XCTAssertEqual(models.values, [0])
        XCTAssertTrue(executor.runNext())
        XCTAssertEqual(models.values, [0, 1])
        XCTAssertEqual(executor.runAll(), 1)
        XCTAssertEqual(models.values, [0, 1, 2])
        XCTAssertFalse(executor.runNext())
    }

    /// The inspector sees every start, event (stepped, failed or dropped), error, stop
    /// and dispose, in order.
    func testInspectorSeesEverything() {
        let traces = TraceLog()
        let executor = ManualExecutor()
        let loop = Loop(
            model: Counter(),
            startEffects: [.note("start")],
            update: counterUpdate,
            executor: executor,
            coalescing: { event in event == .silent ? "silent" : nil },
            inspector: traces.inspector
        )
        loop.dispatch(.increment)
        loop.dispatch(.silent)
        loop.dispatch(.fail)
        loop.dispatch(.silent)
        executor.runAll()
        loop.stop()
        loop.start()
        executor.runAll()
        loop.dispatch(.increment)
        loop.dispose()
        XCTAssertEqual(traces.lines.values, [
            "started Counter(0) [DiffuserTests.CounterEffect.note(\"start\")]",
            "stepped increment on Counter(0) -> Next(model: Counter(1), effects: [DiffuserTests.CounterEffect.note(\"inc->1\")])",
            "dropped silent coalesced",
            "stepped silent on Counter(1) -> Next(no model, effects: [])",
            "failed fail on Counter(1)",
            "stopped Counter(1)",
            "started Counter(1) []",
            "dropped increment disposed",
            "disposed Counter(1)",
        ])
    }

    // MARK: Coalescing

    /// A queued event with the same key is replaced in place: it keeps its place in
    /// the queue and the newer event takes it.
    func testCoalescingReplacesInPlace() {
        enum Input: Equatable, Sendable { case move(Int), click(Int) }
        let executor = ManualExecutor()
        let handled = Recorder<Input>()
        let traces = Recorder<String>()
        let loop = Loop<Int, Input, Never>(
            model: 0,
            reducer: { model, input in handled.append(input); return model + 1 },
            executor: executor,
            coalescing: { input in if case .move = input { return "move" } else { return nil } },
            inspector: { traces.append(TraceLog.describe($0)) }
        )
        executor.runAll()
        loop.dispatch(.move(1))
        loop.dispatch(.click(1))
        loop.dispatch(.move(2))
        loop.dispatch(.click(2))
        loop.dispatch(.move(3))
        executor.runNext()                  // handles move(3), in move(1)'s place
        loop.dispatch(.move(4))             // a new place: the old one was handled
        executor.runAll()
        XCTAssertEqual(handled.values, [.move(3), .click(1), .click(2), .move(4)])
        XCTAssertEqual(traces.values.filter { $0.hasPrefix("dropped") }, [
            "dropped move(1) coalesced", "dropped move(2) coalesced",
        ])
        XCTAssertEqual(loop.model, 4)
    }

    /// An event replaced in the queue is released outside the loop's lock, as a replaced
    /// model is: what it frees may use the loop. (Without an inspector, which would keep
    /// it for its trace.)
    func testCoalescedEventIsReleasedOutsideTheLoopsLock() {
        struct Move: @unchecked Sendable { let token: FreeHook }
        let executor = ManualExecutor()
        let loop = Loop<Int, Move, Never>(
            model: 0,
            reducer: { model, _ in model + 1 },
            executor: executor,
            coalescing: { _ in "move" }
        )
        executor.runAll()
        let freed = Recorder<Bool>()
        loop.dispatch(Move(token: FreeHook { freed.append(loop.isRunning) }))
        guard returnsInTime("a replaced event freed under the loop's lock", holding: loop, {
            loop.dispatch(Move(token: FreeHook {}))
        }) else { return }
        XCTAssertEqual(freed.values, [true])
        executor.runAll()
        XCTAssertEqual(loop.model, 1)
    }

    /// A coalesced event belongs to the job that sent the event now in its place: it is
    /// dropped if that job is cancelled before its turn, not if the job of the event it
    /// replaced is.
    func testCoalescedEventBelongsToTheJobThatSentIt() {
        enum Input: Equatable, Sendable { case move(Int), spawn }
        let executor = ManualExecutor()
        let handled = Recorder<Input>()
        let traces = Recorder<String>()
        let jobs = Recorder<Job<Input>>()
        let loop = Loop<Int, Input, String>(
            model: 0,
            update: Update { model, input in
                handled.append(input)
                return input == .spawn ? .next(model, effects: ["work"]) : .next(model + 1)
            },
            handlers: [EffectHandler { _, job in jobs.append(job) }],
            executor: executor,
            coalescing: { input in if case .move = input { return "move" } else { return nil } },
            inspector: { traces.append(TraceLog.describe($0)) }
        )
        loop.dispatch(.spawn)
        loop.dispatch(.spawn)
        executor.runAll()
        let (first, second) = (jobs.values[0], jobs.values[1])
        XCTAssertTrue(first.send(.move(1)))
        XCTAssertTrue(second.send(.move(2)))    // in move(1)'s place, now the second job's
        first.cancel()
        executor.runAll()
        XCTAssertTrue(second.send(.move(3)))
        second.cancel()
        executor.runAll()
        XCTAssertEqual(handled.values, [.spawn, .spawn, .move(2)])
        XCTAssertEqual(traces.values.filter { $0.hasPrefix("dropped") }, [
            "dropped move(1) coalesced", "dropped move(3) cancelledWork",
        ])
        loop.dispose()
    }

    /// The key is asked for on the dispatching thread before the loop decides to accept
    /// the event, so a stopped loop asks for it too, then refuses the event unhandled.
    func testCoalescingKeyIsAskedBeforeARefusal() {
        let keys = Recorder<Int>()
        let handled = Recorder<Int>()
        let loop = Loop<Int, Int, Never>(
            model: 0,
            reducer: { model, event in handled.append(event); return model + event },
            coalescing: { event in keys.append(event); return nil },
            autostart: false
        )
        XCTAssertFalse(loop.dispatch(1), "a loop not started refuses events")
        XCTAssertThrowsError(try loop.tryDispatch(2)) { XCTAssertEqual($0 as? LoopError, .stopped) }
        loop.start()
        XCTAssertTrue(loop.dispatch(3))
        XCTAssertEqual(keys.values, [1, 2, 3])
        XCTAssertEqual(handled.values, [3])
        XCTAssertEqual(loop.model, 3)
    }

    // MARK: Journal

    func testJournalReplaysEveryModelWithoutEffects() {
        let journal = Journal<Counter, CounterEvent>()
        let effects = Recorder<CounterEffect>()
        let published = Recorder<Counter>()
        let loop = Loop(
            model: Counter(),
            startEffects: [.note("start")],
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in
                effects.append(effect)
                if case .echo(let event) = effect { job.send(event) }
            }],
            journal: journal,
            restart: { First(Counter(count: $0.count * 10)) }
        )
        loop.observe { published.append($0) }
        loop.dispatch(.increment)
        loop.dispatch(.effects([.echo(.add(5))]))
        loop.dispatch(.fail)
        loop.dispatch(.silent)
        loop.stop()
        loop.start()
        loop.dispatch(.request("x"))
        loop.dispose()
        let effectsBefore = effects.count

        let replayed = journal.replay(counterUpdate)
        XCTAssertEqual(replayed, published.values)
        XCTAssertEqual(replayed.map(\.count), [0, 1, 6, 60, 60])
        XCTAssertEqual(effects.count, effectsBefore, "replay runs no effect")
        XCTAssertEqual(journal.events, [.increment, .effects([.echo(.add(5))]), .add(5), .fail, .silent, .request("x")])
        journal.clear()
        XCTAssertTrue(journal.entries.isEmpty)
    }

    /// `clear()` releases the records once the journal's lock is given back: what they
    /// free may use the journal (here an event dispatched into its loop is recorded).
    func testJournalClearReleasesTheRecordsOutsideItsLock() {
        struct Tap: @unchecked Sendable { let token: FreeHook? }
        let journal = Journal<Int, Tap>()
        let loop = Loop<Int, Tap, Never>(model: 0, reducer: { model, _ in model + 1 }, journal: journal)
        loop.dispatch(Tap(token: FreeHook { loop.dispatch(Tap(token: nil)) }))
        guard returnsInTime("a record freed under the journal's lock", holding: journal, { journal.clear() }) else {
            return
        }
        XCTAssertEqual(loop.model, 2)
        XCTAssertEqual(journal.events.count, 1, "the event the freed record dispatched")
        loop.dispose()
    }

    // MARK: Executors

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
