import Dispatch
import Synchronization
import XCTest
@testable import Diffuser

final class FuserConcurrencyTests: XCTestCase {
    /// Four threads connect and dispose in a loop while another emits as fast as it can.
    /// Each connection raises a flag when its `dispose()` returns; an event arriving
    /// after that is a violation.
    func testNoEventAfterDisposeReturned() {
        let source = ManualSource<Int>()
        nonisolated(unsafe) let fuser = Fuser<Int>.fromAll(.from(source), .extract({ $0 + 1 }, .from(source)))
        let violations = Atomic<Int>(0)
        let delivered = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()

        group.enter()
        DispatchQueue.global().async {
            var i = 0
            while !stop.load(ordering: .relaxed) { source.emit(i); i += 1 }
            group.leave()
        }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            // At least 2,000 rounds each, and on until some event was delivered (a loaded
            // machine may not schedule the emitter at first), within a bound.
            var round = 0
            while round < 2_000 || (delivered.load(ordering: .relaxed) == 0 && round < 2_000_000) {
                round += 1
                final class Flag: @unchecked Sendable { let done = Atomic<Bool>(false) }
                let flag = Flag()
                let connection = fuser.connect { _ in
                    delivered.add(1, ordering: .relaxed)
                    // Widen the window in which a late delivery could slip through.
                    for _ in 0..<20 { _ = UInt64.random(in: 0...1) }
                    if flag.done.load(ordering: .acquiring) { violations.add(1, ordering: .relaxed) }
                }
                connection.dispose()
                flag.done.store(true, ordering: .releasing)
            }
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        XCTAssertEqual(violations.load(ordering: .relaxed), 0)
        XCTAssertEqual(source.activeConnections, 0, "every source connection was disposed")
        XCTAssertGreaterThan(delivered.load(ordering: .relaxed), 0, "the test exercised delivery")
    }

    /// Events from several emitting threads reach one connection one at a time.
    func testOneConnectionDeliversOneEventAtATime() {
        let source = ManualSource<Int>()
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let count = Atomic<Int>(0)
        let c = Fuser<Int>.from(source).connect { _ in
            if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 { overlaps.add(1, ordering: .relaxed) }
            for _ in 0..<20 { _ = UInt64.random(in: 0...1) }
            count.add(1, ordering: .relaxed)
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<2_000 { source.emit(t * 10_000 + i) }
        }
        c.dispose()
        XCTAssertEqual(overlaps.load(ordering: .relaxed), 0)
        XCTAssertEqual(count.load(ordering: .relaxed), 8_000)
    }

    /// A transform is part of its connection's delivery: while one emitting thread is
    /// inside `extract`'s transform, another thread's event waits for it.
    func testTransformsOfOneConnectionRunOneAtATime() {
        let source = ManualSource<Int>()
        let firstInside = DispatchSemaphore(value: 0)
        let secondInside = DispatchSemaphore(value: 0)
        let overlapped = Atomic<Bool>(false)
        let received = Recorder<Int>()
        let connection = Fuser<Int>.extract({ (event: Int) -> Int in
            if event == 1 {
                firstInside.signal()
                // Long enough for the other thread's event to arrive; it must not get in.
                if secondInside.wait(timeout: .now() + 0.5) == .success {
                    overlapped.store(true, ordering: .relaxed)
                }
            } else {
                secondInside.signal()
            }
            return event
        }, .from(source)).connect { received.append($0) }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { source.emit(1) }
        firstInside.wait()
        DispatchQueue.global().async(group: group) { source.emit(2) }
        group.wait()
        connection.dispose()
        XCTAssertFalse(overlapped.load(ordering: .relaxed), "two transforms of one connection ran at once")
        XCTAssertEqual(received.values, [1, 2])
    }

    /// `dispose()` waits for an event inside a transform: once it has returned, no user
    /// code of the connection runs.
    func testDisposeWaitsForAnEventInsideATransform() {
        let source = ManualSource<Int>()
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let disposeReturned = Atomic<Bool>(false)
        let lateCalls = Atomic<Int>(0)
        let received = Recorder<Int>()
        let connection = Fuser<Int>.extract({ (event: Int) -> Int in
            inside.signal()
            _ = release.wait(timeout: .now() + 5)
            if disposeReturned.load(ordering: .acquiring) { lateCalls.add(1, ordering: .relaxed) }
            return event * 10
        }, .from(source)).connect { event in
            if disposeReturned.load(ordering: .acquiring) { lateCalls.add(1, ordering: .relaxed) }
            received.append(event)
        }
        nonisolated(unsafe) let disposable = connection
        let emitted = DispatchGroup()
        DispatchQueue.global().async(group: emitted) { source.emit(7) }
        inside.wait()
        let disposed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            disposable.dispose()
            disposeReturned.store(true, ordering: .releasing)
            disposed.signal()
        }
        XCTAssertEqual(disposed.wait(timeout: .now() + 0.3), .timedOut,
                       "dispose() returned while a transform of its connection was running")
        release.signal()
        XCTAssertEqual(disposed.wait(timeout: .now() + 5), .success)
        emitted.wait()
        XCTAssertEqual(lateCalls.load(ordering: .relaxed), 0)
        XCTAssertEqual(received.values, [70], "the event inside the transform was delivered before dispose() returned")
        source.emit(8)
        XCTAssertEqual(received.values, [70])
    }

    /// A unidirectional loop: fuser events produce models that a diffuser renders, from
    /// several threads, while the render effect dispatches further events.
    func testFuserFeedingDiffuserAcrossThreads() {
        let output = Output<Int>()
        let rendered = Recorder<Int>()
        let model = Atomic<Int>(0)
        let diffuser = Diffuser<Int>.intoAlways { rendered.append($0) }
        let connection = output.fuser.connect { delta in
            let next = model.add(delta, ordering: .relaxed).newValue
            diffuser.run(next)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { output.send(1) }
        }
        connection.dispose()
        XCTAssertEqual(rendered.count, 4_000)
        XCTAssertEqual(Set(rendered.values).count, 4_000)
    }
}
