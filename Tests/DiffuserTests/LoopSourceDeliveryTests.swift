import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// A loop's source deliveries (transforms under their connection's lock) meeting closes,
/// dispatches and other deliveries on other threads, and the drain a delivering thread
/// owes (`LoopCore.debtor`). Each test runs the part that could deadlock on detached
/// threads and fails after a timeout instead of hanging the run.
final class LoopSourceDeliveryTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    // MARK: A transform calls its loop after a nested event of its connection

    /// A transform that causes a nested event of its connection, then stops the loop:
    /// the stop does not wait for the drain this thread owes (it would wait for itself),
    /// it runs it, handling the event accepted before the stop.
    func testATransformThatStopsItsLoopAfterANestedEventDoesNotDeadlock() {
        let loop = closeFromATransform { $0.stop() }
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.model.count, 10, "the nested event, accepted before the stop, was handled")
    }

    /// The same with `dispose()`.
    func testATransformThatDisposesItsLoopAfterANestedEventDoesNotDeadlock() {
        let loop = closeFromATransform { $0.dispose() }
        XCTAssertTrue(loop.isDisposed)
    }

    /// Sends 1 on another thread into a loop's connection whose transform, given 1,
    /// sends 10 into the same connection (nested), then calls `close` on the loop.
    private func closeFromATransform(
        _ close: @escaping @Sendable (CounterLoop) -> Void
    ) -> CounterLoop {
        let output = Output<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        let fuser = Fuser<CounterEvent>.extract({ [weak loop] (n: Int) -> CounterEvent in
            if n == 1, let loop {
                output.send(10)     // nested: queued, its drain owed by this thread
                close(loop)
            }
            return .add(n)
        }, output.fuser)
        loop.connect(fuser)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            output.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success,
                       "the close in the transform waited for the drain its own thread owes")
        return loop
    }

    /// `Loop.dispatch` with the caller's executor: the event has been handled on return
    /// unless another thread is draining the loop, also from a transform after a nested
    /// event of the same connection (whose drain this thread owes).
    func testADispatchFromATransformAfterANestedEventIsHandledOnReturn() {
        let output = Output<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        let seen = Recorder<Int>()
        let fuser = Fuser<CounterEvent>.extractUnlessNil({ [weak loop] (n: Int) -> CounterEvent? in
            if n == 2 { return .add(1) }
            guard let loop else { return nil }
            output.send(2)          // nested: queued, its drain owed by this thread
            loop.dispatch(.add(100))
            seen.append(loop.model.count)
            return nil
        }, output.fuser)
        loop.connect(fuser)
        output.send(1)
        XCTAssertEqual(seen.values, [101], "dispatch returned before the event was handled, with no other thread draining")
        XCTAssertEqual(loop.model.count, 101)
        loop.dispose()
    }

    // MARK: A transform closes its loop while another thread closes it

    /// A transform of a loop's source stops the loop while another thread is stopping
    /// it. The other stop cancels the run, which disconnects the source: that dispose
    /// waits for the delivery in progress (the transform, under the connection's lock).
    /// The delivery is a callback of the run, so the transform's stop leaves the work to
    /// the other one and returns; both return.
    func testATransformThatStopsItsLoopWhileAnotherThreadStopsItDoesNotDeadlock() {
        transformClosesWhileAnotherThreadCloses(nested: false) { $0.stop() }
    }

    /// The same after a nested event of the connection: the transform's stop first runs
    /// the drain its thread owes (the other stop waits for it), then returns.
    func testATransformThatStopsItsLoopAfterANestedEventWhileAnotherThreadStopsItDoesNotDeadlock() {
        transformClosesWhileAnotherThreadCloses(nested: true) { $0.stop() }
    }

    /// The same with dispose in the transform.
    func testATransformThatDisposesItsLoopAfterANestedEventWhileAnotherThreadStopsItDoesNotDeadlock() {
        transformClosesWhileAnotherThreadCloses(nested: true) { $0.dispose() }
    }

    private func transformClosesWhileAnotherThreadCloses(
        nested: Bool, _ close: @escaping @Sendable (CounterLoop) -> Void
    ) {
        let output = Output<Int>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let inTransform = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let fuser = Fuser<CounterEvent>.extract({ [weak loop] (n: Int) -> CounterEvent in
            if n == 1, let loop {
                if nested { output.send(10) }   // queued; its drain owed by this thread
                inTransform.signal()
                _ = proceed.wait(timeout: .now() + 5)
                close(loop)
            }
            return .add(n)
        }, output.fuser)
        loop.connect(fuser)
        let sent = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            output.send(1)
            sent.signal()
        }
        XCTAssertEqual(inTransform.wait(timeout: .now() + 5), .success)
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.stop()
            stopped.signal()
        }
        // Let the other stop begin (it refuses events from its first instant).
        XCTAssertTrue(eventually(5) { !loop.isRunning })
        usleep(100_000)
        proceed.signal()
        XCTAssertEqual(sent.wait(timeout: .now() + 5), .success, "the transform's close never returned")
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success, "the other thread's stop never returned")
    }

    // MARK: A delivery closes its loop while the source is still connecting

    /// A source whose `connect` hands its emitter to another thread, which emits while
    /// `connect` is still running on the drainer's thread; the delivery's transform
    /// disposes the loop. The dispose waits for the drain that connects the source, and
    /// that drain must not wait for the delivery (which holds the connection's lock) to
    /// record the sources it connected: both return, and the source is disconnected.
    func testATransformThatDisposesItsLoopWhileItsSourceConnectsDoesNotDeadlock() {
        closeFromADeliveryWhileConnecting(inKey: false) { $0.dispose() }
    }

    /// The same with `stop()` in the transform.
    func testATransformThatStopsItsLoopWhileItsSourceConnectsDoesNotDeadlock() {
        closeFromADeliveryWhileConnecting(inKey: false) { $0.stop() }
    }

    /// The same with `dispose()` in the coalescing key, which runs inside the delivery.
    func testACoalescingKeyThatDisposesItsLoopWhileItsSourceConnectsDoesNotDeadlock() {
        closeFromADeliveryWhileConnecting(inKey: true) { $0.dispose() }
    }

    /// The same with `stop()` in the coalescing key.
    func testACoalescingKeyThatStopsItsLoopWhileItsSourceConnectsDoesNotDeadlock() {
        closeFromADeliveryWhileConnecting(inKey: true) { $0.stop() }
    }

    /// Connects to a loop a source whose `connect` starts a thread that emits 1, and
    /// returns only once that delivery is closing the loop (with `close`, from the
    /// transform or, if `inKey`, from the coalescing key).
    private func closeFromADeliveryWhileConnecting(
        inKey: Bool, _ close: @escaping @Sendable (CounterLoop) -> Void
    ) {
        final class Target: @unchecked Sendable { weak var loop: CounterLoop? }
        let target = Target()
        let closing = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let disconnected = Atomic<Int>(0)
        let closeOnce = Atomic<Bool>(false)
        let closeFromDelivery: @Sendable () -> Void = {
            guard !closeOnce.exchange(true, ordering: .relaxed), let loop = target.loop else { return }
            closing.signal()
            close(loop)
        }
        let loop = CounterLoop(
            model: Counter(), update: counterUpdate,
            coalescing: inKey ? { _ in closeFromDelivery(); return nil } : nil
        )
        target.loop = loop
        let source = Fuser<Int>.from { (emit: @escaping Effect<Int>) -> Fuser<Int>.Disposable in
            nonisolated(unsafe) let emit = emit
            Thread.detachNewThread {
                emit(1)
                sent.signal()
            }
            // Returns once the other thread's delivery is closing the loop.
            _ = closing.wait(timeout: .now() + 5)
            usleep(100_000)
            return AnonymousDisposable { disconnected.add(1, ordering: .relaxed) }
        }
        nonisolated(unsafe) let fuser = Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            if !inKey { closeFromDelivery() }
            return .add(n)
        }, source)
        guard returnsInTime("connecting the source deadlocked with the close in its delivery", holding: loop, {
            loop.connect(fuser)
        }) else { return }
        XCTAssertEqual(sent.wait(timeout: .now() + 5), .success, "the close in the delivery never returned")
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.model.count, 0, "the event of the closing delivery was refused")
        XCTAssertTrue(eventually(5) { disconnected.load(ordering: .relaxed) == 1 },
                      "the connection made while the loop closed was not disconnected")
    }

    /// A handler on its own executor (a callback of the run) connects a fuser whose
    /// source hands its emitter to another thread, whose delivery's effect disposes the
    /// loop while the source still connects. The dispose waits for the handler's
    /// callback, which must not wait for that delivery to record the sources it
    /// connected: both return.
    func testADeliveryThatDisposesTheLoopWhileAHandlerConnectsAFuserDoesNotDeadlock() {
        final class Target: @unchecked Sendable {
            weak var loop: CounterLoop?
            let lock = NSLock()
            var connection: Fuser<Int>.Disposable?
        }
        let target = Target()
        let closing = DispatchSemaphore(value: 0), sent = DispatchSemaphore(value: 0)
        let handled = DispatchSemaphore(value: 0)
        let disconnected = Atomic<Int>(0)
        let source = Fuser<Int>.from { (emit: @escaping Effect<Int>) -> Fuser<Int>.Disposable in
            nonisolated(unsafe) let emit = emit
            Thread.detachNewThread {
                emit(1)
                sent.signal()
            }
            _ = closing.wait(timeout: .now() + 5)
            usleep(100_000)
            return AnonymousDisposable { disconnected.add(1, ordering: .relaxed) }
        }
        nonisolated(unsafe) let fuser = source
        let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [
            EffectHandler(on: BackgroundExecutor()) { effect, _ in
                guard case .note("connect") = effect else { return }
                let connection = fuser.connect { _ in
                    closing.signal()
                    target.loop?.dispose()
                }
                target.lock.withLock { target.connection = connection }
                handled.signal()
            },
        ])
        target.loop = loop
        loop.dispatch(.effects([.note("connect")]))
        XCTAssertEqual(handled.wait(timeout: .now() + 10), .success, "the handler's connect never returned")
        XCTAssertEqual(sent.wait(timeout: .now() + 10), .success, "the dispose in the delivery never returned")
        XCTAssertTrue(loop.isDisposed)
        target.lock.withLock { target.connection }?.dispose()
        XCTAssertEqual(disconnected.load(ordering: .relaxed), 1)
    }

    // MARK: Nested deliveries of two connections of one loop

    /// A loop (the caller's executor) with two sources; a transform of the first causes
    /// an event of the second, nested in the first's delivery. The drain is run once
    /// the first delivery is over, not when the second's is: a step under the first
    /// connection's lock would make a handler on another thread emitting into the first
    /// source wait for that lock, and a stop in the step, which waits for that handler,
    /// wait forever.
    func testANestedEventOfAnotherConnectionOfTheLoopRunsNoStepUnderTheOuterConnectionsLock() {
        XCTAssertTrue(stopInAStepWaitingForAnEmittingHandler(nestedInOuterDelivery: true),
                      "the step ran under the outer connection's lock: the stop waited for a handler waiting for that lock")
    }

    /// Control: the same event sent directly (not nested) runs once the delivery is over,
    /// and the stop in its step returns.
    func testAnEventOfTheSecondConnectionSentDirectlyRunsItsStepOutsideAnyLock() {
        XCTAssertTrue(stopInAStepWaitingForAnEmittingHandler(nestedInOuterDelivery: false))
    }

    /// Whether the loop's stop, made in the step of the second source's event while a
    /// handler on a background thread emits into the first source, returned in time.
    private func stopInAStepWaitingForAnEmittingHandler(nestedInOuterDelivery: Bool) -> Bool {
        let first = Output<Int>()
        let second = Output<Int>()
        let handlerStarted = DispatchSemaphore(value: 0)
        let background = BackgroundExecutor()
        nonisolated(unsafe) var loopRef: CounterLoop?
        let emitting = EffectHandler<CounterEffect, CounterEvent>(on: background) { effect, _ in
            guard effect == .note("go") else { return }
            handlerStarted.signal()
            first.send(100)     // waits for the first connection's lock while a delivery holds it
        }
        let stopping = EffectHandler<CounterEffect, CounterEvent> { effect, _ in
            guard effect == .note("go") else { return }
            _ = handlerStarted.wait(timeout: .now() + 5)
            usleep(100_000)     // the handler is now in first.send
            loopRef?.stop()     // waits for the handler's callback
        }
        let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [emitting, stopping])
        loopRef = loop
        loop.connect(Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            if n == 1 && nestedInOuterDelivery { second.send(5) }
            return .add(n)
        }, first.fuser))
        loop.connect(Fuser<CounterEvent>.extract({ (_: Int) -> CounterEvent in .effects([.note("go")]) }, second.fuser))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if nestedInOuterDelivery { first.send(1) } else { second.send(5) }
            done.signal()
        }
        let returned = done.wait(timeout: .now() + 5) == .success
        if returned { loopRef = nil }
        return returned
    }

    // MARK: Nested deliveries of two loops

    /// Two loops (the caller's executor): a transform of loop A's source causes an event
    /// of loop B's source, nested in A's delivery. B's drain is run once A's delivery is
    /// over, not when B's is: a step of B under A's connection's lock would make a
    /// handler of B on another thread emitting into A's source wait for that lock, and a
    /// stop in B's step, which waits for that handler, wait forever.
    func testANestedEventOfAnotherLoopsSourceRunsNoStepUnderTheOuterConnectionsLock() {
        XCTAssertTrue(stopInAStepOfTheInnerLoop(nested: true),
                      "loop B's step ran under loop A's connection's lock: its stop waited for a handler waiting for that lock")
    }

    /// Control: the same event of B sent directly (not nested in A's delivery).
    func testAnEventOfTheOtherLoopsSourceSentDirectlyRunsItsStepOutsideAnyLock() {
        XCTAssertTrue(stopInAStepOfTheInnerLoop(nested: false))
    }

    private func stopInAStepOfTheInnerLoop(nested: Bool) -> Bool {
        let first = Output<Int>()   // loop A's source
        let second = Output<Int>()  // loop B's source
        let handlerStarted = DispatchSemaphore(value: 0)
        let background = BackgroundExecutor()
        nonisolated(unsafe) var innerRef: CounterLoop?
        let emitting = EffectHandler<CounterEffect, CounterEvent>(on: background) { effect, _ in
            guard effect == .note("go") else { return }
            handlerStarted.signal()
            first.send(100)     // waits for A's connection's lock while a delivery holds it
        }
        let stopping = EffectHandler<CounterEffect, CounterEvent> { effect, _ in
            guard effect == .note("go") else { return }
            _ = handlerStarted.wait(timeout: .now() + 5)
            usleep(100_000)     // the handler is now in first.send
            innerRef?.stop()    // waits for the handler's callback
        }
        let outer = CounterLoop(model: Counter(), update: counterUpdate)
        let inner = CounterLoop(model: Counter(), update: counterUpdate, handlers: [emitting, stopping])
        innerRef = inner
        outer.connect(Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            if n == 1 && nested { second.send(5) }
            return .add(n)
        }, first.fuser))
        inner.connect(Fuser<CounterEvent>.extract({ (_: Int) -> CounterEvent in .effects([.note("go")]) }, second.fuser))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if nested { first.send(1) } else { second.send(5) }
            done.signal()
        }
        let returned = done.wait(timeout: .now() + 5) == .success
        if returned {
            innerRef = nil
            outer.dispose()
        } else {
            // Deadlocked: keep both loops (their deinit would dispose, and wait).
            _ = Unmanaged.passRetained(outer)
            _ = Unmanaged.passRetained(inner)
        }
        return returned
    }

    // MARK: A dispatch on another thread while the drain is owed

    /// A transform causes a nested event of its connection (its thread now owes the
    /// drain), then waits for a dispatch on another thread. That dispatch takes the debt
    /// over and drains, so its event is handled on return (`dispatch`'s promise with the
    /// caller's executor, unless another thread is draining the loop).
    func testADispatchOnAnotherThreadWhileADrainIsOwedIsHandledOnReturn() {
        let output = Output<Int>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let seen = Recorder<Int>()
        let fuser = Fuser<CounterEvent>.extract({ [weak loop] (n: Int) -> CounterEvent in
            if n == 1, let loop {
                output.send(10)     // nested: queued, its drain owed by this thread
                let dispatched = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    loop.dispatch(.add(100))
                    seen.append(loop.model.count)
                    dispatched.signal()
                }
                _ = dispatched.wait(timeout: .now() + 5)
            }
            return .add(n)
        }, output.fuser)
        loop.connect(fuser)
        output.send(1)
        XCTAssertEqual(seen.values, [110], "the dispatch returned unhandled while no thread was draining the loop")
        XCTAssertEqual(loop.model.count, 111)
        loop.dispose()
    }
}
