import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// A stop or dispose from the inspector, on one thread, meeting a drain that runs inside
/// a callback of the run on another, or right after it: a handler's job, on the
/// handler's own executor, sends into the idle loop, which that send drains at once on
/// the handler's thread (the caller's executor), inside the handler; or an attached
/// feedback's propagate, on the thread that sends into the gear, turns the gear event
/// into an event of the idle loop, which that thread drains once the propagate has
/// returned. The drain's traces need the inspector; the close must not wait for the
/// handler the drain runs in, nor for the gear's delivery, while the drain waits for the
/// inspector.
///
/// The races are staged with semaphores, so each test meets its race on every run. A
/// test that would hang fails on a semaphore's timeout instead, and keeps what it
/// leaves stuck (`stuck`) so that no deinit hangs the test process. (A file of its own:
/// the file about closes that meet is over 400 lines already; its name puts it in
/// `scripts/tsan.sh`'s runs.)
final class LoopInspectorRaceTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>
    nonisolated(unsafe) static var stuck: [AnyObject] = []

    /// How a run's callback sends into its idle loop, which its thread then drains: a
    /// handler's job on its own executor, or an attached feedback's propagate.
    enum DrainingCallback { case handlerSend, propagate }

    /// The callback (`callback`) sends `.effects([.note("fail")])` into the idle loop,
    /// so its thread drains it. On that step, a handler on an executor of its own fails
    /// once the drain is in a handler without executor (run by the drainer); the
    /// inspector, hearing that failure, stops or disposes the loop, and the drainer's
    /// handler fails then, once the inspector has been entered, so the drain waits for
    /// the inspector to report it. The close waits neither for the handler the drain
    /// runs in nor for the gear's delivery, which the drain waits for: it returns, then
    /// the drain reports its failure (after the close's trace, as the drain's callback
    /// in progress does) and ends, running nothing else of the run.
    private func checkAnInspectorClosingWhileACallbackDrains(_ callback: DrainingCallback, disposes: Bool) {
        let gear = Gear<Int>()
        let senderExecutor = BackgroundExecutor()
        let failingExecutor = BackgroundExecutor()
        let dispatched = DispatchSemaphore(value: 0)
        let inDrainsHandler = DispatchSemaphore(value: 0)
        let inInspector = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let failures = Atomic<Int>(0)
        let box = Mutex<CounterLoop?>(nil)
        let traces = TraceLog()
        let fail = CounterEvent.effects([.note("fail")])
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            handlers: [
                EffectHandler(on: senderExecutor) { effect, job in
                    guard case .note("send") = effect else { return }
                    _ = dispatched.wait(timeout: .now() + 10)
                    job.send(fail) // the loop is idle: drains here
                    sent.signal()
                },
                EffectHandler(on: failingExecutor) { effect, _ in
                    guard case .note("fail") = effect else { return }
                    _ = inDrainsHandler.wait(timeout: .now() + 10)
                    throw UpdateError() // reported on this thread: the inspector closes
                },
                EffectHandler { effect, _ in
                    guard case .note("fail") = effect else { return }
                    inDrainsHandler.signal()
                    _ = inInspector.wait(timeout: .now() + 10)
                    throw UpdateError() // reported by the drainer
                },
            ],
            feedbacks: [.attached(to: gear) { (_: Int) -> CounterEvent? in fail }],
            inspector: { trace in
                traces.inspector(trace)
                guard case .effectFailed = trace, failures.add(1, ordering: .relaxed).newValue == 1,
                      let loop = box.withLock({ $0 }) else { return }
                inInspector.signal()
                if disposes { loop.dispose() } else { loop.stop() }
                closed.signal()
            }
        )
        box.withLock { $0 = loop }
        switch callback {
        case .handlerSend:
            XCTAssertTrue(loop.dispatch(.effects([.note("send")])))
            dispatched.signal() // the dispatch's drain is over: the handler's send drains
        case .propagate:
            Thread {
                gear.send(1) // the loop is idle: this thread drains it
                sent.signal()
            }.start()
        }
        let close = disposes ? "dispose" : "stop"
        guard sent.wait(timeout: .now() + 10) == .success, closed.wait(timeout: .now() + 10) == .success else {
            XCTFail("the inspector's \(close) waited for the \(callback) draining the loop, which waited for the inspector")
            Self.stuck.append(contentsOf: [loop, gear, senderExecutor, failingExecutor] as [AnyObject])
            return
        }
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.isDisposed, disposes)
        let reason = disposes ? "disposed" : "stopped"
        func stepped(_ note: String) -> String {
            TraceLog.describe(LoopTrace<Counter, CounterEvent, CounterEffect>.stepped(
                event: .effects([.note(note)]), model: Counter(), next: .dispatch([.note(note)])))
        }
        XCTAssertEqual(traces.lines.values, ["started Counter(0) []"]
            + (callback == .handlerSend ? [stepped("send")] : []) + [
            stepped("fail"),
            "effectFailed note(\"fail\")",
            "\(reason) Counter(0)",
            "effectFailed note(\"fail\")",
        ])
        loop.dispose()
    }

    func testAnInspectorStoppingTheLoopWhileAHandlersSendDrainsItReturns() {
        checkAnInspectorClosingWhileACallbackDrains(.handlerSend, disposes: false)
    }

    func testAnInspectorDisposingTheLoopWhileAHandlersSendDrainsItReturns() {
        checkAnInspectorClosingWhileACallbackDrains(.handlerSend, disposes: true)
    }

    func testAnInspectorStoppingTheLoopWhileAPropagateDrainsItReturns() {
        checkAnInspectorClosingWhileACallbackDrains(.propagate, disposes: false)
    }

    func testAnInspectorDisposingTheLoopWhileAPropagateDrainsItReturns() {
        checkAnInspectorClosingWhileACallbackDrains(.propagate, disposes: true)
    }
}
