import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// A run's session holds its loop strongly until the run ends (see `LoopSession.target`):
/// every way a run ends lets go of the loop, so that work kept past the run (a job, the
/// session itself) keeps nothing of the loop once the loop's owners let go of it.
///
/// Each test keeps jobs of a run after it ended and checks that what the loop holds (its
/// update's captures) is released once the loop is; each fails if the end of a run does
/// not let go of the loop (`LoopSession.cancel` keeping `target`).
final class LoopSessionLifetimeTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    final class Held {}

    /// Jobs that handlers kept, in the order they were handed out.
    final class KeptJobs: @unchecked Sendable {
        private let lock = NSLock()
        private var jobs: [Job<CounterEvent>] = []
        func append(_ job: Job<CounterEvent>) { lock.lock(); jobs.append(job); lock.unlock() }
        var all: [Job<CounterEvent>] { lock.lock(); defer { lock.unlock() }; return jobs }
    }

    /// An update that holds `held`, as a loop's user code holds what it needs.
    private func holding(_ held: Held) -> Update<Counter, CounterEvent, CounterEffect> {
        Update { model, event in
            _ = held
            return try counterUpdate(model, event)
        }
    }

    /// A loop whose handler keeps the job of every `note("keep")` effect.
    private func keepingLoop(
        _ held: Held,
        _ kept: KeptJobs,
        executor: LoopExecutor = CallerExecutor(),
        inspector: ((LoopTrace<Counter, CounterEvent, CounterEffect>) -> Void)? = nil,
        extra: @escaping (CounterEffect, Job<CounterEvent>) -> Void = { _, _ in }
    ) -> CounterLoop {
        Loop(
            model: Counter(),
            startEffects: [.note("keep")],
            update: holding(held),
            handlers: [EffectHandler { effect, job in
                if effect == .note("keep") { kept.append(job) }
                extra(effect, job)
            }],
            executor: executor,
            inspector: inspector
        )
    }

    /// A job kept after its loop's owners let go (work that outlives the screen that
    /// started it) keeps nothing of the loop, and sends nothing more.
    func testAJobKeptAfterItsLoopDoesNotKeepTheLoop() {
        weak var weakHeld: Held?
        let kept = KeptJobs()
        do {
            let held = Held()
            weakHeld = held
            var loop: CounterLoop? = keepingLoop(held, kept)
            XCTAssertEqual(kept.all[0].send(.increment), true)
            XCTAssertEqual(loop?.model.count, 1)
            loop = nil
        }
        XCTAssertNil(weakHeld, "a job holds nothing of a disposed loop")
        XCTAssertTrue(kept.all[0].isCancelled)
        XCTAssertFalse(kept.all[0].send(.increment))
    }

    /// A loop stopped, then let go of: the job of the stopped run keeps nothing of it.
    func testAJobOfAStoppedLoopDoesNotKeepTheLoop() {
        weak var weakHeld: Held?
        let kept = KeptJobs()
        do {
            let held = Held()
            weakHeld = held
            var loop: CounterLoop? = keepingLoop(held, kept)
            XCTAssertEqual(kept.all.count, 1)
            XCTAssertEqual(kept.all[0].send(.increment), true)
            loop?.stop()
            XCTAssertEqual(kept.all[0].isCancelled, true)
            XCTAssertEqual(kept.all[0].send(.increment), false, "a job of a stopped run sends nothing")
            XCTAssertEqual(loop?.model.count, 1)
            loop = nil
        }
        XCTAssertNil(weakHeld, "a job of a stopped run holds nothing of its loop")
        XCTAssertEqual(kept.all[0].send(.increment), false)
    }

    /// A loop started, stopped, started again and let go of, with a job of each run kept:
    /// neither keeps the loop; the first run's job sends nothing into the second run,
    /// and the inspector hears nothing of it (it is refused before it reaches the loop).
    func testJobsOfEveryRunDoNotKeepARestartedLoop() {
        weak var weakHeld: Held?
        let kept = KeptJobs()
        let traces = TraceLog()
        do {
            let held = Held()
            weakHeld = held
            var loop: CounterLoop? = keepingLoop(held, kept, inspector: traces.inspector)
            loop?.stop()
            XCTAssertEqual(loop?.start(), true)
            XCTAssertEqual(loop?.dispatch(.effects([.note("keep")])), true)
            XCTAssertEqual(kept.all.count, 2)
            let before = traces.lines.values.count
            XCTAssertEqual(kept.all[0].send(.add(100)), false, "a job of the ended run sends nothing")
            XCTAssertEqual(traces.lines.values.count, before, "nothing of it reaches the loop")
            XCTAssertEqual(kept.all[1].send(.add(2)), true)
            XCTAssertEqual(loop?.model.count, 2)
            loop?.stop()
            XCTAssertEqual(loop?.start(), true)
            loop = nil
        }
        XCTAssertNil(weakHeld, "the jobs of ended runs hold nothing of their loop")
        XCTAssertEqual(kept.all.map(\.isCancelled), [true, true])
        XCTAssertEqual(kept.all.map { $0.send(.increment) }, [false, false])
    }

    /// A loop whose last reference a callback of its own drops (a handler, during a step
    /// that a kept job's send runs): it is disposed from inside its drain, and released
    /// once that send returns.
    func testALoopDroppedFromItsOwnCallbackIsReleased() {
        weak var weakHeld: Held?
        weak var weakLoop: CounterLoop?
        let kept = KeptJobs()
        nonisolated(unsafe) var loop: CounterLoop?
        do {
            let held = Held()
            weakHeld = held
            loop = keepingLoop(held, kept, extra: { effect, _ in
                if effect == .note("drop") { loop = nil }
            })
            weakLoop = loop
        }
        XCTAssertNotNil(weakLoop)
        XCTAssertEqual(kept.all.count, 1)
        XCTAssertEqual(kept.all[0].send(.effects([.note("keep"), .note("drop")])), true)
        XCTAssertNil(weakLoop, "the handler dropped the last reference")
        XCTAssertNil(weakHeld, "a loop dropped from its own callback is released")
        XCTAssertEqual(kept.all.count, 2)
        XCTAssertEqual(kept.all.map(\.isCancelled), [true, true])
        XCTAssertEqual(kept.all.map { $0.send(.increment) }, [false, false])
    }

    /// A loop that an on-cancel action of its own stop disposes (a dispose nested in the
    /// stop), then let go of, with a job of the run kept.
    func testALoopDisposedByAnActionOfItsStopIsReleased() {
        weak var weakHeld: Held?
        let kept = KeptJobs()
        do {
            let held = Held()
            weakHeld = held
            nonisolated(unsafe) weak var weakLoop: CounterLoop?
            var loop: CounterLoop? = keepingLoop(held, kept, extra: { effect, job in
                if effect == .note("keep") { job.onCancel { weakLoop?.dispose() } }
            })
            weakLoop = loop
            loop?.stop()
            XCTAssertEqual(loop?.isDisposed, true, "the action disposed the loop")
            loop = nil
        }
        XCTAssertNil(weakHeld, "a job of a run disposed inside its stop holds nothing of its loop")
        XCTAssertEqual(kept.all[0].send(.increment), false)
    }

    /// A start that never ran (a manual executor nobody runs), then let go of: neither
    /// its session nor the drain the executor still holds keeps the loop. (No job was
    /// made, so this one does not depend on `cancel` letting go of `target`: it fails if
    /// the executor's work holds the loop strongly.)
    func testALoopWhoseStartNeverRanIsReleased() {
        weak var weakHeld: Held?
        weak var weakSession: LoopSession<CounterEvent>?
        let executor = ManualExecutor()
        do {
            let held = Held()
            weakHeld = held
            var loop: CounterLoop? = Loop(model: Counter(), update: holding(held), executor: executor)
            weakSession = loop?.core.session
            XCTAssertNotNil(weakSession)
            loop = nil
        }
        XCTAssertNil(weakHeld, "a loop whose start never ran is released")
        XCTAssertNil(weakSession)
        executor.runAll()
    }

    /// A loop on a background executor let go of while a kept job of it sends from
    /// other threads: the loop is released once the sends in progress return.
    func testALoopLetGoOfWhileItsJobSendsIsReleased() {
        weak var weakHeld: Held?
        let kept = KeptJobs()
        let sending = DispatchGroup()
        let stop = Flag()
        do {
            let held = Held()
            weakHeld = held
            var loop: CounterLoop? = keepingLoop(held, kept, executor: BackgroundExecutor())
            XCTAssertTrue(eventually { kept.all.count == 1 })
            let job = kept.all[0]
            for _ in 0..<2 {
                DispatchQueue.global().async(group: sending) {
                    while !stop.isRaised { _ = job.send(.increment) }
                }
            }
            usleep(2_000)
            XCTAssertNotNil(loop)
            loop = nil
            XCTAssertEqual(job.isCancelled, true)
        }
        stop.raise()
        sending.wait()
        XCTAssertTrue(eventually { weakHeld == nil }, "the loop is released once the sends return")
        XCTAssertEqual(kept.all[0].send(.increment), false)
    }
}
