import Dispatch
import XCTest
@_spi(Bindings) @testable import Diffuser

/// The run lock: exclusion, sleeping waiters that are woken, and release on a throw.
final class LockTests: XCTestCase {
    func testExcludesUnderContention() {
        let lock = Lock()
        let racy = RacyCounter()
        let threads = 8, perThread = 3_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread {
                lock.lock()
                racy.increment()
                lock.unlock()
            }
        }
        XCTAssertEqual(racy.value, threads * perThread)
        XCTAssertEqual(lock.inline.state.load(ordering: .relaxed), 0, "the lock ends free")
    }

    func testWaitersThatSleepAreAllWokenAndServed() {
        // The holder keeps the lock long enough for every other thread to go to sleep on
        // it; each must be woken in turn, or the test hangs.
        let lock = Lock()
        let racy = RacyCounter()
        let holding = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        lock.lock()
        let waiters = 6
        for _ in 0..<waiters {
            done.enter()
            Thread.detachNewThread {
                holding.signal()
                lock.withLock { racy.increment() }
                done.leave()
            }
        }
        for _ in 0..<waiters { holding.wait() }
        // A waiter marks the lock contended before it sleeps; then give the others time
        // to reach their sleep too (not needed for the test to pass, only to exercise it).
        var polls = 0
        while lock.inline.state.load(ordering: .relaxed) != 2 && polls < 10_000 {
            usleep(1_000)
            polls += 1
        }
        XCTAssertEqual(lock.inline.state.load(ordering: .relaxed), 2, "waiters marked the lock contended")
        usleep(50_000)
        XCTAssertEqual(racy.value, 0, "nobody got in while the lock was held")
        lock.unlock()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "every waiter was woken")
        XCTAssertEqual(racy.value, waiters)
        XCTAssertEqual(lock.inline.state.load(ordering: .relaxed), 0)
    }

    func testWithLockReleasesWhenTheBodyThrows() {
        struct Boom: Error {}
        let lock = Lock()
        XCTAssertThrowsError(try lock.withLock { throw Boom() })
        XCTAssertEqual(lock.inline.state.load(ordering: .relaxed), 0)
        // And it can be taken again at once.
        XCTAssertEqual(lock.withLock { 42 }, 42)
    }
}
