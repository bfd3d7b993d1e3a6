import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// An attached feedback's propagate, which runs on the thread that sends into the gear,
/// stopping, disposing or starting its loop while that loop's drain or another thread's
/// close waits for the propagate to return (it disconnects the gear). Neither thread
/// may wait for the other: the propagate is a callback of the run, and a close from it
/// does not wait for a drain that waits for it.
///
/// The races are staged with semaphores, so each test meets its race on every run. A
/// test that would hang fails on a timeout instead (`returnsInTime`, or a semaphore's),
/// and keeps the loop it leaves stuck (`stuck`) so that its deinit does not hang the
/// test process. (A file of its own: the files about gears and about closes that meet
/// are over 400 lines already; its name puts it in `scripts/tsan.sh`'s runs.)
final class LoopGearRaceTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>
    nonisolated(unsafe) static var stuck: [AnyObject] = []

    enum Call: CaseIterable { case stop, dispose, start }

    /// A registration, set once made, read from the loop's step.
    final class RegistrationSlot: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: _Disposable?
        var value: _Disposable? {
            get { lock.lock(); defer { lock.unlock() }; return stored }
            set { lock.lock(); stored = newValue; lock.unlock() }
        }
    }

    /// The test thread stops the loop while another thread's gear send is in the
    /// attached feedback's propagate; the stop cancels the run, which disposes the gear
    /// subscription and so waits for that propagate, which then stops, disposes or
    /// starts the loop itself. The propagate's call returns at once (a start: not
    /// running), leaving the work to the test thread's stop, which then returns (a
    /// dispose follows that stop). The stop is under way once it reports the queued
    /// event it drops (a manual executor's drain is not waited for).
    private func checkAPropagateCallingItsLoopWhileAnotherThreadStopsIt(_ call: Call) {
        let gear = Gear<Int>()
        let executor = ManualExecutor()
        let inPropagate = DispatchSemaphore(value: 0)
        let stopping = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let started = Mutex<Bool?>(nil)
        let box = Mutex<CounterLoop?>(nil)
        let traces = TraceLog()
        let loop = CounterLoop(
            model: Counter(),
            update: counterUpdate,
            feedbacks: [.attached(to: gear) { (_: Int) -> CounterEvent? in
                inPropagate.signal()
                _ = stopping.wait(timeout: .now() + 10)
                guard let loop = box.withLock({ $0 }) else { return nil }
                switch call {
                case .stop: loop.stop()
                case .dispose: loop.dispose()
                case .start: started.withLock { $0 = loop.start() }
                }
                return nil
            }],
            executor: executor,
            inspector: { trace in
                traces.inspector(trace)
                if case .dropped = trace { stopping.signal() }
            }
        )
        box.withLock { $0 = loop }
        executor.runAll() // the start: the feedback attaches to the gear
        XCTAssertTrue(loop.dispatch(.increment)) // queued: the stop drops it
        Thread {
            gear.send(1)
            sent.signal()
        }.start()
        XCTAssertEqual(inPropagate.wait(timeout: .now() + 10), .success, "the gear send never reached the propagate")
        guard returnsInTime("the stop waited for the propagate that \(call)s the loop, which waited for it",
                            holding: loop, { loop.stop() }) else {
            Self.stuck.append(loop)
            return
        }
        XCTAssertEqual(sent.wait(timeout: .now() + 10), .success, "the propagate's \(call) never returned")
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.isDisposed, call == .dispose, "a dispose from the propagate follows the stop")
        if call == .start { XCTAssertEqual(started.withLock { $0 }, false, "a start during the stop does not start") }
        let closed = call == .dispose ? ["stopped Counter(0)", "disposed Counter(0)"] : ["stopped Counter(0)"]
        XCTAssertEqual(traces.lines.values, ["started Counter(0) []", "dropped increment stopped"] + closed)
        loop.dispose()
    }

    func testAPropagateThatStopsItsLoopWhileAnotherThreadStopsItReturns() {
        checkAPropagateCallingItsLoopWhileAnotherThreadStopsIt(.stop)
    }

    func testAPropagateThatDisposesItsLoopWhileAnotherThreadStopsItReturns() {
        checkAPropagateCallingItsLoopWhileAnotherThreadStopsIt(.dispose)
    }

    func testAPropagateThatStartsItsLoopWhileAnotherThreadStopsItReturns() {
        checkAPropagateCallingItsLoopWhileAnotherThreadStopsIt(.start)
    }

    /// A step disposes the registration of an attached feedback (its removal is queued
    /// behind the step, in the same drain) and dispatches an event behind that removal,
    /// while another thread's gear send is in the feedback's propagate; the removal's
    /// turn disposes the gear subscription and so waits for that propagate, which stops
    /// or disposes the loop. The close does not wait for the drain, which waits for it:
    /// it drops the event not yet handled and returns, then the drain ends its turn,
    /// running no step of the closed run and reporting nothing after the close's trace.
    ///
    /// `closeFirst`: the step waits until the propagate's close has begun, which then
    /// waits for the drain until the removal's turn waits for the propagate (and wakes
    /// it). Otherwise the propagate closes once the removal's turn has begun (the
    /// feedback's stop is called), when that turn is about to wait for it.
    private func checkAPropagateClosingItsLoopWhileItsFeedbackIsRemoved(disposes: Bool, closeFirst: Bool) {
        let gear = Gear<Int>()
        let inPropagate = DispatchSemaphore(value: 0)
        let removing = DispatchSemaphore(value: 0)
        let removalTurn = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let registration = RegistrationSlot()
        let traces = TraceLog()
        let update = Update<Counter, CounterEvent, CounterEffect> { model, event in
            if case .add = event, let loop = box.withLock({ $0 }) {
                registration.value?.dispose() // the removal: queued behind this step
                loop.dispatch(.increment) // queued behind the removal
                removing.signal()
                if closeFirst { _ = eventually(10) { !loop.isRunning } } // the propagate's close has begun
            }
            return try counterUpdate.next(model, event)
        }
        let loop = CounterLoop(model: Counter(), update: update, inspector: traces.inspector)
        box.withLock { $0 = loop }
        let attached = Feedback<Counter, CounterEvent>.attached(to: gear) { (_: Int) -> CounterEvent? in
            inPropagate.signal()
            _ = (closeFirst ? removing : removalTurn).wait(timeout: .now() + 10)
            guard let loop = box.withLock({ $0 }) else { return nil }
            if disposes { loop.dispose() } else { loop.stop() }
            return nil
        }
        // The attached feedback, telling when the removal's turn stops it.
        let added = loop.add(Feedback { session in
            guard let reactor = attached.start(session) else { return nil }
            return FeedbackReactor(receive: reactor.receive, stop: {
                removalTurn.signal()
                reactor.stop()
            })
        })
        registration.value = added
        Thread {
            gear.send(1)
            sent.signal()
        }.start()
        XCTAssertEqual(inPropagate.wait(timeout: .now() + 10), .success, "the gear send never reached the propagate")
        Thread {
            loop.dispatch(.add(1))
            drained.signal()
        }.start()
        let close = disposes ? "dispose" : "stop"
        guard sent.wait(timeout: .now() + 10) == .success else {
            XCTFail("the propagate's \(close) waited for the drain, which waited for the propagate")
            Self.stuck.append(loop)
            return
        }
        XCTAssertEqual(drained.wait(timeout: .now() + 10), .success, "the drain never returned")
        XCTAssertFalse(loop.isRunning)
        XCTAssertEqual(loop.isDisposed, disposes)
        XCTAssertEqual(loop.model.count, 1, "no step after the close")
        let reason = disposes ? "disposed" : "stopped"
        XCTAssertEqual(traces.lines.values, [
            "started Counter(0) []",
            "stepped add(1) on Counter(0) -> Next(model: Counter(1), effects: [])",
            "dropped increment \(reason)",
            "\(reason) Counter(1)",
        ])
        loop.dispose()
    }

    func testAPropagateThatStopsItsLoopWhileItsFeedbackIsRemovedReturns() {
        checkAPropagateClosingItsLoopWhileItsFeedbackIsRemoved(disposes: false, closeFirst: false)
    }

    func testAPropagateThatDisposesItsLoopWhileItsFeedbackIsRemovedReturns() {
        checkAPropagateClosingItsLoopWhileItsFeedbackIsRemoved(disposes: true, closeFirst: false)
    }

    func testAPropagateThatStopsItsLoopBeforeItsFeedbackIsRemovedReturns() {
        checkAPropagateClosingItsLoopWhileItsFeedbackIsRemoved(disposes: false, closeFirst: true)
    }

    func testAPropagateThatDisposesItsLoopBeforeItsFeedbackIsRemovedReturns() {
        checkAPropagateClosingItsLoopWhileItsFeedbackIsRemoved(disposes: true, closeFirst: true)
    }

    /// A propagate stops its own loop (the run's end disposes the gear subscription from
    /// inside that propagate: no wait, and the pauser is cleared), then, while another
    /// thread's removal turn (the drainer) waits for the propagate to return, disposes
    /// the loop. With the pauser gone, the removal's dispose waits plainly, the drainer
    /// does not say whom it waits for, and the propagate's dispose waits for the drain.
    func testAPropagateThatStopsThenDisposesWhileItsFeedbackIsRemovedReturns() {
        let gear = Gear<Int>()
        let stopped = DispatchSemaphore(value: 0)
        let removalTurn = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let box = Mutex<CounterLoop?>(nil)
        let registration = RegistrationSlot()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        box.withLock { $0 = loop }
        let attached = Feedback<Counter, CounterEvent>.attached(to: gear) { (_: Int) -> CounterEvent? in
            guard let loop = box.withLock({ $0 }) else { return nil }
            loop.stop()
            stopped.signal()
            _ = removalTurn.wait(timeout: .now() + 10)
            Thread.sleep(forTimeInterval: 0.2) // the removal's dispose is waiting for this propagate
            loop.dispose()
            return nil
        }
        registration.value = loop.add(Feedback { session in
            guard let reactor = attached.start(session) else { return nil }
            return FeedbackReactor(receive: reactor.receive, stop: {
                removalTurn.signal()
                reactor.stop()
            })
        })
        Thread {
            gear.send(1)
            sent.signal()
        }.start()
        XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success)
        Thread { registration.value?.dispose() }.start()
        guard sent.wait(timeout: .now() + 5) == .success else {
            XCTFail("deadlock: the propagate's dispose waits for the drain, which waits for the propagate")
            Self.stuck.append(loop)
            return
        }
        XCTAssertTrue(loop.isDisposed)
    }
}
