import Dispatch
import XCTest
@testable import Diffuser
#if canImport(Glibc)
import Glibc
#endif

/// A run of the very value a root gate holds returns before taking the lock (see
/// "Unchanged models" on `Diffuser`). These tests pin down when it may, and when it must
/// not because a pass is in progress or the cache is not what the graph rendered last.
final class SettledRunTests: XCTestCase {
    /// Equal when the numbers are; counts the comparisons. Two instances with the same
    /// number are equal but not identical (different boxes).
    struct Counted: Equatable {
        final class Box {
            let number: Int
            init(_ number: Int) { self.number = number }
        }

        let box: Box
        let comparisons: RacyCounter

        init(_ number: Int, _ comparisons: RacyCounter) {
            box = Box(number)
            self.comparisons = comparisons
        }

        static func == (lhs: Counted, rhs: Counted) -> Bool {
            lhs.comparisons.increment()
            return lhs.box.number == rhs.box.number
        }
    }

    func testTheIdenticalValueIsNeitherComparedNorRenderedAgain() {
        let comparisons = RacyCounter()
        let rendered = Recorder<Int>()
        let d = Diffuser<Counted>.into { rendered.append($0.box.number) }
        let one = Counted(1, comparisons)
        d.run(one)
        d.run(one)
        d.run(one)
        XCTAssertEqual(rendered.values, [1])
        XCTAssertEqual(comparisons.value, 0, "the same bits need no ==")

        d.run(Counted(1, comparisons))
        XCTAssertEqual(comparisons.value, 1, "an equal value that is not the same one is compared")
        XCTAssertEqual(rendered.values, [1])
        d.run(Counted(2, comparisons))
        XCTAssertEqual(rendered.values, [1, 2])
    }

    /// An equality that says nothing about identifying bytes, as a user's may.
    struct CountingEquality: EqualityFunction {
        let comparisons: RacyCounter
        func equals(_ cached: Int, _ new: Int) -> Bool {
            comparisons.increment()
            return cached == new
        }
    }

    func testAnEqualityWithoutIdentifyingBytesIsAlwaysAsked() {
        let comparisons = RacyCounter()
        let rendered = Recorder<String>()
        let d = Diffuser<Int>.into(comparing: CountingEquality(comparisons: comparisons),
                                   calling: LogEffect(name: "e", log: rendered))
        d.run(1)
        d.run(1)
        d.run(1)
        XCTAssertEqual(rendered.values, ["e:1"])
        XCTAssertEqual(comparisons.value, 2, "the same value is compared by an equality that did not opt in")
    }

    func testAnIntoAllRootSkipsItsWholeTreeForTheIdenticalValue() {
        let comparisons = RacyCounter()
        let rendered = Recorder<String>()
        let d = Diffuser<Counted>.intoAll(
            .map({ $0.box.number }, .into { rendered.append("n\($0)") }),
            .intoAlways { rendered.append("always\($0.box.number)") }
        )
        let one = Counted(1, comparisons)
        d.run(one)
        d.run(one)
        XCTAssertEqual(rendered.values, ["n1", "always1"])
        XCTAssertEqual(comparisons.value, 0)
    }

    func testTheCachedValueRunFromAnEffectIsStillQueued() {
        // During the pass of 2 the root still holds 1 (a gate stores after its child
        // ran). The run of 1 from the effect must be queued and then render 1 again, not
        // be taken for settled.
        let rendered = Recorder<Int>()
        var d: Diffuser<Int>!
        var fedBack = false
        d = .into { value in
            rendered.append(value)
            if value == 2 && !fedBack {
                fedBack = true
                d.run(1)
            }
        }
        d.run(1)
        d.run(2)
        XCTAssertEqual(rendered.values, [1, 2, 1])
    }

    func testAFailedPassLeavesTheSameValueToBeRetried() {
        let rendered = Recorder<Int>()
        var failures = 1
        let d = Diffuser<Int>.intoAll(.intoAlways(throwing: { value in
            if failures > 0 {
                failures -= 1
                throw TestFailure(tag: "first")
            }
            rendered.append(value)
        }))
        XCTAssertThrowsError(try d.tryRun(7))
        XCTAssertNoThrow(try d.tryRun(7))
        XCTAssertNoThrow(try d.tryRun(7))
        XCTAssertEqual(rendered.values, [7])
    }

    func testARunWaitsForAPassInProgressOnAnotherThread() {
        // Thread 1 is inside the pass of 2, the root still holding 1. A run of 1 on thread
        // 2 must wait for that pass and then render 1, not return as settled.
        let rendered = Recorder<Int>()
        let inside = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        let d = Diffuser<Int>.intoAll(
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
        usleep(50_000)  // time for that run to reach its check; the result does not depend on it
        resume.signal()
        group.wait()
        XCTAssertEqual(rendered.values, [1, 2, 1])
    }

    func testARunWaitsForAPassOfTheGraphItsOwnWasMergedInto() {
        // `d` ran alone, then became part of `p`, whose first run merged d's serializer
        // into e's. d still records its old serializer, which is free while p's pass holds
        // the merged one: the run of d's cached value must wait for that pass all the same.
        let rendered = Recorder<String>()
        let inside = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        let d = Diffuser<Int>.intoAll(
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
        let p = Diffuser<[Int]>.intoAll(.map({ $0[0] }, e), .map({ $0[1] }, d))
        p.run([0, 1])
        XCTAssertEqual(rendered.values, ["d1", "e0"])
        let retired = d.node.loadSerializer()?.retired.load(ordering: .relaxed)
        XCTAssertEqual(retired, true, "d's own serializer was merged into e's")

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
        let d = Diffuser<Counted>.into { rendered.append($0.box.number) }
        let one = Counted(1, comparisons), two = Counted(2, comparisons)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<2_000 { d.run(t == 0 || i % 3 == 0 ? one : two) }
        }
        d.run(two)
        d.run(one)
        let values = rendered.values
        XCTAssertEqual(values.last, 1)
        XCTAssertFalse(zip(values, values.dropFirst()).contains { $0 == $1 }, "a value rendered twice in a row")
    }
}
