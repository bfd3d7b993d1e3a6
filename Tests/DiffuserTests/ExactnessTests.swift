import XCTest
import Diffuser

/// The exactness rules of DESIGN.md, through the public API only:
/// - `==` decides every comparison, also of a value with the same bits (NaN);
/// - a gate compares each value with the previous run's value and keeps the new value
///   after every successful run, equal or not (so a non-transitive equality drifts);
/// - user calls happen in tree order, the first failure in that order wins, and nothing
///   after it runs.
///
/// One file because these rules are one section of DESIGN.md, a MARK per rule, and they
/// meet: the first two are checked at the same places (the root, below a map, below
/// intoAll), and the third pins the order in which those comparisons and calls happen.
final class ExactnessTests: XCTestCase {
    // MARK: NaN: the same bits are not equal

    struct Reading: Equatable {
        var x: Double
    }

    struct Model: Equatable {
        var reading: Reading
        var other: Int
    }

    static let nanModel = Model(reading: Reading(x: .nan), other: 0)

    func testNaNRunTwiceRunsTwiceAtTheRoot() {
        let log = Recorder<Double>()
        let d = Diffuser<Double>.into { log.append($0) }
        d.run(.nan)
        d.run(.nan)
        XCTAssertEqual(log.count, 2)

        let thrown = Recorder<Double>()
        let t = Diffuser<Double>.into(throwing: { thrown.append($0) })
        let value = Double.nan
        t.run(value)
        t.run(value)
        XCTAssertEqual(thrown.count, 2)
    }

    func testAStructHoldingNaNRunTwiceRunsTwiceAtTheRoot() {
        let log = Recorder<Reading>()
        let d = Diffuser<Reading>.into { log.append($0) }
        let reading = Reading(x: .nan)
        d.run(reading)
        d.run(reading)
        XCTAssertEqual(log.count, 2)

        let models = Recorder<Model>()
        let m = Diffuser<Model>.into { models.append($0) }
        m.run(Self.nanModel)
        m.run(Self.nanModel)
        XCTAssertEqual(models.count, 2)
    }

    func testNaNRunTwiceRunsTwiceBelowAMap() {
        let byClosure = Recorder<Reading>(), byKeyPath = Recorder<Reading>()
        let numberByClosure = Recorder<Double>(), numberByKeyPath = Recorder<Double>()
        let d = Diffuser<Model>.intoAlways([
            .map({ $0.reading }, .into { byClosure.append($0) }),
            .map(\.reading, .into { byKeyPath.append($0) }),
            .map({ $0.reading.x }, .into { numberByClosure.append($0) }),
            .map(\.reading.x, .into { numberByKeyPath.append($0) }),
        ])
        d.run(Self.nanModel)
        d.run(Self.nanModel)
        XCTAssertEqual([byClosure.count, byKeyPath.count, numberByClosure.count, numberByKeyPath.count], [2, 2, 2, 2])

        // The same maps below a root gate, and as the root.
        let log = Recorder<String>()
        let gated = Diffuser<Model>(
            .map({ $0.reading }, .into { _ in log.append("closure") }),
            .map(\.reading, .into { _ in log.append("keyPath") }),
            .map(\.reading.x, .into { _ in log.append("number") })
        )
        let roots: [Diffuser<Model>] = [
            .map({ $0.reading }, .into { _ in log.append("closureRoot") }),
            .map(\.reading, .into { _ in log.append("keyPathRoot") }),
            .map(calling: ReadingOf(), .into { _ in log.append("callingRoot") }),
        ]
        for _ in 0..<2 {
            gated.run(Self.nanModel)
            roots.forEach { $0.run(Self.nanModel) }
        }
        let once = ["closure", "keyPath", "number", "closureRoot", "keyPathRoot", "callingRoot"]
        XCTAssertEqual(log.values, once + once)
    }

    struct ReadingOf: TransformFunction {
        func select(_ value: Model) -> Reading { value.reading }
    }

