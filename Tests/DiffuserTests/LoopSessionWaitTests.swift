import Dispatch
import Foundation
import Synchronization
import XCTest
@_spi(Bindings) @testable import Diffuser

/// A close waits for the session's callbacks in progress on other threads
/// (`LoopSession.awaitCallbacks`), and the end of each of them wakes it: a callback that
/// ends while the close starts to wait is never missed.
final class LoopSessionWaitTests: XCTestCase {
    /// Another thread's callback ends at about the moment a close starts waiting for it,
    /// round after round: the wait always returns, and only after the callback ended.
    func testAWaitIsWokenByACallbackEndingAsItStarts() {
        let rounds = 3_000
        for round in 0..<rounds {
            let session = LoopSession<Int> { _, _, _ in true }
            let entered = DispatchSemaphore(value: 0)
            let ended = Flag()
            let callback = Thread {
                XCTAssertTrue(session.enter())
                entered.signal()
                // A few spins at most, so that the end falls on either side of the
                // close's first look at the callbacks in progress.
                for _ in 0..<(round % 7) { _ = ended.isRaised }
                ended.raise()
                session.leave()
            }
            callback.start()
            entered.wait()
            let returned = DispatchSemaphore(value: 0)
            Thread {
                session.awaitCallbacks()
                returned.signal()
            }.start()
            guard returned.wait(timeout: .now() + 10) == .success else {
                XCTFail("round \(round): the wait missed the end of the callback")
                return
            }
            XCTAssertTrue(ended.isRaised, "round \(round): the wait returned before the callback ended")
        }
    }

    /// A close waits for every thread's callbacks, however many begin and end while it
    /// waits, and a callback that the session refuses (it has ended) is not waited for.
    func testACancelWaitsForEveryCallbackInProgress() {
        let session = LoopSession<Int> { _, _, _ in true }
        let threads = 4
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let left = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            Thread {
                XCTAssertTrue(session.enter())
                inside.signal()
                release.wait()
                left.signal()
                session.leave()
            }.start()
        }
        for _ in 0..<threads { inside.wait() }
        let cancelled = DispatchSemaphore(value: 0)
        Thread {
            session.cancel()
            cancelled.signal()
        }.start()
        for _ in 0..<threads {
            XCTAssertEqual(cancelled.wait(timeout: .now() + 0.05), .timedOut, "the cancel returned with callbacks in progress")
            release.signal()
        }
        XCTAssertEqual(cancelled.wait(timeout: .now() + 10), .success, "the cancel missed the end of a callback")
        for _ in 0..<threads { XCTAssertEqual(left.wait(timeout: .now()), .success) }
        XCTAssertFalse(session.enter(), "no callback starts once the session has ended")
    }
    /// A close asleep waiting for another thread's callback is woken when that callback
    /// pauses to wait for the closing thread (`pausingCallback`, as a dispose waiting for
    /// an observer call of the closing thread does): the close no longer waits for it and
    /// returns while the callback is still paused. Fails if the start of a pause stops
    /// waking the waiters: the two then wait for each other until the pause times out.
    func testAPauseForTheClosingThreadWakesTheClose() {
        for round in 0..<10 {
            let session = LoopSession<Int> { _, _, _ in true }
            let closer = Atomic<UInt>(0)
            let entered = DispatchSemaphore(value: 0)
            let closing = DispatchSemaphore(value: 0)
            let closed = DispatchSemaphore(value: 0)
            let pauseEnded = DispatchSemaphore(value: 0)
            let missed = Flag()
            Thread {
                XCTAssertTrue(session.enter())
                entered.signal()
                closing.wait()
                // Long enough for the close to be asleep when the pause begins.
                Thread.sleep(forTimeInterval: 0.02)
                session.pausingCallback(waitingFor: { closer.load(ordering: .acquiring) }) {
                    if closed.wait(timeout: .now() + 2) == .timedOut { missed.raise() }
                }
                session.leave()
                pauseEnded.signal()
            }.start()
            entered.wait()
            Thread {
                closer.store(currentThreadID(), ordering: .releasing)
                closing.signal()
                session.awaitCallbacks()
                closed.signal()
            }.start()
            XCTAssertEqual(pauseEnded.wait(timeout: .now() + 10), .success, "round \(round): the callback never ended")
            XCTAssertFalse(missed.isRaised, "round \(round): the close slept through the pause for its thread")
        }
    }
}
