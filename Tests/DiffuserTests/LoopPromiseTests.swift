import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Promises of the loop's doc comments that the other loop tests do not pin down.
final class LoopPromiseTests: XCTestCase {
    /// `Job.onCancel`: "Never runs if the job finishes first." A job that finished, then
    /// saw its loop stop, was never cancelled: an action given to it afterwards does not
    /// run.
    func testOnCancelOfAJobThatFinishedBeforeTheLoopStoppedNeverRuns() {
        let (loop, job) = loopWithTheJobOfOneEffect(finished: true)
        XCTAssertFalse(job.isRunning, "finished")
        loop.stop()
        XCTAssertFalse(job.isCancelled, "it finished before its run ended")
        let ran = Flag()
        job.onCancel { ran.raise() }
        XCTAssertFalse(ran.isRaised, "the job finished first: its onCancel action never runs")
        loop.dispose()
    }

    /// A job whose run ended before it finished was cancelled: a later `finish()` does
    /// nothing, and an `onCancel` action given afterwards runs at once.
    func testAJobWhoseRunEndedFirstStaysCancelled() {
        let (loop, job) = loopWithTheJobOfOneEffect(finished: false)
        loop.stop()
        job.finish()
        XCTAssertTrue(job.isCancelled, "cancelled by the stop; finish() came too late")
        let ran = Flag()
        job.onCancel { ran.raise() }
        XCTAssertTrue(ran.isRaised, "the action of a cancelled job runs at once")
        loop.dispose()
    }

    /// The `onCancel` actions a `finish()` drops are released once the job's run has let
    /// go of its lock: what they free may use the loop (here it dispatches, and the
    /// step's handler registers an action of its own).
    func testActionsAFinishDropsAreReleasedOutsideTheRunsLock() {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { _, job in
                jobs.append(job)
                job.onCancel {}
            }]
        )
        loop.dispatch(.increment)
        let first = jobs.values[0]
        do {
            let token = FreeHook { loop.dispatch(.increment) }
            first.onCancel { withExtendedLifetime(token) {} }
        }
        guard returnsInTime("an action freed under the run's lock", holding: loop, { first.finish() }) else { return }
        XCTAssertEqual(loop.model.count, 2)
        XCTAssertEqual(jobs.count, 2)
        loop.dispose()
    }

    /// A loop that handled one effect, and that effect's job, finished by its handler
    /// or left running.
    private func loopWithTheJobOfOneEffect(
        finished: Bool
    ) -> (Loop<Counter, CounterEvent, CounterEffect>, Job<CounterEvent>) {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { _, job in
                jobs.append(job)
                if finished { job.finish() }
            }]
        )
        loop.dispatch(.increment)
        return (loop, jobs.values[0])
    }

    /// A dispose from inside a callback skips the rest of that step (`Loop`, "Lifecycle").
    /// From inside `restart`, nothing of the start happens: no `started` trace, no
    /// journal record (a replay yields the models published), and the disposed loop's
    /// `model` is the one of its `disposed` trace.
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

    /// The same for a stop from inside `restart`: the stopped loop keeps the last model it
    /// published (for the next start), and its inspector hears no `started` for a run
    /// that does not run.
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
    /// callback too): nothing is published or stored, and the journal does not keep the
    /// event.
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
}
