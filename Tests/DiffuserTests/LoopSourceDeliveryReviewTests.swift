import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Review tests of a loop's source deliveries (`Loop.connect`: "With the caller's
/// executor, the steps of the events run once the delivering thread's outermost
/// delivery is over, outside the connections' locks"). The part that could deadlock
/// runs on detached threads and fails after a timeout instead of hanging the run.
final class LoopSourceDeliveryReviewTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// Two loops (the caller's executor): a transform of loop A's source causes an event
    /// of loop B's source, nested in A's delivery. B's drain is paid when B's delivery
    /// ends, still inside A's delivery and under A's connection's lock (the outermost
    /// delivery is tracked per loop only). A handler of B on another thread emitting
    /// into A's source then waits for that lock, and a stop in B's step, which waits for
    /// that handler, waits forever.
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
}
