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
        _ close: @escaping @Sendable (Loop<Counter, CounterEvent, CounterEffect>) -> Void
    ) -> Loop<Counter, CounterEvent, CounterEffect> {
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
}
