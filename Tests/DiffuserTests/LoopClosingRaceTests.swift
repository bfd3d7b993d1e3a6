import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Stops and disposes that meet on several threads: two closes at once, a close from a
/// step while another thread's close waits for that step's drain, a close from the
/// inspector while a handler on its own executor fails, loops sharing a background
/// executor. None may deadlock, and each keeps the promise of the lifecycle: once
/// `stop()` or `dispose()` returns (outside a callback of the run), no callback of the
/// run is in progress on another thread and none starts.
///
/// A test that would hang fails on a timeout instead; loops it leaves stuck are kept
/// (`stuck`) so that their deinit does not hang the test process.
///
/// One file although over 400 lines: the tests stage their races with the same parts
/// (handlers on executors of their own that close the loop and wait, the timeouts,
/// `stuck`), and each race is read against the lifecycle's promise above.
final class LoopClosingRaceTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>
    nonisolated(unsafe) static var stuck: [AnyObject] = []

    /// A handler on its own executor stops the loop and waits (its stop waits for the
    /// drain), while an inline handler of the same step stops or disposes it too (and,
    /// `twice`, stops it once more): the step's close takes the place of the waiting one,
    /// and all return.
    private func checkAStepsCloseTakesThePlaceOfACallbacksWaitingStop(stepDisposes: Bool, twice: Bool = false) {
        let handlerExecutor = BackgroundExecutor()
        let finished = DispatchSemaphore(value: 0)
        let handlerReturned = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        Thread {
            let loop = CounterLoop(
                model: Counter(),
                update: counterUpdate,
                handlers: [
                    EffectHandler(on: handlerExecutor) { effect, _ in
                        guard case .note("stop") = effect else { return }
                        box.withLock { $0 }?.stop()
                        handlerReturned.signal()
                    },
                    EffectHandler { effect, _ in
                        guard case .note("stop") = effect, let loop = box.withLock({ $0 }) else { return }
                        _ = eventually(5) { !loop.isRunning } // the other stop has begun
                        if stepDisposes { loop.dispose() } else { loop.stop() }
                        if twice {
                            usleep(50_000)
                            loop.stop()
                        }
                    },
                ]
            )
            box.withLock { $0 = loop }
            Self.stuck.append(loop)
            loop.dispatch(.effects([.note("stop")]))
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the step's close never returned")
        XCTAssertEqual(handlerReturned.wait(timeout: .now() + 10), .success, "the handler's stop never returned")
        let loop = box.withLock { $0 }
        XCTAssertEqual(loop?.isRunning, false)
        XCTAssertEqual(loop?.isDisposed, stepDisposes)
    }

    /// An event from a source drains the idle loop on the source's thread; a handler of
    /// that step, on its own executor, emits into the same source while an inline handler
    /// stops the loop, waiting for it. The drain runs once the source's delivery has let
    /// go of the connection, so the handler's emission is not held up behind the stop
    /// waiting for it.
    func testAStopFromAStepDrainedBySourceWhileAHandlerEmitsIntoThatSource() {
        let handlerExecutor = BackgroundExecutor()
        let source = ManualSource<CounterEvent>()
        let emitting = Atomic<Bool>(false)
        let emitted = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [
                EffectHandler(on: handlerExecutor) { effect, _ in
                    guard case .note("go") = effect else { return }
                    emitting.store(true, ordering: .sequentiallyConsistent)
                    source.emit(.add(1))
                    emitted.signal()
                },
                EffectHandler { effect, _ in
                    guard case .note("go") = effect, let loop = box.withLock({ $0 }) else { return }
                    _ = eventually(5) { emitting.load(ordering: .sequentiallyConsistent) }
                    usleep(50_000) // the handler reaches the source's connection
                    loop.stop()
                },
            ]
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        loop.connect(.from(source))
        Thread {
            source.emit(.effects([.note("go")]))
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the source's emission never returned")
        XCTAssertEqual(emitted.wait(timeout: .now() + 10), .success, "the handler's emission never returned")
        XCTAssertFalse(loop.isRunning)
    }

    /// A source whose disconnect waits for its other threads' emissions (the header's
    /// recipe), with two listeners: a user one that stops the loop, and the loop's.
    /// The loop's coalescing key disposes the source's registration on `.add(99)` (a
    /// dispose from inside the connection's effect): the emitting thread then claims the
    /// drain for `.add(99)` and, before paying it, runs the source's disconnect, which
    /// waits for the other thread's emission, whose stop waits for the owed drain.
    /// The owed drain runs first, before that disconnect.
    func testAStopWaitingForADrainOwedByAnEmitterWhoseEffectDisposedTheSource() {
        let source = CountingSource<CounterEvent>()
        let box = Mutex<CounterLoop?>(nil)
        let registration = Mutex<_Disposable?>(nil)
        let tInDisconnect = Atomic<Bool>(false)
        source.onDisconnect = { tInDisconnect.store(true, ordering: .sequentiallyConsistent) }
        // The user's listener, connected first: on .request("stop") it waits until the
        // other thread is in the source's disconnect, then stops the loop.
        let userListener = source.connect { event in
            guard case .request("stop") = event else { return }
            _ = eventually(3) { tInDisconnect.load(ordering: .sequentiallyConsistent) }
            box.withLock { $0 }?.stop()
        }
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            coalescing: { event in
                if case .add(99) = event { registration.withLock { $0 }?.dispose() }
                return nil
            }
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        registration.withLock { $0 = loop.connect(Fuser<CounterEvent>.from(source)) }
        let uDone = DispatchSemaphore(value: 0)
        let tDone = DispatchSemaphore(value: 0)
        Thread { source.emit(.request("stop")); uDone.signal() }.start()
        _ = eventually(3) { source.inFlight > 0 }
        Thread { source.emit(.add(99)); tDone.signal() }.start()
        XCTAssertEqual(tDone.wait(timeout: .now() + 5), .success, "the emitter owing the drain never returned")
        XCTAssertEqual(uDone.wait(timeout: .now() + 5), .success, "the stop waiting for the owed drain never returned")
        Self.stuck.append(userListener as AnyObject) // its deinit would dispose (and wait)
        Self.stuck.append(source)
    }

    func testAStopFromAStepTakesThePlaceOfACallbacksStopWaitingForIt() {
        checkAStepsCloseTakesThePlaceOfACallbacksWaitingStop(stepDisposes: false)
    }

    func testADisposeFromAStepTakesThePlaceOfACallbacksStopWaitingForIt() {
        checkAStepsCloseTakesThePlaceOfACallbacksWaitingStop(stepDisposes: true)
    }

    /// A second `dispose()` while the first waits for a handler on another thread returns
    /// only once that handler has returned, as the first does.
    func testASecondDisposeWaitsForTheCallbacksTheFirstWaitsFor() {
        let handlerExecutor = BackgroundExecutor()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let handlerDone = Flag()
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { _, _ in
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
                handlerDone.raise()
            }]
        )
        loop.dispatch(.increment)
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        let returned = DispatchSemaphore(value: 0)
        Thread {
            loop.dispose() // waits for the handler
            returned.signal()
        }.start()
        XCTAssertTrue(eventually(5) { loop.isDisposed })
        let secondSawTheHandlerDone = Recorder<Bool>()
        Thread {
            loop.dispose()
            secondSawTheHandlerDone.append(handlerDone.isRaised)
            returned.signal()
        }.start()
        usleep(50_000) // time for a second dispose that does not wait to return
        release.signal()
        XCTAssertEqual(returned.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(returned.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(secondSawTheHandlerDone.values, [true], "the second dispose returned while the handler ran")
    }

    /// A second `dispose()` while the first is still reporting (before it ended the run):
    /// once it returns, no handler of the run starts.
    func testNoCallbackStartsAfterASecondDisposeReturned() {
        let loopExecutor = ManualExecutor()
        let handlerExecutor = ManualExecutor()
        let inDispose = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let handled = Recorder<String>()
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { effect, _ in handled.append("\(effect)") }],
            executor: loopExecutor,
            inspector: { trace in
                if case .dropped = trace {
                    inDispose.signal()
                    _ = proceed.wait(timeout: .now() + 10)
                }
            }
        )
        loopExecutor.runAll() // the start
        loop.dispatch(.increment)
        loopExecutor.runAll() // the step: the handler's work is queued
        loop.dispatch(.increment) // accepted, still queued: the dispose drops it
        XCTAssertEqual(handlerExecutor.pending, 1)
        let returned = DispatchSemaphore(value: 0)
        Thread {
            loop.dispose()
            returned.signal()
        }.start()
        XCTAssertEqual(inDispose.wait(timeout: .now() + 5), .success)
        let handledAfterTheSecond = Recorder<[String]>()
        Thread {
            loop.dispose()
            handlerExecutor.runAll() // a handler of the run, after dispose() returned
            handledAfterTheSecond.append(handled.values)
            returned.signal()
        }.start()
        usleep(50_000)
        proceed.signal()
        XCTAssertEqual(returned.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(returned.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(handledAfterTheSecond.values, [[]], "a handler of the run started after dispose() returned")
    }

    /// Two loops share a background executor. A thread stops loop `a`, waiting for a's
    /// drain, which is queued on the executor behind a step of loop `b` that stops (or
    /// starts) `a` too: the executor's thread cannot wait for work it has yet to run, so
    /// b's stop takes the place of the waiting one, and b's start is refused at once.
    private func checkAnotherLoopsStepOnTheSharedExecutor(starts: Bool) {
        let executor = BackgroundExecutor()
        let a = CounterLoop(model: Counter(), update: counterUpdate, executor: executor)
        let b = CounterLoop(model: Counter(), update: counterUpdate, executor: executor)
        Self.stuck += [a, b, executor]
        let stepReturned = DispatchSemaphore(value: 0)
        let started = Recorder<Bool>()
        b.observe { model in
            guard model.count == 1 else { return }
            if starts { started.append(a.start()) } else { a.stop() }
            stepReturned.signal()
        }
        let idle = DispatchSemaphore(value: 0)
        executor.execute { idle.signal() } // after both starts and the registration
        XCTAssertEqual(idle.wait(timeout: .now() + 5), .success)
        let gate = DispatchSemaphore(value: 0)
        executor.execute { _ = gate.wait(timeout: .now() + 10) } // holds the executor
        b.dispatch(.increment) // b's drain, queued first: its step stops or starts a
        a.dispatch(.increment) // a's drain, queued behind it
        let stopReturned = DispatchSemaphore(value: 0)
        Thread {
            a.stop() // waits for a's drain
            stopReturned.signal()
        }.start()
        XCTAssertTrue(eventually(5) { !a.isRunning }) // that stop has begun
        gate.signal()
        XCTAssertEqual(stepReturned.wait(timeout: .now() + 10), .success, "b's step never returned")
        XCTAssertEqual(stopReturned.wait(timeout: .now() + 10), .success, "the other thread's stop never returned")
        if starts { XCTAssertEqual(started.values, [false], "a stop is under way") }
        XCTAssertFalse(a.isRunning)
    }

    func testAStopFromAnotherLoopsStepOnTheSharedExecutorDoesNotWaitForItsOwnThread() {
        checkAnotherLoopsStepOnTheSharedExecutor(starts: false)
    }

    func testAStartFromAnotherLoopsStepOnTheSharedExecutorDoesNotWaitForItsOwnThread() {
        checkAnotherLoopsStepOnTheSharedExecutor(starts: true)
    }

    /// An inspector that stops the loop when an update fails, while a handler on its own
    /// executor fails: the stop does not wait for the handler, which waits for the
    /// inspector, and the handler's failure is reported after it.
    func testAnInspectorThatStopsTheLoopWhileAHandlerFailsOnAnotherThread() {
        let handlerExecutor = BackgroundExecutor()
        let entered = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let traces = Recorder<String>()
        Self.stuck.append(handlerExecutor)
        Thread {
            let loop = CounterLoop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler(on: handlerExecutor) { _, _ in
                    entered.signal()
                    _ = eventually(5) { !(box.withLock { $0 }?.isRunning ?? true) } // the stop has begun
                    throw UpdateError()
                }],
                inspector: { trace in
                    traces.append(TraceLog.describe(trace))
                    if case .failed = trace { box.withLock { $0 }?.stop() }
                }
            )
            box.withLock { $0 = loop }
            Self.stuck.append(loop)
            loop.dispatch(.effects([.note("work")]))
            _ = entered.wait(timeout: .now() + 5)
            loop.dispatch(.fail)
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "stop() from the inspector never returned")
        XCTAssertTrue(eventually(5) { traces.values.contains { $0.hasPrefix("effectFailed") } })
        XCTAssertEqual(traces.values.filter { $0.hasPrefix("failed") || $0.hasPrefix("stopped") || $0.hasPrefix("effectFailed") }
                           .map { String($0.prefix(while: { $0 != " " })) },
                       ["failed", "stopped", "effectFailed"])
    }

    /// A thread stops the loop and waits for the drain; the step's observer stops the
    /// loop itself, taking the waiting stop's place, and goes on a while: the waiting
    /// stop returns only once that observer has returned.
    func testAStopWhosePlaceAStepTookReturnsOnceTheStepEnds() {
        let inObserver = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observerDone = Flag()
        let box = Mutex<CounterLoop?>(nil)
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        box.withLock { $0 = loop }
        loop.observe { model in
            guard model.count == 1, let loop = box.withLock({ $0 }) else { return }
            inObserver.signal()
            _ = eventually(5) { !loop.isRunning } // the other thread's stop has begun
            loop.stop()
            _ = release.wait(timeout: .now() + 10) // the observer goes on a while
            observerDone.raise()
        }
        let stepDone = DispatchSemaphore(value: 0)
        Thread {
            loop.dispatch(.increment)
            stepDone.signal()
        }.start()
        XCTAssertEqual(inObserver.wait(timeout: .now() + 5), .success)
        Thread {
            usleep(50_000) // time for a stop that does not wait to return
            release.signal()
        }.start()
        loop.stop()
        XCTAssertTrue(observerDone.isRaised, "stop() returned while the observer of the run still ran")
        XCTAssertEqual(stepDone.wait(timeout: .now() + 5), .success)
    }

    /// A handler on its own executor disposes a registration (a feedback or an observer)
    /// while it hears a model on the drainer and stops the loop: the dispose waits for
    /// that call, and the stop does not wait for the handler meanwhile. Both return.
    private func checkAHandlerDisposingARegistrationThatStopsTheLoop(feedback: Bool) {
        let handlerExecutor = BackgroundExecutor()
        let handlerIn = DispatchSemaphore(value: 0)
        let registrationIn = DispatchSemaphore(value: 0)
        let handlerDone = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let loopBox = Mutex<CounterLoop?>(nil)
        nonisolated(unsafe) var registration: _Disposable?
        let registered = NSLock()
        Self.stuck.append(handlerExecutor)
        Thread {
            let loop = CounterLoop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                    guard case .note("dispose") = effect else { return }
                    handlerIn.signal()
                    _ = registrationIn.wait(timeout: .now() + 5)
                    registered.lock()
                    let target = registration
                    registered.unlock()
                    target?.dispose()
                    handlerDone.signal()
                }]
            )
            let hear = { (model: Counter) in
                guard model.count == 1 else { return }
                registrationIn.signal()
                usleep(100_000) // the handler is disposing this registration now
                loopBox.withLock { $0 }?.stop()
            }
            let made: _Disposable = feedback
                ? loop.add(.react { model in hear(model); return [] })
                : loop.subscribe(hear)
            registered.lock()
            registration = made
            registered.unlock()
            loopBox.withLock { $0 = loop }
            Self.stuck.append(loop)
            loop.dispatch(.effects([.note("dispose")]))
            _ = handlerIn.wait(timeout: .now() + 5)
            loop.dispatch(.increment)
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the registration's stop() never returned")
        XCTAssertEqual(handlerDone.wait(timeout: .now() + 10), .success, "the handler's dispose() never returned")
    }

    func testAHandlerDisposingAFeedbackThatStopsTheLoop() {
        checkAHandlerDisposingARegistrationThatStopsTheLoop(feedback: true)
    }

    func testAHandlerDisposingAnObserverThatStopsTheLoop() {
        checkAHandlerDisposingARegistrationThatStopsTheLoop(feedback: false)
    }

    /// A handler on its own executor fails; the inspector, on the handler's thread, stops
    /// the loop while the drainer still has an event to step: the stop does not wait for
    /// the drain, whose trace needs the inspector.
    func testAnInspectorStoppingTheLoopOnAHandlersFailureWhileTheLoopDrains() {
        let handlerExecutor = BackgroundExecutor()
        let observerIn = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        let loopBox = Mutex<CounterLoop?>(nil)
        Self.stuck.append(handlerExecutor)
        Thread {
            let loop = CounterLoop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                    guard case .note("fail") = effect else { return }
                    _ = observerIn.wait(timeout: .now() + 5)
                    throw UpdateError()
                }],
                inspector: { trace in
                    if case .effectFailed = trace {
                        loopBox.withLock { $0 }?.stop()
                        stopped.signal()
                    }
                }
            )
            _ = loop.subscribe { model in
                guard model.count == 1, let loop = loopBox.withLock({ $0 }) else { return }
                loop.dispatch(.increment) // queued behind this step
                observerIn.signal()
                _ = eventually(5) { !loop.isRunning } // the inspector's stop has begun
            }
            loopBox.withLock { $0 = loop }
            Self.stuck.append(loop)
            loop.dispatch(.effects([.note("fail")]))
            loop.dispatch(.increment)
            finished.signal()
        }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the drain never returned")
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success, "the inspector's stop() never returned")
    }

    /// A handler on its own executor disposes an observer that the drainer is calling;
    /// that observer stops the loop, taking the place of a stop from the test thread that
    /// waits for the drain. The observer's stop does not wait for the handler (which
    /// waits for it), but the test thread's, outside every callback of the run, returns
    /// only once the handler has.
    func testAStopWhosePlaceAStepTookWaitsForAHandlerDisposingAnObserver() {
        let handlerExecutor = BackgroundExecutor()
        Self.stuck.append(handlerExecutor)
        let handlerIn = DispatchSemaphore(value: 0)
        let observerIn = DispatchSemaphore(value: 0)
        let handlerDone = Flag()
        let box = Mutex<CounterLoop?>(nil)
        let registered = NSLock()
        nonisolated(unsafe) var registration: _Disposable?
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                guard case .note("dispose") = effect else { return }
                handlerIn.signal()
                _ = observerIn.wait(timeout: .now() + 5)
                registered.lock(); let target = registration; registered.unlock()
                target?.dispose() // waits for the observer
                usleep(300_000) // the handler goes on a while
                handlerDone.raise()
            }]
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        let made = loop.subscribe { model in
            guard model.count == 1, let loop = box.withLock({ $0 }) else { return }
            observerIn.signal()
            observerIn.signal()
            _ = eventually(5) { !loop.isRunning } // the test thread's stop has begun
            usleep(100_000) // the handler is in dispose() now
            loop.stop() // takes the waiting stop's place
        }
        registered.lock(); registration = made; registered.unlock()
        let drained = DispatchSemaphore(value: 0)
        Thread {
            loop.dispatch(.effects([.note("dispose")]))
            _ = handlerIn.wait(timeout: .now() + 5)
            loop.dispatch(.increment)
            drained.signal()
        }.start()
        XCTAssertEqual(observerIn.wait(timeout: .now() + 5), .success)
        let stopped = DispatchSemaphore(value: 0)
        let sawHandlerDone = Recorder<Bool>()
        Thread {
            loop.stop()
            sawHandlerDone.append(handlerDone.isRaised)
            stopped.signal()
        }.start()
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success, "stop() never returned")
        XCTAssertEqual(drained.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(sawHandlerDone.values, [true], "stop() returned while a handler of the run still ran")
    }

    /// A close from the drain's step returns at once, also the second one.
    func testAStepStoppingTwiceAfterTakingTheHandlersPlace() {
        checkAStepsCloseTakesThePlaceOfACallbacksWaitingStop(stepDisposes: false, twice: true)
    }

    /// A handler on its own executor stops its loop and goes on, waiting for the thread
    /// that later calls `stop()` or `dispose()`: a close that meets no other close returns
    /// at once, stop and dispose alike (the handler's own stop did not wait for it).
    func testACloseOfAStoppedLoopDoesNotWaitForTheCallbackThatStoppedIt() {
        for disposes in [false, true] {
            let handlerExecutor = BackgroundExecutor()
            Self.stuck.append(handlerExecutor)
            let stopped = DispatchSemaphore(value: 0)
            let fromTestThread = DispatchSemaphore(value: 0)
            let heard = Recorder<DispatchTimeoutResult>()
            let box = Mutex<CounterLoop?>(nil)
            let loop = CounterLoop(
                model: Counter(),
                update: counterUpdate,
                handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                    guard case .note("stop") = effect else { return }
                    box.withLock { $0 }?.stop()
                    stopped.signal()
                    heard.append(fromTestThread.wait(timeout: .now() + 3)) // a main-queue sync, say
                }]
            )
            box.withLock { $0 = loop }
            Self.stuck.append(loop)
            loop.dispatch(.effects([.note("stop")]))
            XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
            if disposes { loop.dispose() } else { loop.stop() }
            fromTestThread.signal()
            XCTAssertTrue(eventually(5) { heard.count == 1 })
            XCTAssertEqual(heard.values, [.success], "\(disposes ? "dispose" : "stop")() waited for the callback")
        }
    }

    /// A stop from the loop's own executor thread meets a handler's stop; the handler goes
    /// on, registers something (a drain queued on that executor) and disposes, which
    /// waits for that drain: the executor's stop returns once the handler's has, without
    /// waiting for the handler, so both return.
    func testAStopOnTheExecutorThreadThatMetAHandlersStopAndTheHandlersDispose() {
        let loopExecutor = BackgroundExecutor()
        let handlerExecutor = BackgroundExecutor()
        Self.stuck.append(loopExecutor); Self.stuck.append(handlerExecutor)
        let stopping = DispatchSemaphore(value: 0)
        let executorStopReturned = DispatchSemaphore(value: 0)
        let handlerDisposed = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                guard case .note("stop") = effect, let loop = box.withLock({ $0 }) else { return }
                loop.stop()
                usleep(300_000) // the executor's stop now waits for this callback
                loop.record(into: nil) // a drain, queued on the loop's executor
                loop.dispose()
                handlerDisposed.signal()
            }],
            executor: loopExecutor,
            inspector: { trace in
                if case .stopped = trace {
                    stopping.signal()
                    usleep(300_000) // let the executor's stop meet this one
                }
            }
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        loop.dispatch(.effects([.note("stop")]))
        loopExecutor.execute {
            _ = stopping.wait(timeout: .now() + 5)
            loop.stop()
            executorStopReturned.signal()
        }
        XCTAssertEqual(executorStopReturned.wait(timeout: .now() + 8), .success, "the executor thread's stop never returned")
        XCTAssertEqual(handlerDisposed.wait(timeout: .now() + 8), .success, "the handler's dispose never returned")
    }

    /// A handler stops its loop, then fails; the inspector, on the handler's thread,
    /// stops the loop while another thread's dispose waits for the inspector to report
    /// DISPOSED: a close from the inspector does not wait for another close.
    func testAStopFromTheInspectorOfAFailedHandlerMeetingADispose() {
        let handlerExecutor = BackgroundExecutor()
        Self.stuck.append(handlerExecutor)
        let failed = DispatchSemaphore(value: 0)
        let inspectorStopReturned = DispatchSemaphore(value: 0)
        let disposeReturned = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                guard case .note("stop") = effect, let loop = box.withLock({ $0 }) else { return }
                loop.stop()
                throw UpdateError()
            }],
            inspector: { trace in
                guard case .effectFailed = trace, let loop = box.withLock({ $0 }) else { return }
                failed.signal()
                usleep(300_000) // the dispose now waits for the inspector
                loop.stop()
                inspectorStopReturned.signal()
            }
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        loop.dispatch(.effects([.note("stop")]))
        XCTAssertEqual(failed.wait(timeout: .now() + 5), .success)
        Thread { loop.dispose(); disposeReturned.signal() }.start()
        XCTAssertEqual(inspectorStopReturned.wait(timeout: .now() + 8), .success, "the inspector's stop never returned")
        XCTAssertEqual(disposeReturned.wait(timeout: .now() + 8), .success, "the dispose never returned")
    }

    /// As testACloseOfAStoppedLoopDoesNotWaitForTheCallbackThatStoppedIt, but the test
    /// thread's dispose meets another thread's dispose of the stopped loop: it still
    /// waits for no callback.
    func testADisposeOfAStoppedLoopMeetingAnotherDisposeWaitsForNoCallback() {
        let handlerExecutor = BackgroundExecutor()
        Self.stuck.append(handlerExecutor)
        let stopped = DispatchSemaphore(value: 0)
        let disposing = DispatchSemaphore(value: 0)
        let fromTestThread = DispatchSemaphore(value: 0)
        let heard = Mutex<[DispatchTimeoutResult]>([])
        let box = Mutex<CounterLoop?>(nil)
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler(on: handlerExecutor) { effect, _ in
                guard case .note("stop") = effect else { return }
                box.withLock { $0 }?.stop()
                stopped.signal()
                let result = fromTestThread.wait(timeout: .now() + 3) // a main-queue sync, say
                heard.withLock { $0.append(result) }
            }],
            inspector: { trace in
                if case .disposed = trace {
                    disposing.signal()
                    usleep(300_000) // let the test thread's dispose meet this one
                }
            }
        )
        box.withLock { $0 = loop }
        Self.stuck.append(loop)
        loop.dispatch(.effects([.note("stop")]))
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
        Thread { loop.dispose() }.start()
        XCTAssertEqual(disposing.wait(timeout: .now() + 5), .success)
        loop.dispose()
        fromTestThread.signal()
        XCTAssertTrue(eventually(5) { heard.withLock { $0.count } == 1 })
        XCTAssertEqual(heard.withLock { $0 }, [.success], "dispose() waited for the callback that stopped the loop")
    }
}

/// A source whose disconnect waits for the emissions in progress on other threads.
final class CountingSource<T>: Source, @unchecked Sendable {
    typealias A = T
    private let lock = NSLock()
    private var effects: [(UInt64, Effect<T>)] = []
    private var next: UInt64 = 0
    private var calls: [UInt: Int] = [:]
    var onDisconnect: (() -> Void)?

    var inFlight: Int { lock.withLock { calls.values.reduce(0, +) } }

    func connect(_ effect: @escaping Effect<T>) -> Fuser<T>.Disposable {
        let id: UInt64 = lock.withLock { next += 1; effects.append((next, effect)); return next }
        return AnonymousDisposable { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.effects.removeAll { $0.0 == id } }
            self.onDisconnect?()
            let me = loopThreadID()
            while self.lock.withLock({ self.calls.contains { $0.key != me && $0.value > 0 } }) { usleep(1_000) }
        }
    }

    func emit(_ value: T) {
        let me = loopThreadID()
        let snapshot = lock.withLock { calls[me, default: 0] += 1; return effects }
        for (_, effect) in snapshot { effect(value) }
        lock.withLock { calls[me, default: 0] -= 1 }
    }
}
