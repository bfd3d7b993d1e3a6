import XCTest
@testable import Diffuser

/// `mapAll` with a selection that judges its parts (`SelectionFunction.judgesParts`):
/// which children it may judge, what it is told about their caches, and how the core
/// uses its verdicts.
final class JudgedSelectionTests: XCTestCase {
    /// `==`, logging every comparison a gate makes itself.
    struct CountedEquality: EqualityFunction {
        let log: Recorder<String>
        func equals(_ cached: Int, _ new: Int) -> Bool {
            log.append("eq:\(cached)-\(new)")
            return cached == new
        }
    }

    /// What a judge saw of one child: its index, generation and cached value.
    struct Seen: Equatable, CustomStringConvertible {
        let index: Int
        let generation: UInt64
        let cached: Int?
        var description: String { "\(index):g\(generation):\(cached.map(String.init) ?? "-")" }
    }

    /// Part i of value v is `part(v, i)`; each verdict comes from `verdict` (by default
    /// the honest one: `==` against the cache). Records what it saw of every child.
    struct Judge: SelectionFunction {
        static var judgesParts: Bool { true }
        let seen: Recorder<Seen>
        var part: @Sendable (Int, Int) -> Int = { value, i in value * 10 + i }
        var verdict: @Sendable (Seen, Int) -> PartVerdict = { seen, part in
            guard seen.generation != 0 else { return .unknown }
            guard let cached = seen.cached else { return .changed }
            return cached == part ? .unchanged : .changed
        }
        var failOn: Int?
        var failAfter = 0

        func selectAll(_ value: Int, into parts: inout SelectedParts<Int>) throws {
            XCTFail("a judging selection is called with its children")
        }

        func selectAll(
            _ value: Int, judging children: JudgedChildren<Int>,
            into parts: inout SelectedParts<Int>, verdicts: UnsafeMutableBufferPointer<PartVerdict>
        ) throws {
            let count = parts.capacity
            XCTAssertEqual(parts.count, 0)
            XCTAssertEqual(children.count, count)
            XCTAssertEqual(verdicts.count, count)
            let n = value == failOn ? failAfter : count
            for i in 0..<n {
                XCTAssertEqual(verdicts[i], .unknown)
                let look = Seen(index: i, generation: children.generation(of: i),
                                cached: children.withCachedValue(of: i) { $0?.pointee })
                seen.append(look)
                children.withCache(of: i) { generation, cached in
                    XCTAssertEqual(generation, look.generation)
                    XCTAssertEqual(cached?.pointee, look.cached)
                }
                let made = part(value, i)
                parts.append(made)
                verdicts[i] = verdict(look, made)
            }
            for outside in [-1, count] {
                children.withCache(of: outside) { generation, cached in
                    XCTAssertEqual(generation, 0, "an index outside the children is not judged")
                    XCTAssertNil(cached)
                }
            }
            if value == failOn { throw TestFailure(tag: "select") }
        }
    }

    func gates(_ names: [String], _ log: Recorder<String>) -> [Diffuser<Int>] {
        names.map { .into(comparing: CountedEquality(log: log), calling: LogEffect(name: $0, log: log)) }
    }