    func testNaNRunTwiceRunsTwiceBelowIntoAll() {
        let log = Recorder<String>()
        let d = Diffuser<Model>.intoAll(
            .intoAlways { _ in log.append("root") },
            .map(\.reading, .intoAll(.intoAlways { _ in log.append("reading") })),
            .map(\.other, .intoAll(.intoAlways { _ in log.append("other") }))
        )
        d.run(Self.nanModel)
        d.run(Self.nanModel)
        XCTAssertEqual(log.values, ["root", "reading", "other", "root", "reading"])

        let numbers = Recorder<Double>()
        let n = Diffuser<Double>.intoAll(.intoAlways { numbers.append($0) })
        n.run(.nan)
        n.run(.nan)
        XCTAssertEqual(numbers.count, 2)
    }

    func testNaNRunTwiceRunsTwiceThroughEveryEqualityGateForm() {
        let log = Recorder<String>()
        struct Effect: EffectFunction {
            let log: Recorder<String>
            let name: String
            func run(_ value: Double) { log.append(name) }
        }
        let roots: [Diffuser<Double>] = [
            .into(calling: Effect(log: log, name: "calling")),
            .intoWhen({ $0 != $1 }, { _ in log.append("when") }),
            Diffuser(.intoAlways { _ in log.append("init") }),
            Diffuser([.intoAlways { _ in log.append("initArray") }]),
            .intoAll([.intoAlways { _ in log.append("intoAllArray") }]),
        ]
        roots.forEach { $0.run(.nan) }
        roots.forEach { $0.run(.nan) }
        let once = ["calling", "when", "init", "initArray", "intoAllArray"]
        XCTAssertEqual(log.values, once + once)
    }

    // MARK: Non-transitive equality: gates compare with the previous run's value

    /// Integers equal when they differ by at most 1: 0 ~ 1 ~ 2 ~ 3 but 0 !~ 2.
    struct WithinOne: EqualityFunction {
        let calls: Recorder<String>
        func equals(_ old: Int, _ new: Int) -> Bool {
            calls.append("\(old)~\(new)")
            return abs(old - new) <= 1
        }
    }

    /// A value whose `==` is "within 1": not transitive.
    struct Near: Equatable {
        var v: Double
        static func == (a: Near, b: Near) -> Bool { abs(a.v - b.v) <= 1 }
    }

    struct NearModel: Equatable {
        var near: Near
    }

    static let drift: [Double] = [0, 0.6, 1.2, 1.8]

    func testANonTransitiveEqualityFunctionDriftsWithThePreviousRun() {
        let log = Recorder<String>(), calls = Recorder<String>()
        let into = Diffuser<Int>.into(comparing: WithinOne(calls: calls), calling: LogEffect(name: "into", log: log))
        let all = Diffuser<Int>.intoAll(comparing: WithinOne(calls: calls), [.intoAlways(calling: LogEffect(name: "all", log: log))])
        let mapped = Diffuser<Int>.map(calling: Twice(),
                                       .into(comparing: WithinOne(calls: calls), calling: LogEffect(name: "map", log: log)))
        for d in [into, all] {
            [0, 1, 2, 3].forEach(d.run)
        }
        [0, 0, 1, 1].forEach { mapped.run($0) }  // 0, 0, 2, 2: 2 !~ 0
        XCTAssertEqual(log.values, ["into:0", "all:0", "map:0", "map:2"])
        XCTAssertEqual(calls.values, ["0~1", "1~2", "2~3", "0~1", "1~2", "2~3", "0~0", "0~2", "2~2"])
        log.clear()
        into.run(5)
        all.run(4)
        XCTAssertEqual(log.values, ["into:5"], "3 is the previous value: 5 differs, 4 does not")
    }

    struct Twice: TransformFunction {
        func select(_ value: Int) -> Int { 2 * value }
    }

    func testANonTransitiveEqualityRunsOnceAtTheRoot() {
        let log = Recorder<Double>()
        let d = Diffuser<Near>.into { log.append($0.v) }
        Self.drift.map(Near.init).forEach(d.run)
        XCTAssertEqual(log.values, [0])
        d.run(Near(v: 3))
        XCTAssertEqual(log.values, [0, 3], "3 is compared with 1.8, the previous run")
    }

