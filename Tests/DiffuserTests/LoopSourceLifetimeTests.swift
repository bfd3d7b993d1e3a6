import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// A loop's source connection holds its loop until the connection is disposed: these
/// check that every way a run or a loop ends disposes it, so that a source that keeps
/// the sinks it was given (and never lets go of them) keeps nothing of a loop that its
/// owners let go of.
final class LoopSourceLifetimeTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// What the loop's update holds: released only once the loop is.
    final class Held {}

    /// A holder of a loop that a test lets go of on a thread of its choice.
    final class LoopBox: @unchecked Sendable {
        var loop: CounterLoop?
        init(_ loop: CounterLoop) { self.loop = loop }
    }

    /// A source that keeps every sink it is given, also after its disconnect.
    final class KeepingSource: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [(Int) throws -> Void] = []

        var fuser: Fuser<Int> {
            Fuser(tryConnector: { sink in
                self.lock.lock()
                self.kept.append(sink)
                self.lock.unlock()
                return AnonymousDisposable {}
            })
        }

        var sinks: [(Int) throws -> Void] {
            lock.lock()
            defer { lock.unlock() }
            return kept
        }

        /// Sends `value` through the sink of the last connection.
        func send(_ value: Int) {
            try? sinks.last?(value)
        }
    }

    /// A counter loop whose update holds `held`.
    private func loop(holding held: Held, executor: LoopExecutor = CallerExecutor()) -> CounterLoop {
        CounterLoop(model: Counter(), update: Update { model, event in
            _ = held
            return try counterUpdate(model, event)
        }, executor: executor)
    }

    /// A loop whose last owner lets go of it from a transform of its own source's
    /// delivery, on the delivering thread, is released once that delivery ends; the
    /// source's kept sink then delivers nothing.
    func testALoopLetGoInsideItsSourcesDeliveryIsReleased() {
        let source = KeepingSource()
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            let box = LoopBox(loop(holding: held))
            box.loop!.connect(.extract({ (n: Int) -> CounterEvent in
                if n == 2 { box.loop = nil }
                return .add(n)
            }, source.fuser))
            source.send(1)
            XCTAssertEqual(box.loop?.model.count, 1)
            source.send(2)
            XCTAssertNil(box.loop)
        }
        XCTAssertNil(weakHeld, "the disposed connection still holds the loop")
        source.send(3)
    }

    /// A loop whose last owner lets go of it on another thread while its source
    /// delivers an event is released once both are over: the letting go waits for the
    /// delivery, which still ends (its drain included) without deadlock.
    func testALoopLetGoOnAnotherThreadMidDeliveryIsReleased() {
        let source = KeepingSource()
        weak var weakHeld: Held?
        let inside = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let delivered = DispatchSemaphore(value: 0), letGo = DispatchSemaphore(value: 0)
        do {
            let held = Held()
            weakHeld = held
            let box = LoopBox(loop(holding: held))
            box.loop!.connect(.extract({ (n: Int) -> CounterEvent in
                inside.signal()
                proceed.wait()
                return .add(n)
            }, source.fuser))
            Thread.detachNewThread {
                source.send(1)
                delivered.signal()
            }
            XCTAssertEqual(inside.wait(timeout: .now() + 5), .success)
            Thread.detachNewThread {
                box.loop = nil
                letGo.signal()
            }
            usleep(20_000)
            proceed.signal()
            XCTAssertEqual(delivered.wait(timeout: .now() + 5), .success, "the delivery did not end")
            XCTAssertEqual(letGo.wait(timeout: .now() + 5), .success, "letting go of the loop did not return")
        }
        XCTAssertTrue(eventually { weakHeld == nil }, "the disposed connection still holds the loop")
        source.send(2)
    }

    /// A fuser whose second source refuses to connect, after the first kept its sink:
    /// the connection the loop made is disposed at once, so the kept sink holds nothing
    /// of the loop once its owners let go.
    func testASinkKeptBeforeAnotherSourceRefusedHoldsNothingOfTheLoop() {
        struct Refusal: Error {}
        let source = KeepingSource()
        let refusing = Fuser<Int>(tryConnector: { _ in throw Refusal() })
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            let loop = loop(holding: held)
            loop.connect(.extract({ CounterEvent.add($0) }, .fromAll(source.fuser, refusing)))
            XCTAssertEqual(source.sinks.count, 1, "the first source connected")
            source.send(1)
            XCTAssertEqual(loop.model.count, 0, "nothing is connected after the refusal")
        }
        XCTAssertNil(weakHeld, "the refused connection still holds the loop")
    }

    /// Every run connects the source again; the sinks of the runs before, kept by the
    /// source, deliver nothing, and none of them holds the loop once its owners let go.
    func testSinksKeptFromEveryRunHoldNothingOfTheLoop() {
        let source = KeepingSource()
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            let loop = loop(holding: held)
            loop.connect(.extract({ CounterEvent.add($0) }, source.fuser))
            for _ in 0..<3 {
                loop.stop()
                XCTAssertTrue(loop.start())
            }
            XCTAssertEqual(source.sinks.count, 4, "one connection a run")
            for sink in source.sinks { try? sink(1) }
            XCTAssertEqual(loop.model.count, 1, "only the current run's sink delivers")
        }
        XCTAssertNil(weakHeld, "a sink of some run still holds the loop")
        for sink in source.sinks { try? sink(1) }
    }

    /// A loop let go of while its drain, on a background executor, is connecting its
    /// source (which emits as it connects) is released: the connection made then is
    /// disposed by the end of the run.
    func testALoopLetGoWhileItsSourceConnectsIsReleased() {
        weak var weakHeld: Held?
        let executor = BackgroundExecutor()
        for _ in 0..<50 {
            let connecting = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var kept: [(CounterEvent) throws -> Void] = []
            do {
                let held = Held()
                weakHeld = held
                let loop = loop(holding: held, executor: executor)
                loop.connect(Fuser(tryConnector: { sink in
                    kept.append(sink)
                    connecting.signal()
                    usleep(1_000)
                    try? sink(.increment)
                    return AnonymousDisposable {}
                }))
                XCTAssertEqual(connecting.wait(timeout: .now() + 5), .success)
            }
            XCTAssertTrue(eventually { weakHeld == nil }, "the connection made while letting go holds the loop")
            XCTAssertEqual(kept.count, 1)
        }
    }

    /// Loop A's transform sends into loop B's source (B's drain owed to the end of A's
    /// delivery), then lets go of both: B's event is handled before it goes, and neither
    /// loop is held by the sinks their sources keep.
    func testTwoLoopsLetGoInsideANestedDeliveryAreBothReleased() {
        let first = KeepingSource(), second = KeepingSource()
        weak var weakOuter: Held?, weakInner: Held?
        let handled = Recorder<Int>()
        do {
            let outerHeld = Held(), innerHeld = Held()
            weakOuter = outerHeld
            weakInner = innerHeld
            let outer = LoopBox(loop(holding: outerHeld))
            let inner = LoopBox(loop(holding: innerHeld))
            inner.loop!.observe { handled.append($0.count) }
            inner.loop!.connect(.extract({ CounterEvent.add($0) }, second.fuser))
            outer.loop!.connect(.extract({ (n: Int) -> CounterEvent in
                second.send(n)
                inner.loop = nil
                outer.loop = nil
                return .add(n)
            }, first.fuser))
            first.send(5)
            XCTAssertNil(outer.loop)
            XCTAssertNil(inner.loop)
        }
        XCTAssertEqual(handled.values, [0, 5], "the inner loop's event accepted before its dispose was handled")
        XCTAssertNil(weakOuter, "the outer loop is still held")
        XCTAssertNil(weakInner, "the inner loop is still held")
        first.send(1)
        second.send(1)
    }

    /// Short-lived threads each deliver into a loop's source whose transform sends into
    /// another loop's source, then end: their records go with them, and once the loops'
    /// owners let go, nothing holds either loop.
    func testThreadsEndingAfterNestedDeliveriesLeaveBothLoopsFree() {
        let first = Output<Int>(), second = Output<Int>()
        weak var weakOuter: Held?, weakInner: Held?
        do {
            let outerHeld = Held(), innerHeld = Held()
            weakOuter = outerHeld
            weakInner = innerHeld
            let outer = loop(holding: outerHeld), inner = loop(holding: innerHeld)
            inner.connect(.extract({ CounterEvent.add($0) }, second.fuser))
            outer.connect(.extract({ (n: Int) -> CounterEvent in
                second.send(n)
                return .add(n)
            }, first.fuser))
            let group = DispatchGroup()
            for _ in 0..<50 {
                group.enter()
                Thread.detachNewThread {
                    first.send(1)
                    group.leave()
                }
            }
            XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
            XCTAssertEqual(outer.model.count, 50)
            XCTAssertEqual(inner.model.count, 50)
        }
        XCTAssertNil(weakOuter)
        XCTAssertNil(weakInner)
        first.send(1)
    }

    /// Threads keep sending through every sink the source kept while another restarts
    /// the loop again and again, then lets go of it: nothing deadlocks, and no sink of
    /// any run holds the loop afterwards.
    func testRestartsRacingSendsOnKeptSinksLeaveNothingHeld() {
        let source = KeepingSource()
        weak var weakHeld: Held?
        let done = Flag()
        let senders = DispatchGroup()
        do {
            let held = Held()
            weakHeld = held
            let box = LoopBox(loop(holding: held))
            box.loop!.connect(.extract({ CounterEvent.add($0) }, source.fuser))
            for _ in 0..<2 {
                senders.enter()
                Thread.detachNewThread {
                    while !done.isRaised {
                        for sink in source.sinks { try? sink(1) }
                    }
                    senders.leave()
                }
            }
            for _ in 0..<200 {
                box.loop!.stop()
                box.loop!.start()
            }
            box.loop = nil
        }
        done.raise()
        XCTAssertEqual(senders.wait(timeout: .now() + 10), .success, "a sender did not end")
        XCTAssertEqual(source.sinks.count, 201)
        XCTAssertNil(weakHeld, "a sink of some run still holds the loop")
    }
}
