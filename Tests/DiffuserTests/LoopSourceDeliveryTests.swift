import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Review of the drain a source's delivering thread owes (`LoopCore.debtor`) and of the
/// transforms running under their connection's lock. Each test runs the part that may
/// deadlock on detached threads and fails after a timeout instead of hanging the run.
final class LoopDrainReviewTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    // MARK: A transform closes its loop while another thread closes it

    /// A transform of a loop's source stops the loop while another thread is stopping
    /// it. The other stop cancels the run, which disconnects the source: that dispose
    /// waits for the delivery in progress (the transform, under the connection's lock);
    /// the transform's stop waits for the other stop, as the transform's thread is no
    /// callback of the run. Neither returns.
    func testATransformThatStopsItsLoopWhileAnotherThreadStopsItDoesNotDeadlock() {
        transformClosesWhileAnotherThreadCloses(nested: false) { $0.stop() }
    }

    /// The same after a nested event of the connection: the transform's stop first pays
    /// the drain its thread owes (the other stop waits for it), then waits for the other
    /// stop, which waits for the transform's delivery.
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

    // MARK: Nested deliveries of two connections of one loop

    /// A loop (the caller's executor) with two sources; a transform of the first causes
    /// an event of the second, nested in the first's delivery. The second connection's
    /// delivery ends first, and pays the drain its thread owes there: the step runs
    /// under the first connection's lock, which the debt exists to avoid. A handler on
    /// another thread emitting into the first source then waits for that lock, and a
    /// stop in the step, which waits for that handler, waits forever.
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

    // MARK: A dispatch on another thread while the drain is owed

    /// A transform causes a nested event of its connection (its thread now owes the
    /// drain), then waits for a dispatch on another thread. That dispatch, into a loop
    /// nobody is draining, returns with its event unhandled (the owing thread is blocked
    /// in the transform), against `dispatch`'s promise ("handled on return unless another
    /// thread is draining the loop"); a thread that then waits for its event to be
    /// handled waits for the owing thread, which waits for it.
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
