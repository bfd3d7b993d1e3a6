import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// A loop (the caller's executor) fed by a fuser whose transform, running inside its
/// connection's delivery, causes a nested event of the same connection and then calls
/// the loop: the nested event's drain is owed by the delivering thread until the delivery
/// is over, and a stop, a dispose or a dispatch from the transform runs it first, since
/// no other thread will.
final class LoopConnectionTransformTests: XCTestCase {
    /// A transform that causes a nested event of its connection, then stops the loop:
    /// the stop does not wait for the drain this thread owes (it would wait for itself).
    func testATransformThatStopsItsLoopAfterANestedEventDoesNotDeadlock() {
        let output = Output<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        let fuser = Fuser<CounterEvent>.extract({ [weak loop] (n: Int) -> CounterEvent in
            if n == 1 {
                output.send(10)     // nested: queued, its drain owed by this thread
                loop?.stop()
            }
            return .add(n)
        }, output.fuser)
        loop.connect(fuser)
        let done = DispatchSemaphore(value: 0)
        let hub = output
        Thread.detachNewThread {
            hub.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success,
                       "output.send(1) deadlocked: stop() in the transform waits for the drain this thread owes")
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.model.count, 10, "the nested event, accepted before the stop, was handled")
    }

    /// The same with `dispose()`.
    func testATransformThatDisposesItsLoopAfterANestedEventDoesNotDeadlock() {
        let output = Output<Int>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        let fuser = Fuser<CounterEvent>.extract({ [weak loop] (n: Int) -> CounterEvent in
            if n == 1 {
                output.send(10)
                loop?.dispose()
            }
            return .add(n)
        }, output.fuser)
        loop.connect(fuser)
        let done = DispatchSemaphore(value: 0)
        let hub = output
        Thread.detachNewThread {
            hub.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success,
                       "output.send(1) deadlocked: dispose() in the transform waits for the drain this thread owes")
        XCTAssertTrue(loop.isDisposed)
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
}