    func testHonestVerdictsRunWhatAPlainFanOutRunsWithoutTheGatesComparing() {
        let judged = Recorder<String>(), plain = Recorder<String>()
        let a = Diffuser<Int>.mapAll(calling: Judge(seen: Recorder(), part: { v, i in (v + i) % 3 }),
                                     gates(["x", "y", "z"], judged))
        let b = Diffuser<Int>.intoAlways(gates(["x", "y", "z"], plain).enumerated().map { i, gate in
            Diffuser<Int>.map({ ($0 + i) % 3 }, gate)
        })
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let value = Int.random(in: 0..<6, using: &generator)
            a.run(value)
            b.run(value)
        }
        let effects = { (log: Recorder<String>) in log.values.filter { !$0.hasPrefix("eq:") } }
        XCTAssertEqual(effects(judged), effects(plain))
        XCTAssertGreaterThan(effects(judged).count, 50)
        // Every part went to a judged gate: none of them compared anything itself.
        XCTAssertEqual(judged.values.filter { $0.hasPrefix("eq:") }.count, 0)
        XCTAssertGreaterThan(plain.values.filter { $0.hasPrefix("eq:") }.count, 100)
    }

    func testTheJudgeSeesEachCacheAndAGenerationThatMovesOnlyWhenItChanges() {
        let seen = Recorder<Seen>()
        let log = Recorder<String>()
        let d = Diffuser<Int>.mapAll(calling: Judge(seen: seen, part: { v, i in v + i }), gates(["a", "b"], log))
        [1, 1, 2].forEach(d.run)
        XCTAssertEqual(seen.values.map(\.description), [
            "0:g1:-", "1:g1:-", // no cache yet
            "0:g2:1", "1:g2:2", // first parts stored
            "0:g2:1", "1:g2:2", // equal parts: nothing stored
        ])
        XCTAssertEqual(log.values, ["a:1", "b:2", "a:2", "b:3"])
    }

    func testVerdictsAreTrusted() {
        // A judge that lies shows that the gates do not check it: "unchanged" stops a
        // different part, "changed" lets an equal one through.
        let log = Recorder<String>()
        var lie = Judge(seen: Recorder(), part: { v, _ in v })
        lie.verdict = { seen, _ in
            seen.cached == nil ? .changed : seen.index == 0 ? .unchanged : .changed
        }
        let d = Diffuser<Int>.mapAll(calling: lie, gates(["a", "b"], log))
        [1, 2, 2].forEach(d.run)
        XCTAssertEqual(log.values, ["a:1", "b:1", "b:2", "b:2"])
    }

    func testUnchangedIsIgnoredForAGateWithoutACache() {
        let log = Recorder<String>()
        var judge = Judge(seen: Recorder(), part: { v, _ in v })
        judge.verdict = { _, _ in .unchanged }
        let d = Diffuser<Int>.mapAll(calling: judge, gates(["a"], log))
        d.run(1)
        d.run(2)
        // The first value passes (the gate compares nothing: it has nothing to compare
        // with); afterwards the verdict holds.
        XCTAssertEqual(log.values, ["a:1"])
    }

    func testOnlyGatesThatNothingElseUnderTheFanOutReachesAreJudged() {
        let log = Recorder<String>()
        let own = gates(["own"], log)[0]
        let twice = gates(["twice"], log)[0]
        let reached = gates(["reached"], log)[0]
        let always = Diffuser<Int>.intoAlways(calling: LogEffect(name: "always", log: log))
        let elsewhere = gates(["elsewhere"], log)[0]
        // `elsewhere` is also a child of a tree outside this fan-out: still judged.
        _ = Diffuser<Int>.intoAlways([elsewhere])
        let children: [Diffuser<Int>] = [
            own, twice, always, twice, .intoAll([reached]), reached, elsewhere,
        ]
        let seen = Recorder<Seen>()
        // A judge that says "unchanged" wherever it may: only judged children obey.
        var judge = Judge(seen: seen, part: { v, _ in v })
        judge.verdict = { seen, _ in seen.cached == nil ? .unknown : .unchanged }
        let d = Diffuser<Int>.mapAll(calling: judge, children)
        d.run(1)
        XCTAssertEqual(seen.values.map { $0.generation != 0 }, [true, false, false, false, true, false, true])
        log.clear()
        d.run(2)
        XCTAssertEqual(log.values.filter { !$0.hasPrefix("eq:") }, ["twice:2", "always:2", "reached:2"])
    }

    func testAFailingJudgeRunsTheChildrenOfItsPartsByTheirVerdictsThenThrows() {
        let log = Recorder<String>()
        var judge = Judge(seen: Recorder(), part: { v, i in v == 5 && i == 0 ? 1 : v + i })
        judge.failOn = 5
        judge.failAfter = 2
        let d = Diffuser<Int>.mapAll(calling: judge, gates(["a", "b", "c"], log))
        XCTAssertNoThrow(try d.tryRun(1))
        log.clear()
        XCTAssertThrowsError(try d.tryRun(5)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "select")) }
        // Part 0 is 1 again (judged unchanged), part 1 is 6: only b runs; c has no part.
        XCTAssertEqual(log.values, ["b:6"])
    }

    func testAGateJudgedChangedComparesNormallyOnItsNextPass() {
        // The "changed" verdict lets one pass through uncompared; a later pass of the
        // same gate from elsewhere (run on its own) compares as usual.
        let log = Recorder<String>()
        let gate = gates(["g"], log)[0]
        let d = Diffuser<Int>.mapAll(calling: Judge(seen: Recorder(), part: { v, _ in v }), [gate])
        d.run(1)
        gate.run(1)
        gate.run(2)
        XCTAssertEqual(log.values, ["g:1", "eq:1-1", "eq:1-2", "g:2"])
    }
}