    func testANonTransitiveEqualityRunsOnceBelowAMap() {
        let byClosure = Recorder<Double>(), byKeyPath = Recorder<Double>(), byMethod = Recorder<Double>()
        let d = Diffuser<NearModel>.intoAlways([
            .map({ $0.near }, .into { byClosure.append($0.v) }),
            .map(\.near, .into { byKeyPath.append($0.v) }),
            .map({ $0.near }, .into(throwing: { byMethod.append($0.v) })),
        ])
        Self.drift.map { NearModel(near: Near(v: $0)) }.forEach(d.run)
        XCTAssertEqual([byClosure.values, byKeyPath.values, byMethod.values], [[0], [0], [0]])
    }

    func testANonTransitiveEqualityRunsOnceBelowIntoAll() {
        let log = Recorder<String>()
        let d = Diffuser<NearModel>.intoAlways([
            .map(\.near, .intoAll(.intoAlways { log.append("keyPath:\($0.v)") })),
            .map({ $0.near }, .intoAll(.intoAlways { log.append("closure:\($0.v)") })),
            .intoAll(.intoAlways { log.append("root:\($0.near.v)") }),
        ])
        Self.drift.map { NearModel(near: Near(v: $0)) }.forEach(d.run)
        XCTAssertEqual(log.values, ["keyPath:0.0", "closure:0.0", "root:0.0"])
    }

    func testANonTransitiveEqualityRunsOnceThroughIntoWhenNotEqual() {
        let log = Recorder<Double>(), child = Recorder<Double>()
        let effect = Diffuser<Near>.intoWhen({ $0 != $1 }, { log.append($0.v) })
        let withChild = Diffuser<Near>.intoWhen({ $0 != $1 }, .intoAlways { child.append($0.v) })
        for value in Self.drift.map(Near.init) {
            effect.run(value)
            withChild.run(value)
        }
        XCTAssertEqual(log.values, [0])
        XCTAssertEqual(child.values, [0])
    }

    // MARK: User calls in tree order

    /// A failure a test injects, by name.
    struct Injected: Error, Equatable {
        let name: String
    }

    func testAFanOutOfClosureMapsCallsEachTransformRightBeforeItsChild() {
        for kind in ["intoAlways", "intoAll"] {
            let log = Recorder<String>()
            let children: [Diffuser<Int>] = (1...3).map { i in
                .map({ (x: Int) -> Int in log.append("t\(i):\(x)"); return x * i }, .intoAlways(
                    .into { log.append("e\(i)a:\($0)") },
                    .intoAlways { log.append("e\(i)b:\($0)") }
                ))
            }
            let d: Diffuser<Int> = kind == "intoAll" ? .intoAll(children) : .intoAlways(children)
            d.run(1)
            d.run(1)
            XCTAssertEqual(log.values, [
                "t1:1", "e1a:1", "e1b:1", "t2:1", "e2a:2", "e2b:2", "t3:1", "e3a:3", "e3b:3",
            ] + (kind == "intoAll" ? [] : ["t1:1", "e1b:1", "t2:1", "e2b:2", "t3:1", "e3b:3"]), kind)
        }
    }

    /// A model whose subscript logs every read: key paths through it are user calls.
    struct Logged: Equatable {
        let log: Recorder<String>
        var values: [Int]
        subscript(logged index: Int) -> Int {
            log.append("t\(index):\(values)")
            return values[index]
        }
        static func == (a: Logged, b: Logged) -> Bool { a.values == b.values }
    }

