import Dispatch
import XCTest
@testable import Diffuser
#if canImport(Glibc)
import Glibc
#endif

/// These tests fail (lost updates, broken cache chains) when runs are not serialized.
///
/// A `Diffuser` is not `Sendable` (its effects are closures the compiler cannot check),
/// so each diffuser shared with other threads here is declared `nonisolated(unsafe)`: the
/// test asserts that what its effects touch is safe from any thread.
final class DiffuserConcurrencyTests: XCTestCase {
    func testRunsFromManyThreadsAreSerializedAndNoneIsLost() {
        let counter = RacyCounter()
        nonisolated(unsafe) let d = Diffuser<Int>.intoAlways { _ in counter.increment() }
        let threads = 8, perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread { d.run(t * perThread + i) }
        }
        XCTAssertEqual(counter.value, threads * perThread)
    }

    func testGateCacheChainsUnbrokenUnderContention() {
        // Every (old, new) pair the predicate sees must continue the previous pair: the
        // old value is exactly the last new value. Unserialized caches break the chain.
        let pairs = Recorder<(Int, Int)>()
        nonisolated(unsafe) let d = Diffuser<Int>.intoWhen({ old, new in
            pairs.append((old, new))
            return true
        }, .intoAlways { _ in })
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<2_000 { d.run(t * 100_000 + i) }
        }
        let seen = pairs.values
        XCTAssertEqual(seen.count, 4 * 2_000 - 1)
        for index in 1..<seen.count {
            XCTAssertEqual(seen[index].0, seen[index - 1].1)
            if seen[index].0 != seen[index - 1].1 { break }
        }
    }

    func testSharedChildOfTwoTreesRunOnTwoThreads() {
        let counter = RacyCounter()
        let shared = Diffuser<Int>.intoAlways { _ in counter.increment() }
        nonisolated(unsafe) let first = Diffuser<Int>.intoAll(shared)
        nonisolated(unsafe) let second = Diffuser<Int>.map({ $0 + 1 }, shared)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<2_000 {
                if t % 2 == 0 { first.run(t * 10_000 + i) } else { second.run(t * 10_000 + i) }
            }
        }
        XCTAssertEqual(counter.value, 4 * 2_000)
    }

    func testTreesJoinedWhileRunningStaySerialized() {
        // One racy counter per leaf: a leaf is only ever run under its graph's lock.
        let counters = (0..<8).map { _ in RacyCounter() }
        nonisolated(unsafe) let leaves = counters.map { counter in Diffuser<Int>.intoAlways { _ in counter.increment() } }
        let group = DispatchGroup()
        let runners = 4
        for r in 0..<runners {
            group.enter()
            DispatchQueue.global().async {
                for i in 0..<1_000 { leaves[(r + i) % leaves.count].run(i) }
                group.leave()
            }
        }
        // Join the leaves into bigger graphs while they are being run.
        nonisolated(unsafe) var joined: [Diffuser<Int>] = []
        for i in 0..<leaves.count - 1 {
            joined.append(.intoAlways(leaves[i], leaves[i + 1]))
        }
        group.wait()
        XCTAssertEqual(counters.map(\.value).reduce(0, +), runners * 1_000)
        joined.forEach { $0.run(0) }
        XCTAssertEqual(counters.map(\.value).reduce(0, +), runners * 1_000 + 2 * joined.count)
    }

    func testGraphsMergedWhileTheirPartsRunStaySerialized() {
        // Leaves run on their own first (each records its own serializer), then one
        // thread keeps running trees that join them, merging those serializers, while
        // the other threads keep running the leaves: a leaf must follow the merge and
        // take the joined graph's lock, or its racy counter loses increments.
        for _ in 0..<5 {
            let counters = (0..<6).map { _ in RacyCounter() }
            nonisolated(unsafe) let leaves = counters.map { counter in Diffuser<Int>.intoAlways { _ in counter.increment() } }
            leaves.forEach { $0.run(0) }
            nonisolated(unsafe) let joined = (0..<leaves.count - 1).map { Diffuser<Int>.intoAlways(leaves[$0], leaves[$0 + 1]) }
            let perThread = 600
            DispatchQueue.concurrentPerform(iterations: 4) { t in
                for i in 0..<perThread {
                    if t == 0 {
                        joined[i % joined.count].run(i)
                    } else {
                        leaves[(t + i) % leaves.count].run(i)
                    }
                }
            }
            XCTAssertEqual(counters.map(\.value).reduce(0, +), leaves.count + 3 * perThread + 2 * perThread)
        }
    }

    func testReentrantRunsFromManyThreadsNeverDeadlock() {
        let counter = RacyCounter()
        // Set once, before any thread reads it.
        nonisolated(unsafe) var d: Diffuser<Int>!
        d = Diffuser<Int>.intoAlways { v in
            counter.increment()
            if v % 2 == 0 { d.run(v + 1) }       // each even run queues one more pass
        }
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<500 { d.run((t * 1_000 + i) * 2) }
        }
        XCTAssertEqual(counter.value, 4 * 500 * 2)
    }

    /// Calls one way (A's effect runs B) do not deadlock with the first run of a tree over
    /// both, which merges their graphs while A's pass waits for B: the merge never holds
    /// one graph's lock while it waits for the other's. Before, it took them in address
    /// order, and when B came first it held B waiting for A, held by the pass waiting for B.
    func testMergingTwoGraphsWhileOneEffectRunsTheOtherDoesNotDeadlock() {
        for attempt in 0..<40 {
            let inside = DispatchSemaphore(value: 0)
            let b = Diffuser<Int>.into { _ in }
            nonisolated(unsafe) let unsafeB = b
            let a = Diffuser<Int>.into { v in
                if v > 0 { inside.signal(); usleep(5_000) }   // the merge starts meanwhile
                unsafeB.run(v)
            }
            a.run(0)
            b.run(-1)                                          // two graphs, each run alone
            nonisolated(unsafe) let (unsafeA, both) = (a, Diffuser<Int>(a, b))
            let done = DispatchGroup()
            done.enter()
            Thread { unsafeA.run(1); done.leave() }.start()
            done.enter()
            Thread { inside.wait(); both.run(2); done.leave() }.start()
            if done.wait(timeout: .now() + 10) == .timedOut {
                return XCTFail("deadlocked at attempt \(attempt)")
            }
        }
    }

    func testARunOfTheCachedValueWaitsForAPassInProgressOnAnotherThread() {
        // Thread 1 is inside the pass of 2, the root still holding 1. A run of 1 on thread
        // 2 must wait for that pass and then render 1.
        let rendered = Recorder<Int>()
        let inside = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let d = Diffuser<Int>.intoAll(
            .intoAlways { rendered.append($0) },
            .intoAlways { value in
                if value == 2 {
                    inside.signal()
                    resume.wait()
                }
            }
        )
        d.run(1)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { d.run(2) }
        inside.wait()
        DispatchQueue.global().async(group: group) { d.run(1) }
        usleep(50_000)  // time for that run to reach the lock; the result does not depend on it
        resume.signal()
        group.wait()
        XCTAssertEqual(rendered.values, [1, 2, 1])
    }

    func testARunWaitsForAPassOfTheGraphItsOwnWasMergedInto() {
        // `d` ran alone, then became part of `p`, whose first run merged d's serializer
        // into e's. d still records its old serializer, which is free while p's pass holds
        // the merged one: the run of d must wait for that pass all the same.
        let rendered = Recorder<String>()
        let inside = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let d = Diffuser<Int>.intoAll(
            .intoAlways { rendered.append("d\($0)") },
            .intoAlways { value in
                if value == 2 {
                    inside.signal()
                    resume.wait()
                }
            }
        )
        let e = Diffuser<Int>.into { rendered.append("e\($0)") }
        d.run(1)
        e.run(0)
        nonisolated(unsafe) let p = Diffuser<[Int]>.intoAll(.map({ $0[0] }, e), .map({ $0[1] }, d))
        p.run([0, 1])
        XCTAssertEqual(rendered.values, ["d1", "e0"])
        XCTAssertNotNil(d.node.loadSerializer()?.forward, "d's own serializer was merged into e's")

        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { p.run([0, 2]) }
        inside.wait()
        DispatchQueue.global().async(group: group) { d.run(1) }
        usleep(50_000)
        resume.signal()
        group.wait()
        XCTAssertEqual(rendered.values, ["d1", "e0", "d2", "d1"])
    }

    func testIdenticalAndChangingRunsFromManyThreadsRenderEveryChange() {
        // Runs of two values from several threads, one of them always the same: every
        // rendered value differs from the one before (a gate renders changes only), and
        // after a last run of each, the last rendered value is the last run.
        let comparisons = RacyCounter()
        let rendered = Recorder<Int>()
        nonisolated(unsafe) let d = Diffuser<DiffuserTests.Counted>.into { rendered.append($0.box.number) }
        let one = DiffuserTests.Counted(1, comparisons), two = DiffuserTests.Counted(2, comparisons)
        let perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<perThread { d.run(t == 0 || i % 3 == 0 ? one : two) }
        }
        d.run(two)
        d.run(one)
        let values = rendered.values
        XCTAssertEqual(values.last, 1)
        XCTAssertFalse(zip(values, values.dropFirst()).contains { $0 == $1 }, "a value rendered twice in a row")
        XCTAssertEqual(comparisons.value, 4 * perThread + 1, "every run but the first compared, under the lock")
    }
}

/// Two immutable values whose comparisons count into a thread-safe counter: shared by
/// the runs of several threads.
extension DiffuserTests.Counted: @unchecked Sendable {}
