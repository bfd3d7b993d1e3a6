import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Testing and inspection: update specs, the manual executor, the inspector; keyed
/// coalescing and the journal. Executors: `LoopExecutorTests`.
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

    /// A step's trace comes right after its update, before the model is stored: the
    /// inspector reads the model before the step, and an observer the new one.
    func testTheInspectorHearsAStepBeforeItsModelIsStored() {
        let read = Recorder<String>()
        var loop: Loop<Counter, CounterEvent, CounterEffect>?
        loop = Loop(model: Counter(), update: counterUpdate, inspector: { trace in
            if case .stepped(_, let before, let next) = trace {
                read.append("inspector: \(loop!.model) before \(before), next \(next.model.map(String.init(describing:)) ?? "none")")
            }
        })
        let observing = loop!.observe { model in read.append("observer: \(loop!.model) heard \(model)") }
        loop!.dispatch(.increment)
        XCTAssertEqual(read.values, [
            "observer: Counter(0) heard Counter(0)",
            "inspector: Counter(0) before Counter(0), next Counter(1)",
            "observer: Counter(1) heard Counter(1)",
        ])
        observing.dispose()
        loop!.dispose()
        loop = nil // the inspector holds it
    }

    /// A restart's trace comes before its model is stored, as a step's does: the
    /// inspector reads the kept model, an observer the one `restart` gave.
    func testTheInspectorHearsARestartBeforeItsModelIsStored() {
        let read = Recorder<String>()
        var loop: Loop<Counter, CounterEvent, CounterEffect>?
        loop = Loop(
            model: Counter(),
            update: counterUpdate,
            restart: { kept in First(Counter(count: kept.count + 10)) },
            inspector: { trace in
                if case .started(let first) = trace {
                    read.append("inspector: \(loop?.model.description ?? "no loop yet") starting \(first.model)")
                }
            }
        )
        let observing = loop!.observe { model in read.append("observer: \(loop!.model) heard \(model)") }
        loop!.stop()
        loop!.start()
        XCTAssertEqual(read.values, [
            "inspector: no loop yet starting Counter(0)",
            "observer: Counter(0) heard Counter(0)",
            "inspector: Counter(0) starting Counter(10)",
            "observer: Counter(10) heard Counter(10)",
        ])
        observing.dispose()
        loop!.dispose()
        loop = nil // the inspector holds it
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
}
