import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Feedbacks: synchronous, asynchronous, request-gated; overlap strategies; filters,
/// scopes, executors; gears.
///
/// One file although over 400 lines: each test is small, most over the counter loop of
/// `LoopTestSupport.swift`, and together they cover every kind of feedback; most of the
/// removal of feedbacks is `LoopFeedbackRemovalTests`.
final class LoopFeedbackTests: XCTestCase {
    // Spin's README example: two levels converge to their average.
    struct Levels: Equatable { var left: Int; var right: Int }
    enum LevelEvent: Sendable { case increaseLeft, decreaseLeft, increaseRight, decreaseRight }

    func testSpinLevelsConverge() {
        func leftEffect(_ levels: Levels) -> [LevelEvent] {
            guard levels.left != levels.right else { return [] }
            return [levels.left < levels.right ? .increaseLeft : .decreaseLeft]
        }
        func rightEffect(_ levels: Levels) -> [LevelEvent] {
            guard levels.left != levels.right else { return [] }
            return [levels.right < levels.left ? .increaseRight : .decreaseRight]
        }
        func reducer(_ levels: Levels, _ event: LevelEvent) -> Levels {
            guard levels.left != levels.right else { return levels }
            switch event {
            case .decreaseLeft: return Levels(left: levels.left - 1, right: levels.right)
            case .increaseLeft: return Levels(left: levels.left + 1, right: levels.right)
            case .decreaseRight: return Levels(left: levels.left, right: levels.right - 1)
            case .increaseRight: return Levels(left: levels.left, right: levels.right + 1)
            }
        }
        let loop = Loop(
            model: Levels(left: 10, right: 20),
            reducer: reducer,
            feedbacks: [.react(leftEffect), .react(rightEffect)]
        )
        XCTAssertEqual(loop.model, Levels(left: 15, right: 15))
    }

