import XCTest
@_spi(Bindings) @testable import Diffuser

/// The `calling:` / `comparing:` combinators: effects, predicates, transforms and
/// equalities given as values of the callback protocols instead of closures, and
/// `mapAll`, whose one selection call stands for a fan-out of maps.
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

    /// Part i of value v is v * 10 + i; logs each call; fails on `failOn` after
    /// `failAfter` parts.
    struct Digits: SelectionFunction {
        let log: Recorder<String>
        var failOn: Int?
        var failAfter = 0

        func selectAll(_ value: Int, into parts: inout SelectedParts<Int>) throws {
            log.append("select:\(value)")
            XCTAssertEqual(parts.count, 0)
            let n = value == failOn ? failAfter : parts.capacity
            for i in 0..<n { parts.append(value * 10 + i) }
            if value == failOn { throw TestFailure(tag: "select") }
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

    func testIntoComparingUsesTheGivenEqualityAndKeepsTheFirstOfEqualValues() {
        let log = Recorder<String>()
        let calls = Recorder<(Int, Int)>()
        let d = Diffuser<Int>.into(comparing: LastDigit(calls: calls), calling: LogEffect(name: "e", log: log))
        [1, 11, 2, 12, 22].forEach(d.run)
        XCTAssertEqual(log.values, ["e:1", "e:2"])
        // An equal value does not replace the cache: 12 and 22 are compared with 2.
        XCTAssertEqual(calls.values.map { "\($0.0)-\($0.1)" }, ["1-11", "1-2", "2-12", "2-22"])
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
    }

    func testMapAllSelectsOnceAndRunsEveryChildInOrder() {
        let log = Recorder<String>()
        let children: [Diffuser<Int>] = ["a", "b", "c"].map { .into(calling: LogEffect(name: $0, log: log)) }
        let d = Diffuser<Int>.intoAll([.mapAll(calling: Digits(log: log), children)])
        [1, 1, 2].forEach(d.run)
        XCTAssertEqual(log.values, [
            "select:1", "a:10", "b:11", "c:12",
            "select:2", "a:20", "b:21", "c:22",
        ])
    }

    func testMapAllEqualsAFanOutOfMaps() {
        let batched = Recorder<String>(), single = Recorder<String>()
        func leaves(_ log: Recorder<String>) -> [Diffuser<Int>] {
            (0..<4).map { i in .into(calling: LogEffect(name: "leaf\(i)", log: log)) }
        }
        let a = Diffuser<Int>.mapAll(calling: Digits(log: Recorder()), leaves(batched))
        let b = Diffuser<Int>.intoAlways(leaves(single).enumerated().map { i, leaf in
            Diffuser<Int>.map({ $0 * 10 + i }, leaf)
        })
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let value = Int.random(in: 0..<5, using: &generator)
            a.run(value)
            b.run(value)
        }
        XCTAssertEqual(batched.values, single.values)
        XCTAssertGreaterThan(batched.count, 20)
    }

    func testMapAllFailureRunsTheChildrenOfTheMadePartsThenThrows() {
        let log = Recorder<String>()
        let children: [Diffuser<Int>] = ["a", "b", "c"].map { .into(calling: LogEffect(name: $0, log: log)) }
        let d = Diffuser<Int>.intoAll([.mapAll(calling: Digits(log: log, failOn: 5, failAfter: 2), children)])
        XCTAssertNoThrow(try d.tryRun(1))
        log.clear()
        XCTAssertThrowsError(try d.tryRun(5)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        XCTAssertEqual(log.values, ["select:5", "a:50", "b:51"])
        log.clear()
        // The gate kept 1: running 1 does nothing; 2 runs everything.
        XCTAssertNoThrow(try d.tryRun(1))
        XCTAssertEqual(log.values, [])
        XCTAssertNoThrow(try d.tryRun(2))
        XCTAssertEqual(log.values, ["select:2", "a:20", "b:21", "c:22"])
    }

    func testMapAllStopsAtAFailingChild() {
        let log = Recorder<String>()
        let children: [Diffuser<Int>] = [
            .into(calling: LogEffect(name: "a", log: log)),
            .into(calling: LogEffect(name: "b", log: log, failOn: 31)),
            .into(calling: LogEffect(name: "c", log: log)),
        ]
        let d = Diffuser<Int>.mapAll(calling: Digits(log: log), children)
        XCTAssertThrowsError(try d.tryRun(3)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "b")) }
        XCTAssertEqual(log.values, ["select:3", "a:30"])
        log.clear()
        XCTAssertNoThrow(try d.tryRun(4))
        XCTAssertEqual(log.values, ["select:4", "a:40", "b:41", "c:42"])
    }

    func testMapAllReportsTheSelectionFailureWhenAChildOfAMadePartFailsToo() {
        let log = Recorder<String>()
        let children: [Diffuser<Int>] = [
            .into(calling: LogEffect(name: "a", log: log)),
            .into(calling: LogEffect(name: "b", log: log, failOn: 51)),
            .into(calling: LogEffect(name: "c", log: log)),
        ]
        let d = Diffuser<Int>.mapAll(calling: Digits(log: log, failOn: 5, failAfter: 3), children)
        XCTAssertThrowsError(try d.tryRun(5)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        XCTAssertEqual(log.values, ["select:5", "a:50"])
    }

    /// How many `Tracked` parts are alive.
    final class Census: @unchecked Sendable {
        var value = 0
    }

    /// A part that counts how many of its kind are alive.
    final class Tracked {
        let value: Int
        let alive: Census
        init(_ value: Int, _ alive: Census) {
            self.value = value
            self.alive = alive
            alive.value += 1
        }
        deinit { alive.value -= 1 }
    }

    /// Appends `extra` parts more than there are children; fails on `failOn` after
    /// making every part.
    struct Overfull: SelectionFunction {
        let alive: Census
        let extra: Int
        var failOn: Int?

        func selectAll(_ value: Int, into parts: inout SelectedParts<Tracked>) throws {
            for i in 0..<parts.capacity + extra { parts.append(Tracked(value * 10 + i, alive)) }
            XCTAssertTrue(parts.isFull)
            XCTAssertEqual(parts.count, parts.capacity)
            XCTAssertEqual(parts[0].value, value * 10)
            if value == failOn { throw TestFailure(tag: "select") }
        }
    }

    func testMapAllIgnoresPartsPastItsChildrenAndDestroysEveryPartAfterAPass() {
        let alive = Census(), log = Recorder<String>()
        let seen = { (name: String) in
            Diffuser<Tracked>.intoAlways { (part: Tracked) in
                XCTAssertGreaterThan(alive.value, 0)
                log.append("\(name):\(part.value)")
            }
        }
        let failing = Diffuser<Tracked>.intoAlways(throwing: { (part: Tracked) in
            if part.value == 71 { throw TestFailure(tag: "child") }
        })
        let d = Diffuser<Int>.mapAll(calling: Overfull(alive: alive, extra: 3, failOn: 6), [seen("a"), failing, seen("c")])
        d.run(1)
        XCTAssertEqual(log.values, ["a:10", "c:12"])
        XCTAssertEqual(alive.value, 0, "the parts of a pass outlived it")
        XCTAssertThrowsError(try d.tryRun(6)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        XCTAssertEqual(alive.value, 0, "the parts of a failed selection outlived the pass")
        XCTAssertThrowsError(try d.tryRun(7)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "child")) }
        XCTAssertEqual(alive.value, 0, "the parts of a pass that a child failed outlived it")
        d.run(2)
        XCTAssertEqual(log.values, ["a:10", "c:12", "a:60", "c:62", "a:70", "a:20", "c:22"])
        XCTAssertEqual(alive.value, 0)
    }

    func testASelectionCanBeCalledOutsideAFanOut() throws {
        let log = Recorder<String>()
        XCTAssertEqual(try SelectedParts<Int>.collect(capacity: 3) { try Digits(log: log).selectAll(4, into: &$0) },
                       [40, 41, 42])
        XCTAssertEqual(SelectedParts<Int>.collect(capacity: 0) { $0.append(1) }, [], "no room: the part is ignored")
        XCTAssertThrowsError(try SelectedParts<Int>.collect(capacity: 3) {
            try Digits(log: log, failOn: 5, failAfter: 2).selectAll(5, into: &$0)
        })
        let alive = Census()
        let kept = SelectedParts<Tracked>.collect(capacity: 2) { parts in
            for i in 0..<4 { parts.append(Tracked(i, alive)) }
        }
        XCTAssertEqual(kept.map(\.value), [0, 1])
        // Kept to the end of the check: an optimized build may free it after its last use.
        withExtendedLifetime(kept) {
            XCTAssertEqual(alive.value, 2, "the returned parts are alive, the ignored ones are not")
        }
        XCTAssertEqual(log.values, ["select:4", "select:5"])
    }

    func testPartsAppendedInBulkStopAtTheCapacityAndSurviveAFailure() {
        var asked: [Int] = []
        XCTAssertEqual(SelectedParts<Int>.collect(capacity: 5) { parts in
            parts.append(7)
            parts.append(count: 6) { i in asked.append(i); return 100 + i }
            parts.append(count: 2) { i in asked.append(-i); return 0 }
        }, [7, 100, 101, 102, 103], "after the first part, four more fit")
        XCTAssertEqual(asked, [0, 1, 2, 3], "no part is asked for past the capacity, nor once full")
        XCTAssertEqual(SelectedParts<Int>.collect(capacity: 3) { $0.append(count: -1) { _ in 1 } }, [])

        let alive = Census()
        var made: [Int] = []
        XCTAssertThrowsError(try SelectedParts<Tracked>.collect(capacity: 4) { parts in
            defer { made = (0..<parts.count).map { parts[$0].value } }
            try parts.append(count: 4) { i in
                if i == 2 { throw TestFailure(tag: "part") }
                return Tracked(i, alive)
            }
        })
        XCTAssertEqual(made, [0, 1], "the parts made before the failure are counted")
        XCTAssertEqual(alive.value, 0, "and destroyed with the room")
    }

    func testMapAllWithNoChildrenNeverSelects() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.mapAll(calling: Digits(log: log), [])
        d.run(1)
        XCTAssertEqual(log.values, [])
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

    /// Compares only through `equals(cachedAt:_:)`, logging the cached value it finds
    /// there; its by-value `equals` fails the test if a gate calls it.
    struct InPlaceEquality: EqualityFunction {
        let log: Recorder<String>
        func equals(_ cached: [Int], _ new: [Int]) -> Bool {
            XCTFail("gates compare through equals(cachedAt:_:)")
            return cached == new
        }
        func equals(cachedAt cached: UnsafePointer<[Int]>, _ new: [Int]) -> Bool {
            log.append("cached:\(cached.pointee) new:\(new)")
            return cached.pointee == new
        }
    }

    /// Equality of integers that promises identical values are equal everywhere, and
    /// logs its calls.
    struct ReflexiveEquality: EqualityFunction {
        let log: Recorder<String>
        func equals(_ cached: Int, _ new: Int) -> Bool {
            log.append("eq:\(cached),\(new)")
            return cached == new
        }
        static var identifyingBytes: Int { MemoryLayout<Int>.size }
        static var identicalValuesAreEqual: Bool { true }
    }

    func testAMapDoesNotRunAGateForThePartItHoldsWhenIdenticalValuesAreEqual() {
        let log = Recorder<String>()
        let gate = Diffuser<Int>.into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g", log: log))
        // The tens go through the map; the same gate is also run directly with -1.
        let d = Diffuser<Int>.intoAlways([.map({ $0 / 10 }, gate), .map({ $0 < 0 ? -1 : $0 / 10 }, gate)])
        d.run(10)
        XCTAssertEqual(log.values, ["g:1"], "the second map's 1 is the value the gate holds: not compared")
        log.clear()
        d.run(11)
        XCTAssertEqual(log.values, [], "1 again, twice: the gate neither compares nor runs")
        d.run(-5)
        XCTAssertEqual(log.values, ["eq:1,0", "g:0", "eq:0,-1", "g:-1"], "other values are compared")
        log.clear()
        d.run(5)
        XCTAssertEqual(log.values, ["eq:-1,0", "g:0"], "the map reads the cache the other path left")

        // Without the promise (the default, and `==`), the gate compares as before.
        let calls = Recorder<(Int, Int)>()
        let plain = Diffuser<Int>.map({ $0 / 10 }, .into(comparing: LastDigit(calls: calls), calling: LogEffect(name: "p", log: log)))
        plain.run(10)
        plain.run(11)
        XCTAssertEqual(calls.values.count, 1, "the identical 1 is compared")
    }

    /// Lends `nil` for even values and hands over a `Tracked` for odd ones; throws on 99.
    struct LendingTransform: TransformFunction {
        let alive: Census
        static var lendsParts: Bool { true }
        func select(_ value: Int) -> Tracked? { value % 2 == 0 ? nil : Tracked(value, alive) }
        func select(_ value: Int, into part: UnsafeMutablePointer<Tracked?>) throws -> Bool {
            if value == 99 { throw TestFailure(tag: "select") }
            if value % 2 == 0 {
                part.initialize(to: nil)
                return false
            }
            part.initialize(to: Tracked(value, alive))
            return true
        }
    }

    func testAMapOverALendingTransformDestroysOnlyThePartsItWasHandedOver() {
        let alive = Census(), log = Recorder<String>()
        let d = Diffuser<Int>.map(calling: LendingTransform(alive: alive), .intoAlways { (part: Tracked?) in
            XCTAssertEqual(alive.value, part == nil ? 0 : 1)
            log.append(part.map { "owned:\($0.value)" } ?? "lent")
        })
        d.run(1)
        XCTAssertEqual(alive.value, 0, "a part handed over outlived its pass")
        d.run(2)
        d.run(3)
        XCTAssertThrowsError(try d.tryRun(99)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        d.run(4)
        XCTAssertEqual(log.values, ["owned:1", "lent", "owned:3", "lent"])
        XCTAssertEqual(alive.value, 0)
    }

    /// Integer division by 10, lent: an `Int` holds nothing to release.
    struct LentTens: TransformFunction {
        static var lendsParts: Bool { true }
        func select(_ value: Int) -> Int { value / 10 }
        func select(_ value: Int, into part: UnsafeMutablePointer<Int>) -> Bool {
            part.initialize(to: value / 10)
            return false
        }
    }

    func testAMapOverALendingTransformChecksTheGateItFeedsInPlace() {
        let log = Recorder<String>()
        let gate = Diffuser<Int>.into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g", log: log))
        let d = Diffuser<Int>.map(calling: LentTens(), gate)
        d.run(10)
        d.run(11)
        d.run(25)
        XCTAssertEqual(log.values, ["g:1", "eq:1,2", "g:2"], "the 1 the gate holds is neither compared nor run")
    }

    /// One decimal digit of the value (`divisor` 1, 10, 100...), lent, logging each
    /// call; the tens digit's transform throws on negative values, and every digit's
    /// refuses `Int.min` before reading it (`check(_:)`, counted in `checks`).
    struct LentDigit: TransformFunction {
        let divisor: Int
        let log: Recorder<String>
        let checks: Recorder<Int>
        static var lendsParts: Bool { true }
        func select(_ value: Int) -> Int { value / divisor % 10 }
        func check(_ value: Int) throws {
            checks.append(divisor)
            if value == Int.min { throw TestFailure(tag: "check") }
        }
        func select(_ value: Int, into part: UnsafeMutablePointer<Int>) throws -> Bool {
            try check(value)
            return try select(checked: value, into: part)
        }
        func select(checked value: Int, into part: UnsafeMutablePointer<Int>) throws -> Bool {
            log.append("t\(divisor):\(value)")
            if value < 0, divisor == 10 { throw TestFailure(tag: "t10") }
            part.initialize(to: value / divisor % 10)
            return false
        }
    }

    /// The same transform as `Base`, as another type: a second form of map, as a binding
    /// has (a C transform whose outputs are lent or owned).
    struct OtherForm<Base: TransformFunction>: TransformFunction {
        let base: Base
        static var lendsParts: Bool { Base.lendsParts }
        func select(_ value: Base.Input) throws -> Base.Output { try base.select(value) }
        func check(_ value: Base.Input) throws { try base.check(value) }
        func select(_ value: Base.Input, into part: UnsafeMutablePointer<Base.Output>) throws -> Bool {
            try base.select(value, into: part)
        }
        func select(checked value: Base.Input, into part: UnsafeMutablePointer<Base.Output>) throws -> Bool {
            try base.select(checked: value, into: part)
        }
    }

    /// A way to make a fan-out of the given children, whose comparisons (if any) log to
    /// the given recorder.
    typealias FanOutMaker = ([Diffuser<Int>], Recorder<String>) -> Diffuser<Int>

    /// The ways of making a fan-out told the forms of its maps, as the C binding makes
    /// them, each with the plain fan-out of the same kind: `intoAlways` and `intoAll`,
    /// each told the digits' forms as the first pair or the second.
    static var fanOuts: [(name: String, plain: FanOutMaker, told: FanOutMaker)] {
        let digits = (LentDigit.self, OtherForm<LentDigit>.self), tens = (LentTens.self, OtherForm<LentTens>.self)
        return [
            ("intoAlways, first pair", { children, _ in .intoAlways(children) },
             { children, _ in .intoAlways(children, mapsCalling: digits, or: tens) }),
            ("intoAlways, second pair", { children, _ in .intoAlways(children) },
             { children, _ in .intoAlways(children, mapsCalling: tens, or: digits) }),
            ("intoAll, first pair", { .intoAll(comparing: ReflexiveEquality(log: $1), $0) },
             { .intoAll(comparing: ReflexiveEquality(log: $1), $0, mapsCalling: digits, or: tens) }),
            ("intoAll, second pair", { .intoAll(comparing: ReflexiveEquality(log: $1), $0) },
             { .intoAll(comparing: ReflexiveEquality(log: $1), $0, mapsCalling: tens, or: digits) }),
        ]
    }

    /// A fan-out told the forms of its maps (`mapsCalling:or:`, as the C binding makes
    /// its fan-outs) runs them in its own loop; what it does must not differ in any way
    /// from calling each map: the same transform calls, comparisons, effects, order,
    /// and the same stop at a failing transform, whether its maps are all of one form
    /// or of the two forms of a pair. Only the value's check is made once per pass
    /// instead of once per map.
    func testAFanOutRunningItsMapsInOneLoopDoesExactlyWhatTheMapsWould() {
        let checks = Recorder<Int>()
        func trace(_ make: FanOutMaker, plainChild: Bool, mixed: Bool = false) -> [String] {
            let log = Recorder<String>()
            checks.clear()
            let shared = Diffuser<Int>.into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g1", log: log))
            var children: [Diffuser<Int>] = [1, 10, 100].map { digit in
                let transform = LentDigit(divisor: digit, log: log, checks: checks)
                let gate = digit == 1 ? shared
                    : .into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g\(digit)", log: log))
                return mixed && digit == 10 ? .map(calling: OtherForm(base: transform), gate) : .map(calling: transform, gate)
            }
            if plainChild { children.insert(.intoAlways(calling: LogEffect(name: "plain", log: log)), at: 1) }
            // The ones' gate is also run directly, so the loop must read the cache it left.
            let d = Diffuser<Int>.intoAlways([make(children, log), .map({ $0 == 7 ? 9 : $0 % 10 }, shared)])
            for value in [123, 123, 124, 224, Int.min, -5, 224, 7, 7, 8] {
                do { try d.tryRun(value) } catch { log.append("error:\(error)") }
            }
            return log.values
        }
        for (name, plain, told) in Self.fanOuts {
            for plainChild in [false, true] {
                for mixed in [false, true] {
                    XCTAssertEqual(trace(told, plainChild: plainChild, mixed: mixed),
                                   trace(plain, plainChild: plainChild, mixed: mixed),
                                   "\(name), plain child: \(plainChild), mixed forms: \(mixed)")
                }
            }
        }
        let plainChecks = (trace(Self.fanOuts[1].plain, plainChild: false), checks.values).1
        let fused = trace(Self.fanOuts[1].told, plainChild: false)
        // Ten passes; Int.min refused at the first map, -5 failing at the tens.
        XCTAssertEqual(checks.values, Array(repeating: 1, count: 10), "the loop checks each value once, with the first map's transform")
        XCTAssertEqual(plainChecks.count, 3 * 8 + 1 + 2, "each map checks on its own")
        XCTAssertTrue(fused.contains("error:\(TestFailure(tag: "check"))"))
        XCTAssertFalse(fused.contains { $0.contains("\(Int.min)") }, "a refused value reaches no transform")
        // Spot checks, so that the comparison above is not of two equally wrong traces.
        XCTAssertEqual(Array(fused.prefix(6)), ["t1:123", "g1:3", "t10:123", "g10:2", "t100:123", "g100:1"])
        XCTAssertEqual(Array(fused[6...9]), ["t1:123", "t10:123", "t100:123", "t1:124"],
                       "the digits the gates hold: none compared or run")
        XCTAssertEqual(Array(fused.suffix(12).prefix(7)), ["t1:7", "eq:9,7", "g1:7", "t10:7", "t100:7", "eq:7,9", "g1:9"],
                       "the loop reads the cache that the direct path left in the shared gate")
        XCTAssertTrue(fused.contains("error:\(TestFailure(tag: "t10"))"))
        let afterError = fused.split(separator: "t1:-5").last.map(Array.init) ?? []
        XCTAssertEqual(afterError.prefix(3), ["eq:4,-5", "g1:-5", "t10:-5"], "the hundreds are not reached after the tens fail")
    }

    /// The loop of a fan-out's maps stops asking whether each gate holds a value once
    /// all do. Until then it must ask: a gate that holds nothing has whatever bytes an
    /// empty cache has (0 for an `Int?`), and a part of 0 must still reach it.
    func testAFanOutLoopRunsEveryGateThatHoldsNothingYetWhateverThePart() {
        let checks = Recorder<Int>()
        func trace(_ make: FanOutMaker, mixed: Bool) -> [String] {
            let log = Recorder<String>()
            let children: [Diffuser<Int>] = [1, 10, 100].map { digit in
                let transform = LentDigit(divisor: digit, log: log, checks: checks)
                let gate = Diffuser<Int>.into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g\(digit)", log: log))
                return mixed && digit == 100 ? .map(calling: OtherForm(base: transform), gate) : .map(calling: transform, gate)
            }
            let d = make(children, log)
            // -5: the ones' gate takes -5, the tens' transform fails, the hundreds' gate is
            // not reached. 5 then has parts 5, 0, 0: the last two go to empty gates.
            for value in [-5, 5, 5, 100, 0] {
                do { try d.tryRun(value) } catch { log.append("error:\(error)") }
            }
            return log.values
        }
        for (name, plain, told) in Self.fanOuts {
            for mixed in [false, true] {
                let fused = trace(told, mixed: mixed)
                XCTAssertEqual(fused, trace(plain, mixed: mixed), "\(name), mixed forms: \(mixed)")
                let afterFailure = fused.split(separator: "error:\(TestFailure(tag: "t10"))").last.map(Array.init) ?? []
                XCTAssertTrue(afterFailure.contains("g10:0") && afterFailure.contains("g100:0"),
                              "\(name), mixed forms: \(mixed): the gates that held nothing ran on 0: \(afterFailure)")
                XCTAssertEqual(fused.filter { $0.hasPrefix("g") }, ["g1:-5", "g1:5", "g10:0", "g100:0", "g1:0", "g100:1", "g100:0"],
                               "\(name), mixed forms: \(mixed)")
            }
        }
    }

    /// A digit transform of one form that holds an object, to see when its copies go.
    struct HoldingDigit: TransformFunction {
        let digit: LentDigit
        let held: Tracked
        static var lendsParts: Bool { true }
        func select(_ value: Int) -> Int { digit.select(value) }
        func check(_ value: Int) throws { try digit.check(value) }
        func select(_ value: Int, into part: UnsafeMutablePointer<Int>) throws -> Bool {
            try digit.select(value, into: part)
        }
        func select(checked value: Int, into part: UnsafeMutablePointer<Int>) throws -> Bool {
            try digit.select(checked: value, into: part)
        }
    }

    /// A fan-out whose maps are all of one form keeps their gates and a copy of their
    /// transforms, not the maps (lanes, see `ChildNodes`): a map the caller drops is
    /// freed while the fan-out lives; a map the caller keeps still feeds the gate the
    /// fan-out feeds; the copies of the transforms go with the fan-out.
    func testAFanOutOfMapsOfOneFormKeepsTheirGatesAndTransformsButNotTheMaps() {
        let log = Recorder<String>(), checks = Recorder<Int>(), alive = Census()
        weak var dropped: Node<Int>?
        var kept: Diffuser<Int>?
        var fanOut: Diffuser<Int>?
        do {
            let maps: [Diffuser<Int>] = [1, 10].map { digit in
                .map(calling: HoldingDigit(digit: LentDigit(divisor: digit, log: log, checks: checks), held: Tracked(digit, alive)),
                     .into(comparing: ReflexiveEquality(log: log), calling: LogEffect(name: "g\(digit)", log: log)))
            }
            fanOut = .intoAll(comparing: ReflexiveEquality(log: log), maps,
                              mapsCalling: (HoldingDigit.self, OtherForm<HoldingDigit>.self),
                              or: (LentTens.self, OtherForm<LentTens>.self))
            kept = maps[0]
            dropped = maps[1].node
        }
        XCTAssertNil(dropped, "the fan-out holds no map")
        XCTAssertEqual(alive.value, 2)
        fanOut?.run(12)
        kept?.run(12)
        kept?.run(13)
        fanOut?.run(13)
        XCTAssertEqual(log.values, ["t1:12", "g1:2", "t10:12", "g10:1",
                                    "t1:12",
                                    "t1:13", "eq:2,3", "g1:3",
                                    "eq:12,13", "t1:13", "t10:13"],
                       "the kept map and the fan-out feed the same gate")
        kept = nil
        XCTAssertEqual(alive.value, 2, "the fan-out's copies of the transforms hold what they hold")
        fanOut = nil
        XCTAssertEqual(alive.value, 0, "the copies went with the fan-out")
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

    func testGatesCompareTheCachedValueWhereItLies() {
        let log = Recorder<String>()
        let runs = Recorder<[Int]>()
        let equality = InPlaceEquality(log: log)
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
        // The default implementation forwards to the by-value equals.
        XCTAssertTrue(try withUnsafePointer(to: 5) { try KeepingEquality(log: log).equals(cachedAt: $0, 5) == false })
        XCTAssertTrue(try withUnsafePointer(to: 500) { try KeepingEquality(log: log).equals(cachedAt: $0, 5) })
    }

    func testGatesKeepOnlyWhatTheyCacheBeforeTheirChildRuns() {
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
        XCTAssertEqual(log.values, [], "an equal value (against the kept 100) is neither kept nor run")
        XCTAssertThrowsError(try d.tryRun(4)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "keep")) }
        XCTAssertEqual(log.values, [], "a failed keep stops the pass before the child")
        d.run(1)
        XCTAssertEqual(log.values, [], "and leaves the cache as it was")
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
