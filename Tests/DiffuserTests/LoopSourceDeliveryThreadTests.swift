import Dispatch
import Foundation
import XCTest
@_spi(Bindings) @testable import Diffuser

/// Each thread's record of the loop source deliveries it is inside, and of the drains it
/// owes to loops whose deliveries were nested in an outer one (`LoopDeliveries`):
/// short-lived threads, an outer loop that goes away or closes inside its delivery, and
/// the ways a source's and a job's events take into the loop (`LoopPaths`).
final class LoopSourceDeliveryThreadTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// Whether `loop` is idle: no drain running, scheduled or owed, nothing queued.
    private func isIdle(_ loop: CounterLoop) -> Bool {
        let core = loop.core
        core.lock.lock()
        defer { core.lock.unlock() }
        return !core.draining && core.drainer == 0 && core.debtor == 0 && core.queue.isEmpty
    }

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Runs `body` on a new thread, made with `Thread` or with `pthread_create`, which
    /// ends once `body` returns.
    /// Sends `value` to `output` on a new thread; false if the send did not return within
    /// five seconds.
    private func sendsOnAThreadOfItsOwn(_ output: Output<Int>, _ value: Int) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            output.send(value)
            done.signal()
        }
        return done.wait(timeout: .now() + 5) == .success
    }

    private func spawn(pthread: Bool, _ body: @escaping @Sendable () -> Void) {
        guard pthread else {
            Thread.detachNewThread(body)
            return
        }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
        XCTAssertEqual(made, 0)
        pthread_detach(thread)
    }

    /// Many short-lived threads each send into loop A's source, whose transform sends
    /// twice into loop B's source (B's drains owed until A's delivery is over), then end.
    /// Every event is handled, and neither loop is left with a drain owed by a thread
    /// that is gone.
    func testShortLivedThreadsNestingDeliveriesOfTwoLoops() {
        let first = Output<Int>(), second = Output<Int>()
        let outer = CounterLoop(model: Counter(), update: counterUpdate)
        let inner = CounterLoop(model: Counter(), update: counterUpdate)
        outer.connect(Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            second.send(n)
            second.send(n)
            return .add(n)
        }, first.fuser))
        inner.connect(Fuser<CounterEvent>.extract({ (n: Int) in CounterEvent.add(n) }, second.fuser))
        let group = DispatchGroup()
        for index in 0..<300 {
            group.enter()
            spawn(pthread: index % 2 == 1) {
                first.send(1)
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(outer.model.count, 300)
        XCTAssertEqual(inner.model.count, 600)
        XCTAssertTrue(isIdle(outer))
        XCTAssertTrue(isIdle(inner))
        outer.dispose()
        inner.dispose()
    }

    /// Loop A's transform sends into loop B's source (B's drain owed until A's delivery
    /// is over), then lets go of A, which goes away inside its own delivery. B's drain is
    /// still paid when that delivery ends.
    func testAnOuterLoopGoneInsideItsDeliveryStillPaysTheInnerLoopsDrain() {
        let first = Output<Int>(), second = Output<Int>()
        nonisolated(unsafe) var outer: CounterLoop? = CounterLoop(model: Counter(), update: counterUpdate)
        weak let weakOuter = outer
        let inner = CounterLoop(model: Counter(), update: counterUpdate)
        inner.connect(Fuser<CounterEvent>.extract({ (n: Int) in CounterEvent.add(n) }, second.fuser))
        outer!.connect(Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            second.send(n)
            outer = nil
            return .add(n)
        }, first.fuser))
        XCTAssertTrue(sendsOnAThreadOfItsOwn(first, 5), "the send did not return")
        XCTAssertNil(weakOuter)
        XCTAssertEqual(inner.model.count, 5, "the inner loop's owed drain was not paid")
        XCTAssertTrue(isIdle(inner))
        inner.dispose()
    }

    /// Loop A's transform sends into loop B's source, then disposes B and stops A (in
    /// either order): B handles the events accepted before its dispose, and A, started
    /// again, handles its source's events.
    func testATransformFeedingAnotherLoopThenClosingBoth() {
        for innerFirst in [true, false] {
            let first = Output<Int>(), second = Output<Int>()
            let outer = CounterLoop(model: Counter(), update: counterUpdate)
            let inner = CounterLoop(model: Counter(), update: counterUpdate)
            inner.connect(Fuser<CounterEvent>.extract({ (n: Int) in CounterEvent.add(n) }, second.fuser))
            outer.connect(Fuser<CounterEvent>.extract({ [weak outer, weak inner] (n: Int) -> CounterEvent in
                guard n == 5 else { return .add(n) }
                second.send(n)
                second.send(n)
                if innerFirst {
                    inner?.dispose()
                    outer?.stop()
                } else {
                    outer?.stop()
                    inner?.dispose()
                }
                return .add(n)
            }, first.fuser))
            XCTAssertTrue(sendsOnAThreadOfItsOwn(first, 5), "the send did not return")
            XCTAssertEqual(inner.model.count, 10, "the events accepted before the dispose were not handled")
            XCTAssertTrue(inner.isDisposed)
            XCTAssertFalse(outer.isRunning)
            XCTAssertEqual(outer.model.count, 0)
            XCTAssertTrue(outer.start())
            first.send(1)
            XCTAssertEqual(outer.model.count, 1)
            XCTAssertTrue(isIdle(outer))
            outer.dispose()
        }
    }

    struct KeepFailure: Error {}

    /// `connect(_:keeping:)`: an error of `keep` goes back to the emitter and its event
    /// is dropped; the loop goes on, also when the event is nested in a delivery of
    /// another connection.
    func testAKeepThatThrowsDropsTheEventAndReportsToTheEmitter() {
        let kept = Output<Int>(), other = Output<Int>()
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        _ = loop.connect(Fuser<CounterEvent>.extract({ (n: Int) in CounterEvent.add(n) }, kept.fuser), keeping: { event in
            if event == .add(2) { throw KeepFailure() }
            return event
        })
        XCTAssertNoThrow(try kept.trySend(1))
        XCTAssertThrowsError(try kept.trySend(2)) { XCTAssertTrue($0 is KeepFailure) }
        XCTAssertNoThrow(try kept.trySend(3))
        XCTAssertEqual(loop.model.count, 4)
        let caught = Recorder<String>()
        loop.connect(Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            do { try kept.trySend(2) } catch { caught.append("\(error)") }
            kept.send(100)
            return .add(n)
        }, other.fuser))
        other.send(10)
        XCTAssertEqual(caught.values, ["KeepFailure()"])
        XCTAssertEqual(loop.model.count, 114)
        XCTAssertTrue(isIdle(loop))
        loop.dispose()
    }

    /// A job kept after its loop is gone: every send, from many threads, is refused.
    func testAJobOfALoopThatIsGoneRefusesSendsFromManyThreads() {
        nonisolated(unsafe) var kept: Job<CounterEvent>?
        weak var weakLoop: CounterLoop?
        do {
            let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [EffectHandler { _, job in kept = job }])
            weakLoop = loop
            loop.dispatch(.increment)
        }
        XCTAssertNil(weakLoop)
        let job = kept!
        let accepted = Recorder<Int>()
        onThreads(8) { _ in
            for _ in 0..<500 where job.send(.increment) { accepted.append(1) }
        }
        XCTAssertEqual(accepted.count, 0)
        XCTAssertTrue(job.isCancelled)
    }
}
