import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Promises of the loop's doc comments that the other loop tests do not pin down.
final class LoopPromiseTests: XCTestCase {
    /// `Job.onCancel`: "Never runs if the job finishes first." A job that finished, then
    /// saw its loop stop, was never cancelled: an action given to it afterwards must not
    /// run (it does now: `onCancel` asks `isCancelled`, which is true for any job of a
    /// stopped run, finished or not).
    func testOnCancelOfAJobThatFinishedBeforeTheLoopStoppedNeverRuns() {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { _, job in
                jobs.append(job)
                job.finish()
            }]
        )
        loop.dispatch(.increment)
        let job = jobs.values[0]
        XCTAssertFalse(job.isRunning, "finished")
        loop.stop()
        let ran = Flag()
        job.onCancel { ran.raise() }
        XCTAssertFalse(ran.isRaised, "the job finished first: its onCancel action never runs")
        loop.dispose()
    }

    /// A dispose from inside a callback skips the rest of that step (`Loop`, "Lifecycle").
    /// From inside `restart`, the start goes on all the same: the inspector hears
    /// `started` after `disposed`, the journal records a start whose model nobody saw
    /// (so `replay` yields a model the loop never published), and the disposed loop's
    /// `model` becomes that model, not the one of its `disposed` trace.
    func testADisposeFromInsideRestartStartsNothing() {
        let traces = TraceLog()
        let journal = Journal<Counter, CounterEvent>()
        let published = Recorder<Counter>()
        nonisolated(unsafe) var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            journal: journal,
            restart: { _ in
                loopRef?.dispose()
                return First(Counter(count: 99))
            },
            inspector: traces.inspector
        )
        loopRef = loop
        loop.observe { published.append($0) }
        loop.stop()
        XCTAssertFalse(loop.start())
        XCTAssertTrue(loop.isDisposed)
        XCTAssertEqual(traces.lines.values, ["started Counter(0) []", "stopped Counter(0)", "disposed Counter(0)"])
        XCTAssertEqual(loop.model, Counter(), "the model of the disposed trace")
        XCTAssertEqual(journal.replay(counterUpdate), published.values, "a replay re-derives the models published")
        loopRef = nil
    }

    /// The same for a stop from inside `restart`: the stopped loop keeps as its model
    /// (for the next start) one that was never published, its inspector hears a second
    /// `stopped` and then `started` for a run that does not run.
    func testAStopFromInsideRestartStartsNothing() {
        let traces = TraceLog()
        let effects = Recorder<CounterEffect>()
        nonisolated(unsafe) var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in effects.append(effect) }],
            restart: { _ in
                loopRef?.stop()
                return First(Counter(count: 99), effects: [.note("restarted")])
            },
            inspector: traces.inspector
        )
        loopRef = loop
        loop.stop()
        XCTAssertFalse(loop.start(), "stopped again by a callback of the start")
        XCTAssertEqual(effects.values, [])
        XCTAssertEqual(loop.model, Counter(), "the kept model is the last one published")
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("started") }, ["started Counter(0) []"])
        loop.dispose()
        loopRef = nil
    }

    /// The same for a dispose from the inspector hearing a step (the inspector is a
    /// callback too): nothing is published, but the step's model is stored after the
    /// dispose returned, so the disposed loop's `model` is not that of its `disposed`
    /// trace, and the journal keeps an event whose model nobody saw.
    func testADisposeFromTheInspectorHearingAStepStoresNoModel() {
        let traces = TraceLog()
        let journal = Journal<Counter, CounterEvent>()
        let published = Recorder<Counter>()
        nonisolated(unsafe) var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            journal: journal,
            inspector: { trace in
                traces.inspector(trace)
                if case .stepped = trace { loopRef?.dispose() }
            }
        )
        loopRef = loop
        loop.observe { published.append($0) }
        loop.dispatch(.add(5))
        XCTAssertEqual(published.values, [Counter()], "nothing published after the dispose")
        XCTAssertEqual(traces.lines.values.last, "disposed Counter(0)")
        XCTAssertEqual(loop.model, Counter(), "the model of the disposed trace")
        XCTAssertEqual(journal.replay(counterUpdate), published.values, "a replay re-derives the models published")
        loopRef = nil
    }

    /// `LoopTrace`: "The inspector is called one call at a time". An inspector that
    /// dispatches an event when a handler on its own executor fails (a common way to show
    /// an error) is called again, for that event's step, from inside its own call: the
    /// dispatch drains the idle loop on the handler's thread, nested in the inspector.
    /// (From the drainer the same dispatch is queued, and nothing nests.)
    func testTheInspectorIsNotReenteredByADispatchFromIt() {
        let executor = BackgroundExecutor()
        let depth = Atomic<Int>(0)
        let deepest = Atomic<Int>(0)
        let done = Flag()
        nonisolated(unsafe) var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: executor) { effect, _ in
                if effect == .note("boom") { throw UpdateError() }
            }],
            inspector: { trace in
                let now = depth.add(1, ordering: .relaxed).newValue
                deepest.store(max(now, deepest.load(ordering: .relaxed)), ordering: .relaxed)
                if case .effectFailed = trace { loopRef?.dispatch(.add(10)) }
                if case .stepped(.add(10), _, _) = trace { done.raise() }
                depth.subtract(1, ordering: .relaxed)
            }
        )
        loopRef = loop
        loop.dispatch(.effects([.note("boom")]))
        XCTAssertTrue(eventually { done.isRaised })
        XCTAssertEqual(deepest.load(ordering: .relaxed), 1, "one inspector call at a time")
        loop.dispose()
        loopRef = nil
    }
}
