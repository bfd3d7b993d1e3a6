import Foundation
import XCTest
@testable import Diffuser

/// A loop closed from inside its own update, and loops whose owners let go while their
/// executors still hold work: what the fuzzer of the C API asked about, in Swift.
final class LoopClosingTests: XCTestCase {
    /// Something an update holds, to see whether the loop that holds the update is gone.
    final class Token {}

    func testDisposeFromInsideTheUpdateEndsTheStepThere() {
        let log = Recorder<String>()
        let traces = TraceLog()
        let journal = Journal<Counter, CounterEvent>()
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: Update<Counter, CounterEvent, CounterEffect> { model, event in
                if event == .fail {
                    loopRef!.dispose()
                    log.append("disposed in the update")
                    return .next(Counter(count: 99), effects: [.note("never handled")])
                }
                return try counterUpdate(model, event)
            },
            handlers: [EffectHandler { effect, _ in log.append("effect \(effect)") }],
            journal: journal,
            inspector: traces.inspector
        )
        loopRef = loop
        loop.observe { log.append("model \($0.count)") }
        loop.dispatch(.add(2))
        loop.dispatch(.fail)
        XCTAssertEqual(log.values, ["model 0", "model 2", "disposed in the update"],
                       "nothing of the step runs after the update that disposed the loop")
        XCTAssertEqual(loop.model, Counter(count: 2), "its model is not stored")
        let last = Array(traces.lines.values.suffix(2))
        XCTAssertEqual(last.first, "disposed Counter(2)")
        XCTAssertTrue(last.last?.hasPrefix("stepped fail on Counter(2)") == true,
                      "the event's one trace comes right after the dispose, and nothing after it: \(last)")
        XCTAssertEqual(journal.events, [.add(2)], "the journal does not record the step that was cut short")
        XCTAssertEqual(journal.replay(counterUpdate), [Counter(), Counter(count: 2)],
                       "so a replay re-derives exactly the models the loop published")
        loopRef = nil
    }

    func testStopFromInsideTheUpdateKeepsTheModelForTheNextRun() {
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: Update<Counter, CounterEvent, CounterEffect> { model, event in
                if event == .silent { loopRef!.stop() }
                return .next(Counter(count: model.count + 10))
            }
        )
        loopRef = loop
        loop.dispatch(.increment)
        loop.dispatch(.silent)
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.model.count, 10, "the stopping step stored nothing")
        XCTAssertTrue(loop.start())
        loop.dispatch(.increment)
        XCTAssertEqual(loop.model.count, 20)
        loopRef = nil
    }

    /// A stop from the update drops the events queued behind the step; the inspector,
    /// hearing the first drop, disposes the loop (nested in the stop) and then disposes it
    /// again from another thread. That second dispose meets the stop, which is still
    /// reporting its drops: it returns only once the stop has ended, so nothing is
    /// reported after it returned. Before, the nested dispose ended the "close under way"
    /// and the other thread's dispose returned at once.
    func testADisposeMeetingAStopThatANestedDisposeInterruptedWaitsForTheStop() {
        final class State: @unchecked Sendable {
            let lock = NSLock()
            var loop: Loop<Int, Int, Never>?
            var otherReturned = false
            var afterOtherReturned: [String] = []
        }
        let state = State()
        let loop = Loop<Int, Int, Never>(
            model: 0,
            update: Update { model, event in
                if event == 0 {
                    let loop = state.lock.withLock { state.loop! }
                    for i in 1...5 { loop.dispatch(i) }             // queued behind this step
                    loop.stop()                                    // drops 1...5
                }
                return .next(model + 1)
            },
            inspector: { trace in
                let line = TraceLog.describe(trace)
                let loop = state.lock.withLock {
                    if state.otherReturned { state.afterOtherReturned.append(line) }
                    return state.loop
                }
                guard case .dropped(1, _) = trace, let loop else { return }
                loop.dispose()                                      // nested in the stop
                let returned = DispatchSemaphore(value: 0)
                Thread {
                    loop.dispose()                                  // meets the stop
                    state.lock.withLock { state.otherReturned = true }
                    returned.signal()
                }.start()
                _ = returned.wait(timeout: .now() + 0.5)            // returns only once the stop ends
            })
        state.lock.withLock { state.loop = loop }
        loop.dispatch(0)
        usleep(100_000)
        state.lock.withLock {
            XCTAssertTrue(state.otherReturned)
            XCTAssertEqual(state.afterOtherReturned, [], "nothing is reported after the second dispose returned")
            state.loop = nil
        }
    }

    func testALoopWhoseExecutorStillHoldsWorkIsFreedWithIt() {
        weak var token: Token?
        do {
            let held = Token()
            token = held
            let executor = ManualExecutor()
            let handlerExecutor = ManualExecutor()
            let loop = Loop(
                model: Counter(),
                update: Update<Counter, CounterEvent, CounterEffect> { model, event in
                    withExtendedLifetime(held) {}
                    return try counterUpdate(model, event)
                },
                handlers: [EffectHandler(on: handlerExecutor) { _, _ in }],
                executor: executor
            )
            executor.runAll()
            loop.dispatch(.increment)
            executor.runNext()                 // the step: its effect waits on handlerExecutor
            loop.dispatch(.increment)          // queued: a drain waits on executor
            XCTAssertGreaterThan(executor.pending + handlerExecutor.pending, 1)
        }
        XCTAssertNil(token, "the loop, its update and its executors are gone with their owners")
    }
}
