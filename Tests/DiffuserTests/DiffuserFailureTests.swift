import XCTest
@testable import Diffuser

final class DiffuserFailureTests: XCTestCase {
    func testFailingEffectStopsTheRunAndReportsTheError() {
        let log = Recorder<String>()
        var failB = true
        let d = Diffuser<Int>.intoAll(
            .into { log.append("a\($0)") },
            .into(throwing: { v in
                if failB { throw TestFailure(tag: "b") }
                log.append("b\(v)")
            }),
            .into { log.append("c\($0)") }
        )
        XCTAssertThrowsError(try d.tryRun(1)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "b")) }
        XCTAssertEqual(log.values, ["a1"], "nothing after the failing effect runs")
        failB = false
        XCTAssertNoThrow(try d.tryRun(1))
        // a's gate was updated, b and c retry, and the parent gate did not skip the pass.
        XCTAssertEqual(log.values, ["a1", "b1", "c1"])
        XCTAssertNoThrow(try d.tryRun(1))
        XCTAssertEqual(log.values, ["a1", "b1", "c1"])
    }

    func testIntoWhenKeepsOldCacheWhenChildFails() {
        let seen = Recorder<(Int, Int)>()
        var fail = false
        let d = Diffuser<Int>.intoWhen(
            { seen.append(($0, $1)); return true },
            .intoAlways(throwing: { _ in if fail { throw TestFailure(tag: "x") } })
        )
        try? d.tryRun(1)
        fail = true
        XCTAssertThrowsError(try d.tryRun(2))
        fail = false
        try? d.tryRun(3)
        XCTAssertEqual(seen.values.map(\.0), [1, 1], "the failed value 2 was never cached")
        XCTAssertEqual(seen.values.map(\.1), [2, 3])
    }

    func testThrowingPredicateAndTransformAbortTheRun() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoWhen(throwing: { _, new in
            if new < 0 { throw TestFailure(tag: "pred") }
            return true
        }, .intoAlways { log.append($0) })
        try? d.tryRun(1)
        XCTAssertThrowsError(try d.tryRun(-1))
        XCTAssertEqual(log.values, [1])

        let m = Diffuser<Int>.map(throwing: { (v: Int) -> Int in
            if v == 0 { throw TestFailure(tag: "map") }
            return 10 / v
        }, .into { log.append($0) })
        XCTAssertThrowsError(try m.tryRun(0)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "map")) }
        XCTAssertNoThrow(try m.tryRun(5))
        XCTAssertEqual(log.values, [1, 2])
    }

    func testIntoOnceRetriesWhenFirstRunFails() {
        let log = Recorder<Int>()
        var fail = true
        let d = Diffuser<Int>.intoOnce(.intoAlways(throwing: { v in
            if fail { throw TestFailure(tag: "once") }
            log.append(v)
        }))
        XCTAssertThrowsError(try d.tryRun(1))
        fail = false
        try? d.tryRun(2)
        try? d.tryRun(3)
        XCTAssertEqual(log.values, [2])
    }

    func testRunDiscardsErrorsAndStaysUsable() {
        let log = Recorder<Int>()
        var fail = true
        let d = Diffuser<Int>.into(throwing: { v in
            if fail { throw TestFailure(tag: "x") }
            log.append(v)
        })
        d.run(1)
        fail = false
        d.run(1)
        XCTAssertEqual(log.values, [1], "the failed value is retried, not skipped as unchanged")
    }

    func testReentrantRunIsDeferredUntilThePassEnds() {
        let log = Recorder<String>()
        var diffuser: Diffuser<Int>!
        diffuser = Diffuser<Int>.intoAll(
            .into { v in
                log.append("a\(v)")
                if v < 3 { diffuser.run(v + 1) }     // an effect that dispatches a new model
                log.append("a\(v)-end")
            },
            .into { v in log.append("b\(v)") }
        )
        diffuser.run(1)
        XCTAssertEqual(log.values, ["a1", "a1-end", "b1", "a2", "a2-end", "b2", "a3", "a3-end", "b3"])
    }

    func testReentrantRunOfAChildIsDeferredToo() {
        let log = Recorder<String>()
        let child = Diffuser<Int>.into { log.append("child\($0)") }
        var parentEffectRan = false
        let parent = Diffuser<Int>.intoAll(
            .intoAlways { v in
                if !parentEffectRan {
                    parentEffectRan = true
                    child.run(v * 100)
                    log.append("after-nested-run")
                }
            },
            child
        )
        parent.run(1)
        XCTAssertEqual(log.values, ["after-nested-run", "child1", "child100"])
    }

    func testErrorOfADeferredRunReachesTheOuterCaller() {
        var d: Diffuser<Int>!
        d = Diffuser<Int>.intoAlways(throwing: { v in
            if v == 1 { d.run(2) }
            if v == 2 { throw TestFailure(tag: "deferred") }
        })
        XCTAssertThrowsError(try d.tryRun(1)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "deferred")) }
        XCTAssertNoThrow(try d.tryRun(3), "the diffuser is usable after the error")
    }

    func testRunningAnUnrelatedDiffuserFromAnEffectIsImmediate() {
        let log = Recorder<String>()
        let other = Diffuser<Int>.intoAlways { log.append("other\($0)") }
        let d = Diffuser<Int>.intoAlways { v in
            other.run(v)
            log.append("after\(v)")
        }
        d.run(1)
        XCTAssertEqual(log.values, ["other1", "after1"])
    }

    func testComposingInsideAnEffectDoesNotDeadlock() {
        let log = Recorder<Int>()
        let leaf = Diffuser<Int>.into { log.append($0) }
        let root = Diffuser<Int>.intoAlways(leaf)
        var built: Diffuser<Int>?
        let outer = Diffuser<Int>.intoAll(root, .intoAlways { v in
            // Joins the graph that is running right now.
            built = .intoAlways(leaf, .intoAlways { _ in })
            built?.run(v + 1)
        })
        outer.run(1)
        XCTAssertEqual(log.values, [1, 2])
    }

    func testTheCachedValueRunFromAnEffectIsQueuedAndRenderedAgain() {
        // During the pass of 2 the root still holds 1 (a gate stores after its child
        // ran). The run of 1 from the effect is queued and then renders 1 again.
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
}