    func testFilteredAndScopedFeedbacks() {
        let seen = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [
                Feedback<Counter, CounterEvent>.react { seen.append("even \($0.count)"); return [] }
                    .filtered(by: { $0.count % 2 == 0 }),
                Feedback<Int, CounterEvent>.react { seen.append("count \($0)"); return [] }
                    .scoped(to: \Counter.count),
                Feedback<Bool, CounterEvent>.react { seen.append("big \($0)"); return [] }
                    .scoped(by: { (counter: Counter) in counter.count > 1 }),
            ]
        )
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, [
            "even 0", "count 0", "big false",
            "count 1", "big false",
            "even 2", "count 2", "big true",
        ])
    }

    /// `work` with the default strategy: a new model cancels the work in progress, whose
    /// later sends are refused and whose `onCancel` actions run.
    func testWorkCancelsPreviousByDefault() {
        let jobs = Recorder<Job<CounterEvent>>()
        let cancelled = Recorder<Int>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work { model, job in
                jobs.append(job)
                job.onCancel { cancelled.append(model.count) }
            }]
        )
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(jobs.count, 3)
        XCTAssertEqual(cancelled.values, [0, 1])
        XCTAssertFalse(jobs.values[0].send(.add(100)))
        XCTAssertTrue(jobs.values[0].isCancelled)
        XCTAssertTrue(jobs.values[2].isRunning)
        XCTAssertTrue(jobs.values[2].send(.add(100)))
        XCTAssertEqual(loop.model.count, 102)
    }

    func testWorkKeepPrevious() {
        let started = Recorder<Int>()
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work(overlap: .keepPrevious) { model, job in
                started.append(model.count)
                jobs.append(job)
            }]
        )
        loop.dispatch(.add(1))
        loop.dispatch(.add(1))
        XCTAssertEqual(started.values, [0], "the work in progress is kept")
        jobs.values[0].send(.add(10))
        jobs.values[0].finish()
        XCTAssertEqual(started.values, [0], "finishing starts nothing by itself")
        loop.dispatch(.add(1))
        XCTAssertEqual(started.values, [0, 13])
        XCTAssertFalse(jobs.values[0].isCancelled, "kept work is never cancelled by a new model")
    }

    func testWorkConcurrent() {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work(overlap: .concurrent) { _, job in jobs.append(job) }]
        )
        loop.dispatch(.add(1))
        loop.dispatch(.add(1))
        XCTAssertEqual(jobs.count, 3)
        XCTAssertTrue(jobs.values.allSatisfy(\.isRunning))
        for job in jobs.values { job.send(.add(10)) }
        XCTAssertEqual(loop.model.count, 32)
    }

    /// With `.concurrent`, open jobs pile up while ended ones are dropped from the
    /// feedback's list along the way: a request that becomes nil still cancels every open
    /// one, in the order they started.
    func testConcurrentWorkCancelsEveryOpenJob() {
        let cancelled = Recorder<Int>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.request({ $0.count < 100 ? $0.count : nil }, overlap: .concurrent) { request, job in
                job.onCancel { cancelled.append(request) }
                if request % 2 == 1 { job.finish() }
            }]
        )
        for _ in 0..<100 { loop.dispatch(.increment) }
        XCTAssertEqual(cancelled.values, Array(stride(from: 0, to: 100, by: 2)))
        loop.dispose()
        XCTAssertEqual(cancelled.count, 50, "nothing was left to cancel")
    }

    /// Events a cancelled job sent that are still queued are dropped, and the inspector
    /// sees each.
    func testQueuedEventsOfCancelledWorkAreDropped() {
        let executor = ManualExecutor()
        let traces = TraceLog()
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work { _, job in jobs.append(job) }],
            executor: executor,
            inspector: traces.inspector
        )
        executor.runAll()
        XCTAssertEqual(jobs.count, 1)
        jobs.values[0].send(.add(100))           // queued behind nothing yet
        loop.dispatch(.add(1))
        // Queue: add(100) from job 0, add(1). Run add(100) first: it makes a model, which
        // cancels job 0, but its event was already handled.
        executor.runNext()
        XCTAssertEqual(loop.model.count, 100)
        XCTAssertEqual(jobs.count, 2)
        jobs.values[1].send(.add(1000))          // queued after add(1)
        executor.runNext()                       // add(1): cancels job 1
        executor.runAll()
        XCTAssertEqual(loop.model.count, 101)
        XCTAssertTrue(traces.lines.values.contains("dropped add(1000) cancelledWork"))
    }

    /// A request-gated feedback starts when its request changes, keeps running while it
    /// stays equal, restarts on a new one (cancelling the old) and stops on nil.
    func testRequestFeedback() {
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.request(\.request) { request, job in
                log.append("start \(request)")
                job.onCancel { log.append("cancel \(request)") }
            }]
        )
        loop.dispatch(.request("a"))
        loop.dispatch(.increment)
        loop.dispatch(.request("a"))
        loop.dispatch(.request("b"))
        loop.dispatch(.request(nil))
        loop.dispatch(.increment)
        loop.dispatch(.request("b"))
        XCTAssertEqual(log.values, ["start a", "cancel a", "start b", "cancel b", "start b"])
    }

    func testRequestFeedbackSendsResultsAndFinishes() {
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.request({ $0.request }, overlap: .keepPrevious) { request, job in
                job.send(.add(request.count))
                job.finish()
            }]
        )
        loop.dispatch(.request("abc"))
        loop.dispatch(.request("de"))
        XCTAssertEqual(loop.model.count, 5)
    }

    /// The request form for requests without `Equatable`: compared by `isSame`, selected
    /// by a function that may throw (a throw changes nothing, and goes to the inspector).
    func testRequestFeedbackComparedByIsSameWithAThrowingSelect() {
        struct Query { let text: String }
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.request(
                { (model: Counter) -> Query? in
                    if model.count < 0 { throw TestFailure(tag: "select") }
                    return model.request.map { Query(text: $0.lowercased()) }
                },
                isSame: { $0.text == $1.text }
            ) { query, job in
                log.append("start \(query.text)")
                job.onCancel { log.append("cancel \(query.text)") }
            }],
            inspector: { trace in
                if case .feedbackFailed(let error) = trace { log.append("failed \(error)") }
            }
        )
        loop.dispatch(.request("A"))
        loop.dispatch(.request("a"))
        loop.dispatch(.add(-5))
        loop.dispatch(.request("b"))
        loop.dispatch(.add(10))
        loop.dispatch(.request(nil))
        XCTAssertEqual(log.values, [
            "start a",
            // "a" after "A": the same request. While the count is negative, selecting
            // throws and nothing changes, "b" included; at count 5 it is read again.
            "failed TestFailure(tag: \"select\")", "failed TestFailure(tag: \"select\")",
            "cancel a", "start b",
            "cancel b",
        ])
    }

    /// A comparison that throws changes nothing either: the request stays the one kept,
    /// and the next is compared with it.
    func testRequestFeedbackWithAThrowingIsSame() {
        struct Query { let text: String }
        let log = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.request(
                { (model: Counter) -> Query? in model.request.map { Query(text: $0) } },
                isSame: { old, new in
                    log.append("same \(old.text) \(new.text)")
                    if new.text == "fails" { throw TestFailure(tag: "isSame") }
                    return old.text == new.text
                }
            ) { query, job in
                log.append("start \(query.text)")
                job.onCancel { log.append("cancel \(query.text)") }
            }],
            inspector: { trace in
                if case .feedbackFailed(let error) = trace { log.append("failed \(error)") }
            }
        )
        loop.dispatch(.request("a"))
        loop.dispatch(.request("fails"))
        loop.dispatch(.request("b"))
        XCTAssertEqual(log.values, [
            "start a",
            "same a fails", "failed TestFailure(tag: \"isSame\")",
            "same a b", "cancel a", "start b",
        ])
    }

    /// A request's error reaches the inspector through `filtered(by:)` and `scoped(to:)`,
    /// from a feedback added to a running loop (which hears the current model at once)
    /// as from one published to later, in its place among the loop's traces; the
    /// observers and feedbacks after it still hear the model.
    func testARequestErrorGoesToTheInspectorInItsPlace() {
        struct Whole { var counter: Counter }
        enum WholeEvent { case set(Int) }
        let log = Recorder<String>()
        let loop = Loop(
            model: Whole(counter: Counter()),
            reducer: { (_: Whole, event: WholeEvent) in
                switch event {
                case .set(let count): return Whole(counter: Counter(count: count))
                }
            },
            inspector: { trace in
                switch trace {
                case .feedbackFailed(let error): log.append("failed \(error)")
                case .stepped(let event, _, _): log.append("stepped \(event)")
                default: break
                }
            }
        )
        let failing = Feedback<Counter, WholeEvent>.request(
            { (model: Counter) -> Int? in
                if model.count % 2 == 1 { throw TestFailure(tag: "odd \(model.count)") }
                return model.count
            },
            isSame: ==
        ) { request, job in
            log.append("start \(request)")
            job.finish()
        }
        loop.dispatch(.set(1))
        let registration = loop.add(failing.filtered(by: { $0.count < 10 }).scoped(to: \Whole.counter))
        let after = loop.observe { log.append("observed \($0.counter.count)") }
        loop.dispatch(.set(2))
        loop.dispatch(.set(3))
        loop.dispatch(.set(11))
        XCTAssertEqual(log.values, [
            "stepped set(1)",
            "failed TestFailure(tag: \"odd 1\")", "observed 1",
            "stepped set(2)", "start 2", "observed 2",
            "stepped set(3)", "failed TestFailure(tag: \"odd 3\")", "observed 3",
            "stepped set(11)", "observed 11",
        ])
        registration.dispose()
        after.dispose()
    }

    /// The name of a trace's case: `started`, `stepped`, `feedbackFailed`...
    private static func kind<M, E, F>(_ trace: LoopTrace<M, E, F>) -> String {
        String(String(describing: trace).prefix { $0 != "(" })
    }

    /// A request feedback whose request throws on odd counts, logging its work.
    private static func failingOnOddCounts(
        _ log: Recorder<String>, on executor: LoopExecutor? = nil
    ) -> Feedback<Counter, CounterEvent> {
        .request({ (model: Counter) -> Int? in
            if model.count % 2 == 1 { throw TestFailure(tag: "odd \(model.count)") }
            return model.count
        }, isSame: ==, on: executor) { request, job in
            log.append("start \(request)")
            job.onCancel { log.append("cancel \(request)") }
        }
    }

    /// A request's error at a start comes right after `started`; one whose work runs on
    /// an executor is still reported in the step, and leaves the work alone.
    func testARequestErrorAtTheStartAndOnAnExecutor() {
        let log = Recorder<String>()
        let executor = ManualExecutor()
        let loop = Loop(
            model: Counter(count: 1), update: counterUpdate,
            feedbacks: [Self.failingOnOddCounts(log, on: executor)],
            inspector: { trace in
                log.append(Self.kind(trace))
            }
        )
        loop.dispatch(.increment) // 2: request 2
        loop.dispatch(.increment) // 3: fails, request 2 kept
        _ = executor.runAll()
        XCTAssertEqual(log.values, [
            "started", "feedbackFailed",
            "stepped", "stepped", "feedbackFailed",
            "start 2",
        ])
        loop.dispose()
    }

    /// The inspector may remove the feedback, or dispose the loop, on its error: nothing
    /// waits, and nothing of the loop hears the model after that.
    func testTheInspectorMayRemoveTheFeedbackOrDisposeTheLoopOnItsError() {
        let log = Recorder<String>()
        var registration: _Disposable?
        let loop = Loop(model: Counter(), update: counterUpdate, inspector: { trace in
            if case .feedbackFailed(let error) = trace {
                log.append("failed \(error)")
                registration?.dispose()
            }
        })
        registration = loop.add(Self.failingOnOddCounts(log))
        let observer = loop.subscribe { log.append("observed \($0.count)") }
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, [
            "start 0", "observed 0",
            "failed TestFailure(tag: \"odd 1\")", "observed 1", "cancel 0",
            "observed 2",
        ])
        observer.dispose()
        loop.dispose()

        let traces = Recorder<String>()
        var disposing: Loop<Counter, CounterEvent, CounterEffect>?
        let second = Loop(
            model: Counter(), update: counterUpdate, feedbacks: [Self.failingOnOddCounts(traces)],
            inspector: { trace in
                traces.append(Self.kind(trace))
                if case .feedbackFailed = trace { disposing?.dispose() }
            }
        )
        disposing = second
        let late = second.subscribe { traces.append("observed \($0.count)") }
        second.dispatch(.increment)
        XCTAssertFalse(second.dispatch(.increment))
        XCTAssertEqual(traces.values, [
            "started", "start 0", "observed 0",
            "stepped", "feedbackFailed", "cancel 0", "disposed",
        ])
        late.dispose()
    }

    func testFeedbackOnItsOwnExecutor() {
        let feedbackExecutor = ManualExecutor()
        let seen = Recorder<Int>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.react(on: feedbackExecutor) { model in
                seen.append(model.count)
                return model.count == 2 ? [.add(10)] : []
            }]
        )
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, [], "nothing runs before the executor does")
        XCTAssertEqual(feedbackExecutor.pending, 3)
        feedbackExecutor.runAll()
        XCTAssertEqual(seen.values, [2, 12], "runs overtaken by a newer model are cancelled before they start")
        XCTAssertEqual(loop.model.count, 12)
    }

    func testFeedbackRunsOnABackgroundExecutor() {
        let background = BackgroundExecutor()
        let threads = Recorder<Bool>()
        let done = DispatchSemaphore(value: 0)
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work(on: background, overlap: .concurrent) { model, job in
                threads.append(background.isCurrent)
                job.send(.add(1))
                job.finish()
                if model.count == 0 { done.signal() }
            }]
        )
        done.wait()
        XCTAssertTrue(eventually { loop.model.count >= 1 })
        XCTAssertEqual(threads.values.first, true)
        loop.dispose()
    }

    func testFeedbackAddedAtRunTimeSeesTheCurrentModelAndCanBeRemoved() {
        let log = Recorder<String>()
        let loop = Loop(model: Counter(count: 5), update: counterUpdate)
        let added = loop.add(.work { model, job in
            log.append("work \(model.count)")
            job.onCancel { log.append("cancel \(model.count)") }
        })
        loop.dispatch(.increment)
        added.dispose()
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, ["work 5", "cancel 5", "work 6", "cancel 6"])
    }

    /// A feedback disposed on another thread while it hears of a model: `dispose()`
    /// returns once that call has, and the feedback hears of no model after it.
    func testDisposingAFeedbackWaitsForTheModelItIsHearing() {
        let inside = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let heard = Recorder<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        nonisolated(unsafe) let added = loop.add(.react { model in
            heard.append(model.count)
            if model.count == 1 {
                inside.signal()
                _ = go.wait(timeout: .now() + 10)
            }
            return []
        })
        let stepped = DispatchSemaphore(value: 0)
        Thread {
            loop.dispatch(.increment)
            stepped.signal()
        }.start()
        XCTAssertEqual(inside.wait(timeout: .now() + 5), .success)
        let disposed = Recorder<[Int]>()
        let returned = DispatchSemaphore(value: 0)
        Thread {
            added.dispose()
            disposed.append(heard.values)
            returned.signal()
        }.start()
        XCTAssertEqual(returned.wait(timeout: .now() + 0.05), .timedOut, "dispose() returned while the feedback heard a model")
        heard.append(-1) // the call in progress ends after this
        go.signal()
        XCTAssertEqual(returned.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(stepped.wait(timeout: .now() + 5), .success)
        loop.dispatch(.increment)
        XCTAssertEqual(disposed.values, [[0, 1, -1]])
        XCTAssertEqual(heard.values, [0, 1, -1], "nothing heard after dispose()")
        loop.dispose()
    }

    /// The feedbacks of the initializer are registered before the start: every start
    /// publishes its first model to them, then hands the start effects to the handlers,
    /// whatever the executor; so a feedback's event on the first model (2) is queued
    /// before a start effect's (10). The C ABI's config feedbacks and the Java builder's
    /// are these (test_loop.c, LoopTest.java).
    func testInitializerFeedbacksHearTheFirstModelBeforeTheStartEffects() {
        func run(_ executor: LoopExecutor, autostart: Bool) -> [String] {
            let log = Recorder<String>()
            let loop = Loop<Int, Int, String>(
                model: 0,
                startEffects: ["s"],
                update: Update { model, event in .next(model + event) },
                handlers: [EffectHandler { effect, job in
                    log.append("h \(effect)")
                    _ = job.send(10)
                }],
                feedbacks: [
                    .react { model in
                        log.append("react \(model)")
                        return model == 0 ? [2] : []
                    },
                    .work { model, _ in log.append("work \(model)") },
                ],
                executor: executor,
                inspector: { trace in
                    switch trace {
                    case .started: log.append("started")
                    case .stepped(let event, _, _): log.append("stepped \(event)")
                    default: log.append("other")
                    }
                },
                autostart: autostart
            )
            if !autostart { XCTAssertTrue(loop.start()) }
            if let manual = executor as? ManualExecutor {
                log.append("runs \(manual.runAll())")
            } else {
                XCTAssertTrue(eventually { log.values.contains("work 12") })
            }
            loop.dispose()
            return log.values
        }
        let expected = ["started", "react 0", "work 0", "h s", "stepped 2", "react 2", "work 2",
                        "stepped 10", "react 12", "work 12"]
        for autostart in [true, false] {
            XCTAssertEqual(run(CallerExecutor(), autostart: autostart), expected + ["other"])
            XCTAssertEqual(run(ManualExecutor(), autostart: autostart), expected + ["runs 3", "other"])
            for _ in 0..<10 {
                XCTAssertEqual(run(BackgroundExecutor(), autostart: autostart), expected + ["other"])
            }
        }
    }

    func testGearBetweenTwoLoops() {
        enum GearEvent: Equatable { case authorizationIssue }
        let gear = Gear<GearEvent>()
        let checks = Recorder<Int>()
        let routing = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.attached(to: gear, catching: .authorizationIssue, emitting: .increment)]
        )
        routing.observe { checks.append($0.count) }
        let feature = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.pushing(to: gear) { $0.count == 2 ? .authorizationIssue : nil }]
        )
        feature.dispatch(.increment)
        XCTAssertEqual(checks.values, [0])
        feature.dispatch(.increment)
        XCTAssertEqual(checks.values, [0, 1])
        routing.stop()
        feature.dispatch(.add(-1))
        feature.dispatch(.increment)
        XCTAssertEqual(routing.model.count, 1, "a stopped loop hears no gear")
        routing.start()
        feature.dispatch(.add(-1))
        feature.dispatch(.increment)
        XCTAssertEqual(routing.model.count, 2)
        routing.dispose()
        feature.dispose()
    }

    /// A gear feedback added and disposed while the loop runs keeps nothing of the run:
    /// its gear subscription is let go with it, not at the run's end.
    func testGearFeedbacksDisposedWhileRunningAreLetGo() {
        final class Held {}
        let gear = Gear<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        weak var lastHeld: Held?
        for _ in 0..<500 {
            let held = Held()
            lastHeld = held
            let feedback = loop.add(.attached(to: gear) { n -> CounterEvent? in
                _ = held
                return .add(n)
            })
            gear.send(1)
            feedback.dispose()
            gear.send(100)
        }
        XCTAssertEqual(loop.model.count, 500)
        XCTAssertNil(lastHeld, "the subscription, and what its function captures, is let go")
        XCTAssertEqual(loop.core.session?.cancelActionCount, 0)
        loop.dispose()
    }

    func testGearShortFormPushingOnAModel() {
        let gear = Gear<String>()
        let heard = Recorder<String>()
        gear.observe { heard.append($0) }
        let loop = Loop<Int, Int, Never>(
            model: 0,
            reducer: { $0 + $1 },
            feedbacks: [.pushing(to: gear, catching: 2, propagating: "two")]
        )
        loop.dispatch(1)
        loop.dispatch(1)
        loop.dispatch(1)
        XCTAssertEqual(heard.values, ["two"])
    }
}
