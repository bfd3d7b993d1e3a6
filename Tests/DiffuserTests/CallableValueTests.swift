import XCTest
@testable import Diffuser

/// The `calling:` / `comparing:` combinators: effects, predicates, transforms and
/// equalities given as values of the callback protocols instead of closures.
final class CallableValueTests: XCTestCase {
    /// Equality modulo 10, counting its calls.
    struct LastDigit: EqualityFunction {
        let calls: Recorder<(Int, Int)>
        func equals(_ cached: Int, _ new: Int) -> Bool {
            calls.append((cached, new))
            return cached % 10 == new % 10
        }
    }

    struct Increased: ChangeFunction {
        func didChange(_ old: Int, _ new: Int) -> Bool { new > old }
    }

    struct Negate: TransformFunction {
        func select(_ value: Int) -> Int { -value }
    }

    /// `==` of integers, logging every comparison as "eq:old,new".
    struct LoggedEquality: EqualityFunction {
        let log: Recorder<String>
        func equals(_ cached: Int, _ new: Int) -> Bool {
            log.append("eq:\(cached),\(new)")
            return cached == new
        }
    }

    func testCallableEffectsPredicatesAndTransforms() {
        let log = Recorder<String>()
        let always = Diffuser<Int>.intoAlways(calling: LogEffect(name: "always", log: log))
        let when = Diffuser<Int>.intoWhen(calling: Increased(), effect: LogEffect(name: "up", log: log))
        let whenChild = Diffuser<Int>.intoWhen(calling: Increased(), always)
        let once = Diffuser<Int>.intoOnce(calling: LogEffect(name: "once", log: log))
        let negated = Diffuser<Int>.map(calling: Negate(), .intoAlways(calling: LogEffect(name: "neg", log: log)))
        let d = Diffuser<Int>.intoAlways([when, whenChild, once, negated])
        [1, 3, 2].forEach(d.run)
        XCTAssertEqual(log.values, [
            "up:1", "always:1", "once:1", "neg:-1",
            "up:3", "always:3", "neg:-3",
            "neg:-2",
        ])
    }