    func testAFanOutOfKeyPathMapsCallsEachSubscriptRightBeforeItsChild() {
        let log = Recorder<String>()
        func children() -> [Diffuser<Logged>] {
            (0..<3).map { i in
                .map(\.[logged: i], .intoAll(.intoAlways { log.append("e\(i):\($0)") }))
            }
        }
        for (kind, d) in [("intoAlways", Diffuser<Logged>.intoAlways(children())), ("intoAll", .intoAll(children()))] {
            log.clear()
            d.run(Logged(log: log, values: [7, 8, 9]))
            XCTAssertEqual(log.values, ["t0:[7, 8, 9]", "e0:7", "t1:[7, 8, 9]", "e1:8", "t2:[7, 8, 9]", "e2:9"], kind)
        }
    }

    /// A transform given as a value, logging its calls, failing on `failOn`.
    struct LoggedTransform: TransformFunction {
        let name: String
        let log: Recorder<String>
        var failOn: Int?
        func select(_ value: Int) throws -> Int {
            if value == failOn { throw Injected(name: name) }
            log.append("\(name):\(value)")
            return value
        }
    }

    /// `==` of integers given as a value, logging its calls, failing on `failOn`.
    struct LoggedEquality: EqualityFunction {
        let name: String
        let log: Recorder<String>
        var failOn: Int?
        func equals(_ old: Int, _ new: Int) throws -> Bool {
            if new == failOn { throw Injected(name: name) }
            log.append("\(name):\(old)=\(new)")
            return old == new
        }
    }

    /// A predicate given as a value ("changed"), logging its calls, failing on `failOn`.
    struct LoggedChange: ChangeFunction {
        let name: String
        let log: Recorder<String>
        var failOn: Int?
        func didChange(_ old: Int, _ new: Int) throws -> Bool {
            if new == failOn { throw Injected(name: name) }
            log.append("\(name):\(old)->\(new)")
            return old != new
        }
    }

    /// An effect given as a value, logging its calls, failing on `failOn`.
    struct LoggedEffect: EffectFunction {
        let name: String
        let log: Recorder<String>
        var failOn: Int?
        func run(_ value: Int) throws {
            if value == failOn { throw Injected(name: name) }
            log.append("\(name):\(value)")
        }
    }

    /// Child i of the fan-out: map(t_i, intoAll(eq_i)[into(q_i, e_i), intoWhen(p_i, w_i), intoOnce(o_i)]),
    /// all in the `calling:` forms; `fail` names the calls that fail on the value 5.
    func callingChild(_ i: Int, _ log: Recorder<String>, fail: Set<String>) -> Diffuser<Int> {
        func failOn(_ name: String) -> Int? { fail.contains(name) ? 5 : nil }
        let t = "t\(i)", g = "g\(i)", q = "q\(i)", e = "e\(i)", p = "p\(i)", w = "w\(i)", o = "o\(i)"
        return .map(calling: LoggedTransform(name: t, log: log, failOn: failOn(t)), .intoAll(
            comparing: LoggedEquality(name: g, log: log, failOn: failOn(g)), [
                .into(comparing: LoggedEquality(name: q, log: log, failOn: failOn(q)),
                      calling: LoggedEffect(name: e, log: log, failOn: failOn(e))),
                .intoWhen(calling: LoggedChange(name: p, log: log, failOn: failOn(p)),
                          effect: LoggedEffect(name: w, log: log, failOn: failOn(w))),
                .intoOnce(calling: LoggedEffect(name: o, log: log, failOn: failOn(o))),
            ]))
    }

