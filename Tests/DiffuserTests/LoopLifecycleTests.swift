import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Start, stop, restart, dispose; sources.
///
/// One file although over 400 lines: a source's connection lives across the lifecycle
/// (a start connects it, a stop or dispose disconnects it), so both are tested together;
/// the races between closes are `LoopClosingRaceTests`.
final class LoopLifecycleTests: XCTestCase {
    /// A running loop that connects and disposes sources again and again keeps nothing
    /// of the disposed ones: neither their fusers (and what those capture) nor an action
    /// of the run for each.
    func testDisposedConnectionsAreLetGoWhileRunning() {
        final class Held {}
        let loop = Loop(model: Counter(), update: counterUpdate)
        weak var lastHeld: Held?
        for round in 0..<1_000 {
            let held = Held()
            lastHeld = held
            let source = ManualSource<CounterEvent>()
            let connection = loop.connect(Fuser(tryConnector: { sink in
                _ = held
                return source.connect { try? sink($0) }
            }))
            source.emit(.add(1))
            connection.dispose()
            XCTAssertEqual(source.activeConnections, 0, "round \(round)")
        }
        XCTAssertNil(lastHeld, "the last fuser is released once its connection is disposed")
        XCTAssertEqual(loop.model.count, 1_000)
        XCTAssertEqual(loop.core.sources.count, 0, "no slot is kept for a disposed connection")
        XCTAssertEqual(loop.core.session?.cancelActionCount, 0, "no action is kept for a disposed connection")
        let source = ManualSource<CounterEvent>()
        loop.connect(.from(source))
        loop.stop()
        XCTAssertTrue(loop.start())
        XCTAssertEqual(source.activeConnections, 1, "a live connection is still reconnected")
        loop.dispose()
        XCTAssertEqual(source.activeConnections, 0)
    }

