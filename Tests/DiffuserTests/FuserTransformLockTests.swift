import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Review of "an event's transforms run inside its connection's delivery, under the
/// lock": what user code may do from inside a transform now that it runs there.
final class FuserTransformLockTests: XCTestCase {
    /// The promise: once `dispose()` has returned, no transform of the connection runs.
    /// A dispose from inside an inner transform returns at once (the delivery holds the
    /// lock), and the event then goes on climbing: the outer transform runs after that
    /// `dispose()` returned.
    func testNoOuterTransformRunsAfterAnInnerTransformDisposedTheConnection() {
        let source = ManualSource<Int>()
        let log = Recorder<String>()
        nonisolated(unsafe) var connection: Fuser<Int>.Disposable?
        let disposeReturned = Atomic<Bool>(false)
        let fuser = Fuser<Int>.extract({ (event: Int) -> Int in
            log.append(disposeReturned.load(ordering: .acquiring) ? "outer after dispose" : "outer")
            return event
        }, .extract({ (event: Int) -> Int in
            log.append("inner")
            connection?.dispose()
            disposeReturned.store(true, ordering: .releasing)
            return event
        }, .from(source)))
        connection = fuser.connect { log.append("effect \($0)") }
        source.emit(1)
        XCTAssertEqual(log.values, ["inner"], "a transform ran after dispose() returned")
        XCTAssertEqual(source.activeConnections, 0)
    }

    /// A transform of a loop's connection (caller's executor) that causes a nested event
    /// of the same connection, then stops the loop. The nested event was queued and its
    /// drain left to the end of the outer delivery (`DeferredDrain`), which this thread
    /// owes; the stop waits for that drain, which never comes: the thread waits for
    /// itself. Before the transforms ran under the lock, the nested event's delivery was
    /// the outermost one and had been drained when the transform called `stop()`.
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
        nonisolated(unsafe) let hub = output
        Thread.detachNewThread {
            hub.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success,
                       "output.send(1) deadlocked: stop() in the transform waits for the drain this thread owes")
        XCTAssertFalse(loop.isRunning)
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
        nonisolated(unsafe) let hub = output
        Thread.detachNewThread {
            hub.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success,
                       "output.send(1) deadlocked: dispose() in the transform waits for the drain this thread owes")
        XCTAssertTrue(loop.isDisposed)
    }

    /// `Loop.dispatch` with the caller's executor: "the event has been handled on return
    /// unless another thread is draining the loop". From a transform after a nested event
    /// of the same connection, no thread drains, yet the event is left queued (behind the
    /// drain this thread owes) and the model read right after is stale.
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