    func testIntoCallingUsesEqualityOfTheValueType() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.into(calling: LogEffect(name: "e", log: log))
        [1, 1, 2, 2, 1].forEach(d.run)
        XCTAssertEqual(log.values, ["e:1", "e:2", "e:1"])
    }

    func testIntoComparingUsesTheGivenEqualityAndKeepsEveryValue() {
        let log = Recorder<String>()
        let calls = Recorder<(Int, Int)>()
        let d = Diffuser<Int>.into(comparing: LastDigit(calls: calls), calling: LogEffect(name: "e", log: log))
        [1, 11, 2, 12, 22].forEach(d.run)
        XCTAssertEqual(log.values, ["e:1", "e:2"])
        // An equal value replaces the cache too: each value is compared with the previous run's.
        XCTAssertEqual(calls.values.map { "\($0.0)-\($0.1)" }, ["1-11", "11-2", "2-12", "12-22"])
    }

    func testIntoAllComparingGatesItsChildren() {
        let log = Recorder<String>()
        let calls = Recorder<(Int, Int)>()
        let d = Diffuser<Int>.intoAll(comparing: LastDigit(calls: calls), [
            .intoAlways(calling: LogEffect(name: "a", log: log)),
            .intoAlways(calling: LogEffect(name: "b", log: log)),
        ])
        [5, 15, 6].forEach(d.run)
        XCTAssertEqual(log.values, ["a:5", "b:5", "a:6", "b:6"])
        XCTAssertEqual(calls.values.map { "\($0.0)-\($0.1)" }, ["5-15", "15-6"])
    }

    func testAnEqualityIsAskedAboutEveryValueEvenTheSameOne() {
        let log = Recorder<String>()
        let gate = Diffuser<Int>.into(comparing: LoggedEquality(log: log), calling: LogEffect(name: "g", log: log))
        // The same gate, reached through two maps and run directly.
        let d = Diffuser<Int>.intoAlways([.map({ $0 / 10 }, gate), .map({ $0 < 0 ? -1 : $0 / 10 }, gate)])
        d.run(10)
        XCTAssertEqual(log.values, ["g:1", "eq:1,1"], "the second map's 1 is compared with the first's")
        log.clear()
        d.run(11)
        XCTAssertEqual(log.values, ["eq:1,1", "eq:1,1"])
        log.clear()
        d.run(-5)
        XCTAssertEqual(log.values, ["eq:1,0", "g:0", "eq:0,-1", "g:-1"])
        log.clear()
        gate.run(-1)
        d.run(5)
        XCTAssertEqual(log.values, ["eq:-1,-1", "eq:-1,0", "g:0", "eq:0,0"],
                       "the map compares with the cache the direct run left")

        log.clear()
        let plain = Diffuser<Int>.map(calling: Negate(), .into(comparing: LoggedEquality(log: log), calling: LogEffect(name: "p", log: log)))
        plain.run(10)
        plain.run(10)
        XCTAssertEqual(log.values, ["p:-10", "eq:-10,-10"], "the identical -10 is compared")
    }

    /// A transform whose parts must be disposed of after use: logs the part it makes and
    /// its disposal; fails on `failOn`.
    struct DisposingTransform: TransformFunction {
        let log: Recorder<String>
        var failOn: Int?
        func select(_ value: Int) throws -> Int {
            if value == failOn { throw TestFailure(tag: "select") }
            log.append("make:\(value)")
            return value * 10
        }
        func withSelected(_ value: Int, _ body: (Int) throws -> Void) throws {
            let part = try select(value)
            defer { log.append("dispose:\(part)") }
            try body(part)
        }
    }

    func testAMapCallsWithSelectedAndTheTransformDisposesOfItsPartEvenWhenTheChildFails() {
        let log = Recorder<String>()
        let child = Diffuser<Int>.into(throwing: { part in
            if part == 30 { throw TestFailure(tag: "child") }
            log.append("child:\(part)")
        })
        let d = Diffuser<Int>.map(calling: DisposingTransform(log: log, failOn: 9), child)
        XCTAssertNoThrow(try d.tryRun(1))
        XCTAssertNoThrow(try d.tryRun(1))
        XCTAssertThrowsError(try d.tryRun(3)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "child")) }
        XCTAssertThrowsError(try d.tryRun(9)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        XCTAssertNoThrow(try d.tryRun(2))
        XCTAssertEqual(log.values, [
            "make:1", "child:10", "dispose:10",
            "make:1", "dispose:10",
            "make:3", "dispose:30",
            "make:2", "child:20", "dispose:20",
        ])
    }

    func testBelowTheRootEqualityDecidesEvenForTheSameBits() {
        let rendered = Recorder<Double>()
        let d = Diffuser<[Double]>.map({ $0[0] }, .into { rendered.append($0) })
        d.run([.nan, 1])
        d.run([.nan, 2])
        d.run([.nan, 3])
        XCTAssertEqual(rendered.values.count, 3, "a NaN is not equal to itself by ==, so it is rendered every time")
        XCTAssertTrue(rendered.values.allSatisfy(\.isNaN))
    }

    func testGatesCompareWithThePreviousRunsValue() {
        let log = Recorder<String>()
        let runs = Recorder<[Int]>()
        struct ArrayEquality: EqualityFunction {
            let log: Recorder<String>
            func equals(_ cached: [Int], _ new: [Int]) -> Bool {
                log.append("cached:\(cached) new:\(new)")
                return cached == new
            }
        }
        let equality = ArrayEquality(log: log)
        let d = Diffuser<[Int]>.intoAlways([
            .into(comparing: equality, calling: ClosureEffect { runs.append($0) }),
            .intoAll(comparing: equality, [.intoAlways(calling: ClosureEffect { runs.append($0.map { -$0 }) })]),
        ])
        d.run([1])
        XCTAssertEqual(log.values, [], "nothing cached yet: no comparison")
        d.run([1])
        d.run([2, 3])
        XCTAssertEqual(log.values, ["cached:[1] new:[1]", "cached:[1] new:[1]",
                                    "cached:[1] new:[2, 3]", "cached:[1] new:[2, 3]"])
        XCTAssertEqual(runs.values, [[1], [-1], [2, 3], [-2, -3]])
    }

    /// Equality that logs what gates keep, stores `value * 100` to show that the kept
    /// value is what the cache holds, and fails to keep `failOn`.
    struct KeepingEquality: EqualityFunction {
        let log: Recorder<String>
        var failOn: Int?
        func equals(_ cached: Int, _ new: Int) -> Bool { cached == new * 100 }
        func keep(_ value: Int) throws -> Int {
            if value == failOn { throw TestFailure(tag: "keep") }
            log.append("keep:\(value)")
            return value * 100
        }
    }

    struct KeepingChange: ChangeFunction {
        let log: Recorder<String>
        func didChange(_ old: Int, _ new: Int) -> Bool { old != new * 100 }
        func keep(_ value: Int) -> Int {
            log.append("keep:\(value)")
            return value * 100
        }
    }

    func testGatesKeepEveryValueBeforeTheirChildRuns() {
        let log = Recorder<String>()
        let effect = LogEffect(name: "e", log: log)
        let equality = KeepingEquality(log: log, failOn: 4)
        let leaf = Diffuser<Int>.into(comparing: equality, calling: effect)
        let gate = Diffuser<Int>.intoAll(comparing: equality, [.intoAlways(calling: LogEffect(name: "all", log: log))])
        let d = Diffuser<Int>.intoAlways([leaf, gate])
        d.run(1)
        XCTAssertEqual(log.values, ["keep:1", "e:1", "keep:1", "all:1"], "kept before the child runs")
        log.clear()
        d.run(1)
        XCTAssertEqual(log.values, ["keep:1", "keep:1"], "an equal value (against the kept 100) is kept, not run")
        log.clear()
        XCTAssertThrowsError(try d.tryRun(4)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "keep")) }
        XCTAssertEqual(log.values, [], "a failed keep stops the pass before the child")
        d.run(1)
        XCTAssertEqual(log.values, ["keep:1", "keep:1"], "and leaves the cache as it was")
        log.clear()
        d.run(2)
        XCTAssertEqual(log.values, ["keep:2", "e:2", "keep:2", "all:2"])

        log.clear()
        let when = Diffuser<Int>.intoWhen(calling: KeepingChange(log: log), effect: effect)
        let whenChild = Diffuser<Int>.intoWhen(calling: KeepingChange(log: log), .intoAlways(calling: LogEffect(name: "w", log: log)))
        let both = Diffuser<Int>.intoAlways([when, whenChild])
        both.run(3)
        both.run(3)
        XCTAssertEqual(log.values, ["keep:3", "e:3", "keep:3", "w:3", "keep:3", "keep:3"],
                       "intoWhen keeps every value, since it caches every value")
    }
}