    func testSourcesAreConnectedWhileRunning() {
        let source = ManualSource<Int>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            sources: .extract({ CounterEvent.add($0) }, .from(source))
        )
        XCTAssertEqual(source.activeConnections, 1)
        source.emit(3)
        XCTAssertEqual(loop.model.count, 3)
        loop.stop()
        XCTAssertEqual(source.activeConnections, 0)
        source.emit(100)
        loop.start()
        XCTAssertEqual(source.activeConnections, 1)
        source.emit(4)
        XCTAssertEqual(loop.model.count, 7)
        loop.dispose()
        XCTAssertEqual(source.activeConnections, 0)
        source.emit(100)
        XCTAssertEqual(loop.model.count, 7)
    }

    func testSourcesConnectedAtRunTime() {
        let a = ManualSource<CounterEvent>()
        let b = ManualSource<CounterEvent>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        let connection = loop.connect(.fromAll(.from(a), .from(b)))
        a.emit(.add(1))
        b.emit(.add(10))
        XCTAssertEqual(loop.model.count, 11)
        connection.dispose()
        XCTAssertEqual(a.activeConnections, 0)
        a.emit(.add(100))
        loop.stop()
        loop.start()
        XCTAssertEqual(a.activeConnections, 0, "a disposed connection is not reconnected")
        XCTAssertEqual(loop.model.count, 11)
    }

    /// A source that refuses to connect is no caller's error (it connects on the loop's
    /// turn): the inspector sees it, nothing of its fuser is connected for that run, and
    /// the next start tries again.
    func testASourceThatRefusesToConnectGoesToTheInspector() {
        let traces = TraceLog()
        let good = ManualSource<CounterEvent>()
        let refusals = Recorder<String>()
        let refusing = Fuser<CounterEvent>(tryConnector: { _ in
            if refusals.values.isEmpty {
                refusals.append("refused")
                throw TestFailure(tag: "refused")
            }
            return AnonymousDisposable(disposeFn: {})
        })
        let loop = Loop(model: Counter(), update: counterUpdate, inspector: traces.inspector)
        loop.connect(.fromAll(.from(good), refusing))
        XCTAssertEqual(good.activeConnections, 0, "the source connected before the refusal is disconnected")
        XCTAssertEqual(traces.lines.values, ["started Counter(0) []", "sourceFailed TestFailure(tag: \"refused\")"])
        loop.dispatch(.add(1))
        XCTAssertEqual(loop.model.count, 1, "the loop goes on")
        loop.stop()
        XCTAssertTrue(loop.start())
        XCTAssertEqual(good.activeConnections, 1, "the next start connects the fuser again")
        good.emit(.add(2))
        XCTAssertEqual(loop.model.count, 3)
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("sourceFailed") }.count, 1)
        loop.dispose()
        XCTAssertEqual(good.activeConnections, 0)
    }

    /// Mobius's controller: stop keeps the model, refuses events and cancels work;
    /// start republishes the model (through `restart`) and restarts requests.
    func testStopAndRestartKeepTheModel() {
        let log = Recorder<String>()
        let traces = TraceLog()
        let loop = Loop(
            model: Counter(),
            startEffects: [.note("first")],
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in
                log.append("effect \(effect)")
                job.onCancel { log.append("cancel \(effect)") }
            }],
            feedbacks: [.request(\.request) { request, job in
                log.append("request \(request)")
                job.onCancel { log.append("cancel request \(request)") }
            }],
            restart: { model in First(model, effects: [.note("again at \(model.count)")]) },
            inspector: traces.inspector
        )
        loop.observe { log.append("model \($0.count)") }
        loop.dispatch(.request("r"))
        loop.dispatch(.add(2))
        loop.stop()
        XCTAssertFalse(loop.isRunning)
        XCTAssertFalse(loop.dispatch(.increment))
        XCTAssertEqual(loop.model.count, 2)
        log.append("-- stopped")
        loop.stop()
        XCTAssertTrue(loop.start())
        XCTAssertTrue(loop.start(), "starting a running loop does nothing")
        loop.dispose()
        XCTAssertEqual(log.values, [
            "effect note(\"first\")",
            "model 0",
            "request r", "model 0",
            "model 2",
            "cancel note(\"first\")", "cancel request r",
            "-- stopped",
            "request r", "model 2", "effect note(\"again at 2\")",
            // Work is cancelled in the order it started.
            "cancel request r", "cancel note(\"again at 2\")",
        ])
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("started") || $0.hasPrefix("stopped") || $0.hasPrefix("disposed") }, [
            "started Counter(0) [DiffuserTests.CounterEffect.note(\"first\")]",
            "stopped Counter(2, r)",
            "started Counter(2, r) [DiffuserTests.CounterEffect.note(\"again at 2\")]",
            "disposed Counter(2, r)",
        ])
        XCTAssertFalse(loop.start(), "a disposed loop does not start")
    }

    func testAutostartFalseWaitsForStart() {
        let seen = Recorder<Int>()
        let loop = Loop(model: Counter(count: 1), update: counterUpdate, autostart: false)
        loop.observe { seen.append($0.count) }
        XCTAssertEqual(seen.values, [], "a loop that is not running publishes nothing")
        XCTAssertFalse(loop.dispatch(.increment))
        loop.start()
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, [1, 2])
    }

    func testDisposeIsIdempotentAndCancelsWork() {
        let jobs = Recorder<Job<CounterEvent>>()
        let cancels = Recorder<String>()
        let loop = Loop(
            model: Counter(),
            startEffects: [.note("long")],
            update: counterUpdate,
            handlers: [EffectHandler { _, job in
                jobs.append(job)
                job.onCancel { cancels.append("handler") }
            }],
            feedbacks: [.work { _, job in job.onCancel { cancels.append("feedback") } }]
        )
        loop.dispose()
        loop.dispose()
        XCTAssertTrue(loop.isDisposed)
        XCTAssertEqual(cancels.values.sorted(), ["feedback", "handler"])
        XCTAssertFalse(jobs.values[0].send(.increment))
        XCTAssertTrue(jobs.values[0].isCancelled)
        var late = false
        jobs.values[0].onCancel { late = true }
        XCTAssertTrue(late, "onCancel on a cancelled job runs at once")
        let subscription = loop.observe { _ in XCTFail("a disposed loop publishes nothing") }
        subscription.dispose()
    }

    /// A dispose from inside an observer skips the rest of the step: later observers,
    /// the effects and the queued events.
    func testDisposeFromInsideAStep() {
        let log = Recorder<String>()
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let traces = TraceLog()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in log.append("effect \(effect)") }],
            inspector: traces.inspector
        )
        loopRef = loop
        loop.observe { model in
            log.append("first \(model.count)")
            if model.count == 1 {
                loopRef!.dispatch(.increment)
                loopRef!.dispose()
                log.append("disposed")
                XCTAssertFalse(loopRef!.dispatch(.increment))
            }
        }
        loop.observe { log.append("second \($0.count)") }
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, ["first 0", "second 0", "first 1", "disposed"])
        XCTAssertTrue(traces.lines.values.contains("dropped increment disposed"))
        XCTAssertEqual(traces.lines.values.last, "disposed Counter(1)")
        loopRef = nil
    }

    func testStopAndStartFromInsideAStep() {
        let log = Recorder<String>()
        var loopRef: Loop<Counter, CounterEvent, CounterEffect>?
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in log.append("effect \(effect)") }]
        )
        loopRef = loop
        var restarted = false
        loop.observe { model in
            log.append("model \(model.count)")
            if model.count == 1 && !restarted {
                restarted = true
                loopRef!.stop()
                XCTAssertFalse(loopRef!.isRunning)
                loopRef!.start()
            }
        }
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, ["model 0", "model 1", "model 1", "model 2", "effect note(\"inc->2\")"])
        loopRef = nil
    }

    func testDroppingTheLastReferenceDisposes() {
        let source = ManualSource<CounterEvent>()
        let cancelled = Flag()
        var loop: Loop<Counter, CounterEvent, CounterEffect>? = Loop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.work { _, job in job.onCancel { cancelled.raise() } }],
            sources: .from(source)
        )
        weak let weakLoop = loop
        XCTAssertEqual(source.activeConnections, 1)
        loop = nil
        XCTAssertNil(weakLoop)
        XCTAssertEqual(source.activeConnections, 0)
        XCTAssertTrue(cancelled.isRaised)
    }

    /// A source that keeps the sink it was given after its connection is disposed (a
    /// source that never lets go of its subscribers) keeps nothing of the loop: once its
    /// owners let go of the loop, what the loop holds (here, its update's captures) is
    /// released, and the kept sink delivers nothing.
    func testASourceThatKeepsItsSinkDoesNotKeepTheLoop() throws {
        final class Held {}
        weak var weakHeld: Held?
        nonisolated(unsafe) var kept: [(CounterEvent) throws -> Void] = []
        do {
            let held = Held()
            weakHeld = held
            let update = Update<Counter, CounterEvent, CounterEffect> { model, event in
                _ = held
                return try counterUpdate(model, event)
            }
            var loop: CounterLoop? = Loop(model: Counter(), update: update, sources: Fuser(tryConnector: { sink in
                kept.append(sink)
                return AnonymousDisposable {}
            }))
            try kept[0](.increment)
            XCTAssertEqual(loop?.model.count, 1)
            loop = nil
        }
        XCTAssertNil(weakHeld, "a disposed connection holds nothing of its loop")
        XCTAssertEqual(kept.count, 1)
        try kept[0](.increment)
    }

    /// With an executor that cannot be waited for, dispose drops what is queued and the
    /// inspector sees each event.
    func testDisposeDropsEventsItCannotWaitFor() {
        let executor = ManualExecutor()
        let traces = TraceLog()
        let loop = Loop(model: Counter(), update: counterUpdate, executor: executor, inspector: traces.inspector)
        loop.dispatch(.increment)
        loop.dispatch(.add(2))
        loop.dispose()
        executor.runAll()
        XCTAssertEqual(loop.model.count, 0)
        XCTAssertEqual(traces.lines.values, ["dropped increment disposed", "dropped add(2) disposed", "disposed Counter(0)"])
    }

    /// A start not yet made when the loop stops is not made twice: the next start makes
    /// it, with the first start's effects.
    func testStopBeforeTheStartRanStartsOnce() {
        let executor = ManualExecutor()
        let traces = TraceLog()
        let loop = Loop(
            model: Counter(),
            startEffects: [.note("first")],
            update: counterUpdate,
            executor: executor,
            inspector: traces.inspector
        )
        loop.stop()
        loop.start()
        executor.runAll()
        XCTAssertEqual(traces.lines.values, ["started Counter(0) [DiffuserTests.CounterEffect.note(\"first\")]"])
        loop.dispose()
    }

    /// A background executor can be waited for: dispose lets the accepted events be
    /// handled first.
    func testDisposeWaitsForAcceptedEventsOnABackgroundExecutor() {
        let background = BackgroundExecutor()
        let slow = Update<Counter, CounterEvent, CounterEffect> { model, event in
            usleep(200)
            return try counterUpdate(model, event)
        }
        let loop = Loop(model: Counter(), update: slow, executor: background)
        for _ in 0..<100 { XCTAssertTrue(loop.dispatch(.increment)) }
        loop.dispose()
        XCTAssertEqual(loop.model.count, 100)
    }

    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// Disposes, from another thread, a loop on a background executor whose first step
    /// is held until events are refused; then lets the step go on (calling `inTheStep`
    /// with the loop) and waits for the dispose. Returns the loop, the first refusal and
    /// whether the loop said it was running right after it.
    private func disposeWhileTheFirstStepWaits(
        inspector: ((LoopTrace<Counter, CounterEvent, CounterEffect>) -> Void)? = nil,
        inTheStep: @escaping (CounterLoop) -> Void = { _ in }
    ) -> (loop: CounterLoop, refusal: Error, runningWhenRefused: Bool) {
        let gate = DispatchSemaphore(value: 0)
        let inUpdate = DispatchSemaphore(value: 0)
        nonisolated(unsafe) weak var weakLoop: CounterLoop?
        let holding = Update<Counter, CounterEvent, CounterEffect> { model, event in
            if model.count == 0 {
                inUpdate.signal()
                gate.wait()
                if let loop = weakLoop { inTheStep(loop) }
            }
            return try counterUpdate(model, event)
        }
        let loop = Loop(model: Counter(), update: holding, executor: BackgroundExecutor(), inspector: inspector)
        weakLoop = loop
        XCTAssertTrue(loop.dispatch(.increment))
        inUpdate.wait()
        let disposed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.dispose()
            disposed.signal()
        }
        var refusal: Error?
        while refusal == nil {
            do { try loop.tryDispatch(.increment) } catch { refusal = error }
        }
        let running = loop.isRunning
        gate.signal()
        disposed.wait()
        return (loop, refusal!, running)
    }

    /// From the moment `dispose` is called, events are refused as disposed: also while it
    /// waits for the drain of the events accepted before.
    func testEventsAreRefusedAsDisposedWhileADisposeWaitsForTheDrain() {
        let (loop, refusal, running) = disposeWhileTheFirstStepWaits()
        XCTAssertEqual(refusal as? LoopError, .disposed)
        XCTAssertFalse(running, "a loop that refuses events is not running")
        XCTAssertTrue(loop.isDisposed)
        XCTAssertGreaterThanOrEqual(loop.model.count, 1)
    }

    /// Nor does a run start then: a step that stops and starts the loop while a dispose
    /// waits for the drain leaves it stopped, to be disposed.
    func testNoRunStartsWhileADisposeWaitsForTheDrain() {
        let traces = TraceLog()
        nonisolated(unsafe) var restarted: Bool?
        let (loop, _, _) = disposeWhileTheFirstStepWaits(inspector: traces.inspector) { loop in
            loop.stop()
            restarted = loop.start()
        }
        XCTAssertEqual(restarted, false)
        XCTAssertTrue(loop.isDisposed)
        XCTAssertEqual(traces.lines.values.filter { $0.hasPrefix("started") }.count, 1, "started once")
    }
}