    func testAFanOutOfCallingMapsMakesEveryUserCallInTreeOrder() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.intoAlways([callingChild(1, log, fail: []), callingChild(2, log, fail: [])])
        d.run(1)
        XCTAssertEqual(log.values, ["t1:1", "e1:1", "w1:1", "o1:1", "t2:1", "e2:1", "w2:1", "o2:1"])
        log.clear()
        d.run(2)
        XCTAssertEqual(log.values, [
            "t1:2", "g1:1=2", "q1:1=2", "e1:2", "p1:1->2", "w1:2",
            "t2:2", "g2:1=2", "q2:1=2", "e2:2", "p2:1->2", "w2:2",
        ])
        log.clear()
        d.run(2)
        XCTAssertEqual(log.values, ["t1:2", "g1:2=2", "t2:2", "g2:2=2"])
    }

    /// Every user call of the tree fails in turn: the calls before it in tree order
    /// happen, it reports its error, and nothing after it runs; every later call that
    /// also fails is not reached.
    func testTheFirstFailureInTreeOrderWinsAndNothingAfterItRuns() {
        let order = ["t1", "g1", "q1", "e1", "p1", "w1", "t2", "g2", "q2", "e2", "p2", "w2"]
        for (index, first) in order.enumerated() {
            let log = Recorder<String>()
            let fail = Set(order[index...])
            let d = Diffuser<Int>.intoAlways([callingChild(1, log, fail: fail), callingChild(2, log, fail: fail)])
            d.run(4)
            log.clear()
            XCTAssertThrowsError(try d.tryRun(5), first) { XCTAssertEqual($0 as? Injected, Injected(name: first)) }
            let expected = [
                "t1:5", "g1:4=5", "q1:4=5", "e1:5", "p1:4->5", "w1:5",
                "t2:5", "g2:4=5", "q2:4=5", "e2:5", "p2:4->5", "w2:5",
            ]
            XCTAssertEqual(log.values, Array(expected[..<index]), first)
        }
    }

    func testTheFirstFailureInTreeOrderWinsWithClosures() {
        let log = Recorder<String>()
        var failing: Set<String> = []
        func call(_ name: String, _ value: Int) throws {
            if failing.contains(name) { throw Injected(name: name) }
            log.append("\(name):\(value)")
        }
        let d = Diffuser<Int>.intoAll(
            .map(throwing: { try call("t1", $0); return $0 }, .into(throwing: { try call("e1", $0) })),
            .map(throwing: { try call("t2", $0); return $0 }, .intoWhen(throwing: { old, new in
                try call("p2", new)
                return old != new
            }, effect: { try call("e2", $0) })),
            .intoAlways(throwing: { try call("e3", $0) })
        )
        d.run(1)
        XCTAssertEqual(log.values, ["t1:1", "e1:1", "t2:1", "e2:1", "e3:1"])
        for (fail, expected, error) in [
            (["e1", "t2"], ["t1:2"], "e1"),
            (["t1", "e3"], [], "t1"),
            (["p2", "e3"], ["t1:2", "e1:2", "t2:2"], "p2"),
            // e1's gate now holds 2: from here on it does not run e1.
            (["e2", "e3"], ["t1:2", "t2:2", "p2:2"], "e2"),
            (["e3"], ["t1:2", "t2:2", "p2:2", "e2:2"], "e3"),
        ] as [([String], [String], String)] {
            log.clear()
            failing = Set(fail)
            XCTAssertThrowsError(try d.tryRun(2)) { XCTAssertEqual($0 as? Injected, Injected(name: error)) }
            XCTAssertEqual(log.values, expected, "\(fail)")
        }
        log.clear()
        failing = []
        d.run(2)
        XCTAssertEqual(log.values, ["t1:2", "t2:2", "p2:2", "e3:2"],
                       "e1's and e2's gates hold 2 from earlier passes; the root gate still holds 1 and retries")
    }

    func testALaterTransformSeesWhatAnEarlierEffectDid() {
        final class Box { var value = 0 }
        let box = Box(), log = Recorder<String>()
        struct ReadBox: TransformFunction {
            let box: Box
            func select(_ value: Int) -> Int { value + box.value }
        }
        let d = Diffuser<Int>.intoAlways([
            .into { box.value = $0 * 100 },
            .map({ $0 + box.value }, .intoAlways { log.append("closure:\($0)") }),
            .map(calling: ReadBox(box: box), .intoAlways { log.append("calling:\($0)") }),
            .intoAll(
                .intoAlways { box.value = -$0 },
                .map({ $0 + box.value }, .intoAlways { log.append("intoAll:\($0)") })
            ),
        ])
        d.run(1)
        d.run(2)
        XCTAssertEqual(log.values, ["closure:101", "calling:101", "intoAll:0", "closure:202", "calling:202", "intoAll:0"])
    }
}
