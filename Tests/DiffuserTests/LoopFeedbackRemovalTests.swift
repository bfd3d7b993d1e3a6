import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Removing a feedback (disposing what `Loop.add` returned): its work in progress is
/// cancelled on the loop's turn, and the loop lets go of it and of what it captures,
/// however and whenever it is removed.
final class LoopFeedbackRemovalTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    final class Held {}

    /// Weak references to a feedback's registration and to what its callback captures:
    /// both nil once the loop has let go of the feedback.
    final class Watch {
        weak var entry: AnyObject?
        weak var held: Held?
    }

    /// Adds a `react` feedback whose callback captures an object of its own; the watch
    /// sees whether the loop lets go of them once the caller drops the registration.
    private func addWatchedFeedback(to loop: CounterLoop) -> (registration: _Disposable, watch: Watch) {
        let watch = Watch()
        let captured = Held()
        watch.held = captured
        let registration = loop.add(.react { (_: Counter) -> [CounterEvent] in _ = captured; return [] })
        watch.entry = registration as AnyObject
        return (registration, watch)
    }

    // MARK: The work in progress is cancelled

    /// A feedback removed while the drain is busy, with an event queued before the
    /// removal and the registration let go at once: the event's step publishes its model
    /// first (which drops the removed entry from the subscribers), then the removal's
    /// turn comes. The removal still cancels the work in progress (`add`'s promise),
    /// rather than finding the entry gone and leaving the job running until the run ends.
    func testRemovalCancelsTheWorkInProgressWhenAModelIsPublishedBeforeItsTurn() {
        let jobs = Recorder<Job<CounterEvent>>()
        let cancelled = Recorder<Int>()
        nonisolated(unsafe) var registration: _Disposable?
        nonisolated(unsafe) weak var loopRef: CounterLoop?
        let handler = EffectHandler<CounterEffect, CounterEvent> { effect, _ in
            guard effect == .note("inc->1") else { return }
            loopRef?.dispatch(.add(10))     // queued before the removal
            registration?.dispose()         // the removal, queued after it
            registration = nil              // nobody holds the registration any more
        }
        let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [handler])
        loopRef = loop
        registration = loop.add(.work { model, job in
            jobs.append(job)
            job.onCancel { cancelled.append(model.count) }
        })
        loop.dispatch(.increment)
        XCTAssertEqual(loop.model.count, 11)
        XCTAssertEqual(jobs.count, 2, "the removed feedback heard of no model after its removal")
        XCTAssertEqual(cancelled.values, [0, 1], "the removed feedback's work in progress was not cancelled on the loop's turn")
        XCTAssertTrue(jobs.values[1].isCancelled)
        XCTAssertFalse(jobs.values[1].send(.increment))
        loop.dispose()
    }

    // MARK: A disposed feedback hears nothing

    /// A model handed to a feedback that waits for its subscription's lock (taken by a
    /// dispose on another thread, or held by anyone) while the feedback is disposed is
    /// not heard: the call looks again once it holds the lock. The entry's subscription
    /// has no receiver, so nothing else stops it (an observer's receiver is gone once
    /// disposed). Fails if `Subscription.call` runs its body without that second look,
    /// or if `FeedbackEntry.receive` calls the reactor outside `delivery.call`.
    func testAModelWaitingForTheLockWhileTheFeedbackIsDisposedIsNotHeard() {
        for round in 0..<3 {
            let heard = Recorder<Int>()
            let entry = FeedbackEntry<Int, Int>(Feedback(start: { _ in nil }))
            entry.reactor = FeedbackReactor(receive: { heard.append($0) }, stop: {})
            entry.delivery.lock.lock()
            let received = DispatchSemaphore(value: 0)
            Thread {
                try? entry.receive(1)
                received.signal()
            }.start()
            // The model has passed the look before the lock, and waits for it.
            XCTAssertEqual(received.wait(timeout: .now() + 0.05), .timedOut, "round \(round): the model did not wait for the lock")
            let disposed = DispatchSemaphore(value: 0)
            Thread {
                entry.dispose()
                disposed.signal()
            }.start()
            XCTAssertTrue(eventually { entry.delivery.isClosed }, "round \(round): the dispose never began")
            entry.delivery.lock.unlock()
            XCTAssertEqual(received.wait(timeout: .now() + 5), .success)
            XCTAssertEqual(disposed.wait(timeout: .now() + 5), .success)
            XCTAssertEqual(heard.values, [], "round \(round): a disposed feedback heard a model")
        }
    }

    /// Feedbacks whose reactions close their loop, on the caller's executor and on a
    /// background one: one stops and restarts the loop (the start replaces every
    /// feedback's instance once the reaction has returned), then removes itself (its
    /// removal lets go of its instance on the loop's turn); another disposes the loop.
    /// Each hears what it should, and nothing after its removal or the loop's dispose.
    func testFeedbacksThatRestartTheirLoopRemoveThemselvesAndDisposeIt() {
        func run(_ executor: LoopExecutor) -> [String] {
            let log = Recorder<String>()
            let loop = CounterLoop(model: Counter(), update: counterUpdate, executor: executor)
            nonisolated(unsafe) weak var loopRef: CounterLoop?
            loopRef = loop
            let restarted = Flag()
            nonisolated(unsafe) var registration: _Disposable?
            let registered = NSLock()
            registered.lock()
            registration = loop.add(.react { (model: Counter) -> [CounterEvent] in
                log.append("A \(model.count)")
                if model.count == 1 && !restarted.isRaised {
                    restarted.raise()
                    loopRef?.stop()
                    log.append("restarted \(loopRef?.start() ?? false)")
                } else if model.count == 2 {
                    registered.lock()
                    registration?.dispose()
                    registration = nil
                    registered.unlock()
                }
                return []
            })
            registered.unlock()
            loop.add(.react { (model: Counter) -> [CounterEvent] in
                log.append("B \(model.count)")
                if model.count == 3 { loopRef?.dispose() }
                return []
            })
            func step(until line: String) {
                XCTAssertTrue(eventually { log.values.contains(line) }, "never logged \(line): \(log.values)")
            }
            step(until: "B 0")
            for (count, line) in [(1, "B 1"), (2, "B 2"), (3, "B 3")] {
                XCTAssertTrue(loop.dispatch(.increment), "the loop refused \(count)")
                step(until: line)
            }
            XCTAssertTrue(eventually { !loop.dispatch(.increment) }, "the loop was not disposed")
            registered.lock()
            XCTAssertNil(registration, "the feedback did not remove itself")
            registered.unlock()
            return log.values
        }
        let expected = ["A 0", "B 0", "A 1", "restarted true", "A 1", "B 1", "A 2", "B 2", "B 3"]
        XCTAssertEqual(run(CallerExecutor()), expected)
        XCTAssertEqual(run(BackgroundExecutor()), expected)
    }

    // MARK: The loop lets go of a removed feedback

    func testARemovedFeedbackIsLetGo() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let watch: Watch
        do {
            let (registration, added) = addWatchedFeedback(to: loop)
            watch = added
            loop.dispatch(.increment)
            registration.dispose()
        }
        loop.dispatch(.increment)
        XCTAssertNil(watch.entry, "the removed feedback's entry is kept")
        XCTAssertNil(watch.held, "what the removed feedback captures is kept")
        loop.dispose()
    }

    /// Removed from inside its own callback: it hears of no later model, and is let go.
    func testAFeedbackRemovedFromItsOwnCallbackIsLetGo() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        weak var entry: AnyObject?
        weak var held: Held?
        let heard = Recorder<Int>()
        do {
            let captured = Held()
            held = captured
            nonisolated(unsafe) var registration: _Disposable?
            registration = loop.add(.react { (model: Counter) -> [CounterEvent] in
                _ = captured
                heard.append(model.count)
                if model.count == 1 {
                    registration?.dispose()
                    registration = nil
                }
                return []
            })
            entry = registration as AnyObject
        }
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(heard.values, [0, 1])
        XCTAssertNil(entry, "the removed feedback's entry is kept")
        XCTAssertNil(held, "what the removed feedback captures is kept")
        loop.dispose()
    }

    /// Removed after the loop was disposed, twice: nothing happens, and nothing is kept.
    func testAFeedbackRemovedTwiceAfterTheLoopsDisposeIsLetGo() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let watch: Watch
        do {
            let (registration, added) = addWatchedFeedback(to: loop)
            watch = added
            loop.dispose()
            registration.dispose()
            registration.dispose()
        }
        XCTAssertNil(watch.entry)
        XCTAssertNil(watch.held)
    }

    /// Removed from other threads (each twice) while models are published: none is heard
    /// of once every removal has returned, and the loop keeps none of them.
    func testFeedbacksRemovedOnOtherThreadsWhileModelsArePublished() {
        for _ in 0..<100 {
            let loop = CounterLoop(model: Counter(), update: counterUpdate)
            let heard = Atomic<Int>(0)
            let registrations = (0..<8).map { _ in
                loop.add(.react { (_: Counter) -> [CounterEvent] in
                    heard.add(1, ordering: .relaxed)
                    return []
                })
            }
            nonisolated(unsafe) let all = registrations
            onThreads(4) { index in
                if index < 2 {
                    for _ in 0..<50 { loop.dispatch(.increment) }
                } else {
                    for registration in all { registration.dispose() }
                    for registration in all { registration.dispose() }
                }
            }
            let before = heard.load(ordering: .relaxed)
            loop.dispatch(.increment)
            XCTAssertEqual(heard.load(ordering: .relaxed), before, "a removed feedback heard of a model")
            XCTAssertTrue(loop.core.subscribers.isEmpty)
            loop.dispose()
        }
    }
}
