import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// A job's end (finish, cancel, the run's end) raced on two threads. A job has one end:
/// its `onCancel` actions run exactly once if `isCancelled` is true, and never if it is
/// false.
final class JobRaceTests: XCTestCase {
    final class Count: @unchecked Sendable {
        let value = Atomic<Int>(0)
        func bump() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .acquiring) }
    }

    /// Runs `a` and `b` on two threads, released together.
    private func race(_ a: @escaping @Sendable () -> Void, _ b: @escaping @Sendable () -> Void) {
        let ready = Atomic<Int>(0)
        let group = DispatchGroup()
        for work in [a, b] {
            group.enter()
            Thread.detachNewThread {
                ready.add(1, ordering: .acquiringAndReleasing)
                while ready.load(ordering: .acquiring) < 2 {}
                work()
                group.leave()
            }
        }
        group.wait()
    }

    private func makeLoopWithJob() -> (Loop<Counter, CounterEvent, CounterEffect>, Job<CounterEvent>) {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { _, job in jobs.append(job) }]
        )
        loop.dispatch(.increment)
        return (loop, jobs.values[0])
    }

    /// `finish()` on one thread while another stops the loop: either the job finished
    /// first (not cancelled, its action never runs) or its run ended first (cancelled,
    /// the action runs once). `finish()` checks the run, then marks the job finished:
    /// a stop in between runs the action of a job that then says it finished.
    func testFinishRacingAStopGivesTheJobOneEnd() {
        var bad = 0
        for _ in 0..<3000 {
            let jobs = Recorder<Job<CounterEvent>>()
            let loop = Loop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler { _, job in jobs.append(job) }]
            )
            loop.dispatch(.effects(Array(repeating: .note("work"), count: 64)))
            let all = jobs.values
            let ran = all.map { job -> Count in
                let ran = Count()
                job.onCancel { ran.bump() }
                return ran
            }
            race({ for job in all { job.finish() } }, { loop.stop() })
            for (job, ran) in zip(all, ran) where ran.count != (job.isCancelled ? 1 : 0) { bad += 1 }
            loop.dispose()
        }
        XCTAssertEqual(bad, 0, "jobs whose onCancel action ran against isCancelled")
    }

    /// `onCancel` on one thread while another stops the loop: the job is cancelled by
    /// the stop (it never finished), so the action runs, once.
    func testOnCancelRacingAStopRunsOnce() {
        var bad = 0
        for _ in 0..<4000 {
            let (loop, job) = makeLoopWithJob()
            let ran = Count()
            race({ job.onCancel { ran.bump() } }, { loop.stop() })
            XCTAssertTrue(job.isCancelled)
            if ran.count != 1 { bad += 1 }
            loop.dispose()
        }
        XCTAssertEqual(bad, 0, "runs where a cancelled job's onCancel action did not run once")
    }

    /// `onCancel` on one thread while another cancels the job.
    func testOnCancelRacingCancelRunsOnce() {
        var bad = 0
        for _ in 0..<4000 {
            let (loop, job) = makeLoopWithJob()
            let ran = Count()
            race({ job.onCancel { ran.bump() } }, { job.cancel() })
            XCTAssertTrue(job.isCancelled)
            if ran.count != 1 { bad += 1 }
            loop.dispose()
        }
        XCTAssertEqual(bad, 0, "runs where a cancelled job's onCancel action did not run once")
    }
}
