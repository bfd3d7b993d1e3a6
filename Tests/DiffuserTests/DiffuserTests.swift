import XCTest
@testable import Diffuser

/// The combinators one by one (effects, gates, fan-outs, maps, sharing), then what the
/// gates keep: the lifetimes of cached values, and identical values. One file because all
/// of it is the one question of when a gate runs its child and what it holds afterwards;
/// failures, threads, exactness and laws have files of their own.
final class DiffuserTests: XCTestCase {
    struct Header: Equatable { var title: String; var subtitle: String }
    struct Model: Equatable { var header: Header; var count: Int; var flag: Bool }
    final class Label { var text: String = ""; var optionalText: String? }

    func testIntoAlwaysRunsOnEveryValue() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoAlways { log.append($0) }
        [1, 1, 2, 2].forEach(d.run)
        XCTAssertEqual(log.values, [1, 1, 2, 2])
    }

    func testIntoRunsFirstTimeAndOnChangeOnly() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.into { log.append($0) }
        [1, 1, 2, 2, 1].forEach(d.run)
        XCTAssertEqual(log.values, [1, 2, 1])
    }

    func testIntoWithOptionalValuesTreatsNilAsAValue() {
        let log = Recorder<Int?>()
        let d = Diffuser<Int?>.into { log.append($0) }
        [nil, nil, 1, nil].forEach(d.run)
        XCTAssertEqual(log.values, [nil, 1, nil])
    }

    func testIntoWhenNeverCallsPredicateOnFirstRun() {
        let calls = Recorder<(Int, Int)>()
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoWhen({ calls.append(($0, $1)); return true }, { log.append($0) })
        d.run(5)
        XCTAssertEqual(calls.count, 0)
        XCTAssertEqual(log.values, [5])
        d.run(6)
        XCTAssertEqual(calls.values.map(\.0), [5])
        XCTAssertEqual(calls.values.map(\.1), [6])
    }

    func testIntoWhenCachesAfterEveryRunEvenWhenSkipped() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoWhen({ old, new in new > old }, { log.append($0) })
        [1, 3, 2, 5, 4, 4, 5].forEach(d.run)
        // 2 is cached although it did not run, so 2.5-like steps are compared to it.
        XCTAssertEqual(log.values, [1, 3, 5, 5])
    }

    func testIntoWhenWithDiffuserChild() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoWhen({ $0 != $1 }, .intoAlways { log.append($0) })
        [1, 1, 2].forEach(d.run)
        XCTAssertEqual(log.values, [1, 2])
    }

    func testIntoOnceRunsOnlyOnFirstValue() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.intoOnce { log.append($0) }
        [1, 2, 3].forEach(d.run)
        XCTAssertEqual(log.values, [1])
        let log2 = Recorder<Int>()
        let d2 = Diffuser<Int>.intoOnce(.intoAlways { log2.append($0) })
        [7, 8].forEach(d2.run)
        XCTAssertEqual(log2.values, [7])
    }

    func testIntoAllGatesOnEqualityAndRunsChildrenInOrder() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.intoAll(
            .intoAlways { log.append("a\($0)") },
            .intoAlways { log.append("b\($0)") },
            .intoAlways { log.append("c\($0)") }
        )
        [1, 1, 2].forEach(d.run)
        XCTAssertEqual(log.values, ["a1", "b1", "c1", "a2", "b2", "c2"])
    }

    func testIntoAlwaysChildrenRunsUngatedInOrder() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.intoAlways([
            .intoAlways { log.append("a\($0)") },
            .into { log.append("b\($0)") },
        ])
        [1, 1].forEach(d.run)
        XCTAssertEqual(log.values, ["a1", "b1", "a1"])
        let variadic = Diffuser<Int>.intoAlways(.intoAlways { log.append("v\($0)") })
        variadic.run(3)
        XCTAssertEqual(log.values.last, "v3")
    }

    func testInitializersEqualIntoAll() {
        let log = Recorder<Int>()
        let a = Diffuser<Int>(.intoAlways { log.append($0) })
        let b = Diffuser<Int>([.intoAlways { log.append($0 * 10) }])
        [1, 1, 2].forEach { a.run($0); b.run($0) }
        XCTAssertEqual(log.values, [1, 10, 2, 20])
    }

    func testEmptyChildrenAreFine() {
        Diffuser<Int>.intoAll([]).run(1)
        Diffuser<Int>.intoAlways([Diffuser<Int>]()).run(1)
        Diffuser<Int>([]).run(1)
    }

    /// Fan-outs hold their children by references they took themselves: a child lives as
    /// long as a fan-out over it, however many times it occurs there, and no longer.
    func testFanOutsKeepTheirChildrenAliveAndReleaseThem() {
        final class Token {}
        struct Part: TransformFunction {
            func select(_ value: Int) -> Int { value }
        }
        struct Identity: EqualityFunction {
            func equals(_ old: Int, _ new: Int) -> Bool { old == new }
        }
        let kinds: [(String, ([Diffuser<Int>]) -> Diffuser<Int>)] = [
            ("intoAll", { .intoAll($0) }),
            ("intoAll(comparing:)", { .intoAll(comparing: Identity(), $0) }),
            ("intoAlways", { .intoAlways($0) }),
        ]
        for (name, fanOut) in kinds {
            weak var token: Token?
            var runs = 0
            var tree: Diffuser<Int>?
            do {
                let held = Token()
                token = held
                let leaf = Diffuser<Int>.intoAlways { _ in withExtendedLifetime(held) { runs += 1 } }
                tree = fanOut([leaf, .map(calling: Part(), leaf), leaf])
            }
            XCTAssertNotNil(token, name)
            tree?.run(1)
            XCTAssertEqual(runs, 3, name)
            tree = nil
            XCTAssertNil(token, "\(name) released its children")
        }
    }

    /// A gate holds its cached value until it is freed, and releases it then.
    func testCachingNodesReleaseTheirCachedValueWithThem() {
        final class Box: Equatable {
            static func == (a: Box, b: Box) -> Bool { a === b }
        }
        let kinds: [(String, () -> Diffuser<Box>)] = [
            ("into", { .into { _ in } }),
            ("intoAll", { .intoAll([.intoAlways { _ in }]) }),
            ("intoWhen(child)", { .intoWhen({ $0 !== $1 }, .intoAlways { _ in }) }),
            ("intoWhen(effect)", { .intoWhen({ $0 !== $1 }, { (_: Box) in }) }),
        ]
        for (name, make) in kinds {
            weak var cached: Box?
            var gate: Diffuser<Box>? = make()
            do {
                let value = Box()
                cached = value
                gate?.run(value)
            }
            XCTAssertNotNil(cached, name)
            gate = nil
            XCTAssertNil(cached, "\(name) released its cache")
        }
    }

    func testMapByClosureAndKeyPath() {
        let log = Recorder<String>()
        let d = Diffuser<Model>(
            .map(\.header, .intoAll(
                .map(\.title, .into { log.append("title=\($0)") }),
                .map({ $0.subtitle }, .into { log.append("subtitle=\($0)") })
            )),
            .map(\.count, .into { log.append("count=\($0)") })
        )
        var m = Model(header: Header(title: "T", subtitle: "S"), count: 0, flag: false)
        d.run(m)
        XCTAssertEqual(log.values, ["title=T", "subtitle=S", "count=0"])
        log.clear()
        d.run(m)
        XCTAssertEqual(log.values, [])
        m.header.subtitle = "S2"
        d.run(m)
        XCTAssertEqual(log.values, ["subtitle=S2"])
        log.clear()
        m.count = 4
        d.run(m)
        XCTAssertEqual(log.values, ["count=4"])
    }

    func testMapTransformRunsOnlyWhenReached() {
        let transforms = Recorder<Int>()
        let d = Diffuser<Int>.intoAll(.map({ (x: Int) -> Int in transforms.append(x); return x }, .intoAlways { _ in }))
        [1, 1, 1, 2].forEach(d.run)
        XCTAssertEqual(transforms.values, [1, 2])
    }

    func testInvert() {
        let log = Recorder<Bool>()
        let d = Diffuser<Bool>.invert(.into { log.append($0) })
        [true, true, false].forEach(d.run)
        XCTAssertEqual(log.values, [false, true])
    }

    func testIntoKeypathSetsEverySubject() {
        let a = Label(), b = Label()
        let d = Diffuser<String>.intoKeypath(\Label.text, on: a, b)
        d.run("hello")
        XCTAssertEqual([a.text, b.text], ["hello", "hello"])
        let o = Diffuser<String>.intoKeypath(\Label.optionalText, on: a, b)
        o.run("opt")
        XCTAssertEqual([a.optionalText, b.optionalText], ["opt", "opt"])
    }

    func testChildSharedByTwoParentsSharesOneCache() {
        let log = Recorder<Int>()
        let shared = Diffuser<Int>.into { log.append($0) }
        let d = Diffuser<Int>.intoAlways(shared, .map({ $0 }, shared))
        d.run(1)
        XCTAssertEqual(log.values, [1], "second use sees the value cached by the first")
        d.run(2)
        XCTAssertEqual(log.values, [1, 2])
        shared.run(2)
        XCTAssertEqual(log.values, [1, 2], "running the child directly shares the cache too")
    }

    func testTwoTreesOverOneChildShareItsCache() {
        let log = Recorder<Int>()
        let shared = Diffuser<Int>.into { log.append($0) }
        let first = Diffuser<Int>.intoAlways(shared)
        let second = Diffuser<Int>.intoAlways(shared)
        first.run(1)
        second.run(1)
        XCTAssertEqual(log.values, [1])
    }

    func testCopiesOfADiffuserShareState() {
        let log = Recorder<Int>()
        let d = Diffuser<Int>.into { log.append($0) }
        let copy = d
        d.run(1)
        copy.run(1)
        XCTAssertEqual(log.values, [1])
    }

    func testNestedMapsDeep() {
        struct Outer: Equatable { var inner: Inner }
        struct Inner: Equatable { var value: Int; var other: Int }
        let log = Recorder<Int>()
        let d = Diffuser<Outer>.map(\.inner, .map(\.value, .into { log.append($0) }))
        d.run(Outer(inner: Inner(value: 1, other: 0)))
        d.run(Outer(inner: Inner(value: 1, other: 9)))
        d.run(Outer(inner: Inner(value: 2, other: 9)))
        XCTAssertEqual(log.values, [1, 2])
    }

    // MARK: Lifetime of the values gates keep

    /// Storage whose instances are counted, so that a test can tell whether a value was
    /// freed (and freed once).
    final class Token {
        nonisolated(unsafe) static var live = 0
        init() { Token.live += 1 }
        deinit { Token.live -= 1 }
    }

    /// A part that owns storage: copying it retains the token, destroying it releases it.
    struct Part: Equatable {
        let n: Int
        let token = Token()
        static func == (a: Part, b: Part) -> Bool { a.n == b.n }
    }

    struct PartModel {
        var part: Part
    }

    func testAGateKeepsTheLatestPartItsMapMadeAndFreesTheOthers() {
        Token.live = 0
        let seen = Recorder<Int>()
        weak var first: Token?
        weak var second: Token?
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .into { (part: Part) in
                if first == nil { first = part.token }
                seen.append(part.n)
            })
            d.run(1)
            XCTAssertEqual(seen.values, [1])
            XCTAssertEqual(Token.live, 1, "the gate keeps the part; nothing else is left")
            XCTAssertNotNil(first)
            let probe = Diffuser<Int>.map({ Part(n: $0) }, .intoAlways { (part: Part) in second = part.token })
            probe.run(0)
            XCTAssertNil(second, "a part nothing keeps is freed")
            d.run(1)
            XCTAssertEqual(seen.values, [1], "an equal part stops at the gate")
            XCTAssertNil(first, "the gate keeps the new, equal part: the first one was freed")
            XCTAssertEqual(Token.live, 1)
            d.run(2)
            XCTAssertEqual(seen.values, [1, 2])
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0, "the cached part goes with the diffuser")
    }

    func testAPartWhoseEffectFailsIsFreedAndRetried() {
        Token.live = 0
        let seen = Recorder<Int>()
        var fail = true
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .into(throwing: { (part: Part) in
                if fail { throw TestFailure(tag: "effect") }
                seen.append(part.n)
            }))
            XCTAssertThrowsError(try d.tryRun(1)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "effect")) }
            XCTAssertEqual(Token.live, 0, "the part of a failed run, not stored, was freed")
            fail = false
            XCTAssertNoThrow(try d.tryRun(1))
            XCTAssertEqual(seen.values, [1], "the failed value is retried")
            XCTAssertEqual(Token.live, 1)
            fail = true
            XCTAssertThrowsError(try d.tryRun(2))
            XCTAssertEqual(Token.live, 1, "the failed part was freed; the cached one stays")
            XCTAssertNoThrow(try d.tryRun(1), "the cache still holds 1")
            XCTAssertEqual(seen.values, [1])
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAnIntoAllUnderAMapFreesThePartWhenAChildFails() {
        Token.live = 0
        let seen = Recorder<String>()
        var fail = true
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .intoAll(
                .into { (part: Part) in seen.append("a\(part.n)") },
                .into(throwing: { (part: Part) in
                    if fail { throw TestFailure(tag: "b") }
                    seen.append("b\(part.n)")
                })
            ))
            XCTAssertThrowsError(try d.tryRun(1))
            XCTAssertEqual(seen.values, ["a1"])
            XCTAssertEqual(Token.live, 1, "only the first child's cache holds the part")
            fail = false
            XCTAssertNoThrow(try d.tryRun(1))
            XCTAssertEqual(seen.values, ["a1", "b1"], "the fan-out retries; its first child stays equal")
            XCTAssertNoThrow(try d.tryRun(2))
            XCTAssertEqual(seen.values, ["a1", "b1", "a2", "b2"])
            XCTAssertEqual(Token.live, 1, "the three caches share the part of 2; the parts of 1 were freed")
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAGateSharedByTwoMapsAndRunDirectlyKeepsTheLastPart() {
        Token.live = 0
        let seen = Recorder<Int>()
        do {
            let gate = Diffuser<Part>.into { seen.append($0.n) }
            let d = Diffuser<Int>.intoAll(
                .map({ Part(n: $0) }, gate),
                .map({ Part(n: $0 * 10) }, gate),
                .map({ Part(n: $0 * 10) }, gate)
            )
            d.run(1)
            XCTAssertEqual(seen.values, [1, 10], "the third map's part equals the second's")
            XCTAssertEqual(Token.live, 1, "the gate holds the third part; the first and second were freed")
            let direct = Part(n: 7)
            gate.run(direct)
            XCTAssertEqual(seen.values, [1, 10, 7])
            XCTAssertEqual(Token.live, 1, "the gate shares the part it was given with the test")
            XCTAssertEqual(direct.n, 7)
            d.run(2)
            XCTAssertEqual(seen.values, [1, 10, 7, 2, 20])
            XCTAssertEqual(Token.live, 2, "the test's part and the gate's")
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAPartReadByAKeyPathFromAModelThatOwnsItStaysTheModels() {
        Token.live = 0
        let seen = Recorder<Int>()
        weak var modelsToken: Token?
        do {
            var model = PartModel(part: Part(n: 1))
            modelsToken = model.part.token
            let d = Diffuser<PartModel>.map(\.part, .into { (part: Part) in seen.append(part.n) })
            d.run(model)
            d.run(model)
            XCTAssertEqual(seen.values, [1])
            XCTAssertEqual(Token.live, 1, "the gate and the model share one part")
            model.part = Part(n: 2)
            XCTAssertNotNil(modelsToken, "the gate still holds the model's old part")
            d.run(model)
            XCTAssertEqual(seen.values, [1, 2])
            XCTAssertNil(modelsToken, "the old part was freed once nothing held it")
            XCTAssertEqual(Token.live, 1)
            XCTAssertEqual(model.part.n, 2)
        }
        XCTAssertEqual(Token.live, 0)
    }

    // MARK: Gates and identical values

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

    func testTheIdenticalValueIsComparedEveryTimeButNotRenderedAgain() {
        let comparisons = RacyCounter()
        let rendered = Recorder<Int>()
        let d = Diffuser<Counted>.into { rendered.append($0.box.number) }
        let one = Counted(1, comparisons)
        d.run(one)
        d.run(one)
        d.run(one)
        XCTAssertEqual(rendered.values, [1])
        XCTAssertEqual(comparisons.value, 2, "== decides every comparison, also of the same value")

        d.run(Counted(1, comparisons))
        XCTAssertEqual(comparisons.value, 3, "an equal value that is not the same one is compared")
        XCTAssertEqual(rendered.values, [1])
        d.run(Counted(2, comparisons))
        XCTAssertEqual(rendered.values, [1, 2])
    }

    /// An equality given as a value, counting its calls.
    struct CountingEquality: EqualityFunction {
        let comparisons: RacyCounter
        func equals(_ cached: Int, _ new: Int) -> Bool {
            comparisons.increment()
            return cached == new
        }
    }

    func testAnEqualityFunctionIsAlwaysAsked() {
        let comparisons = RacyCounter()
        let rendered = Recorder<String>()
        let d = Diffuser<Int>.into(comparing: CountingEquality(comparisons: comparisons),
                                   calling: LogEffect(name: "e", log: rendered))
        d.run(1)
        d.run(1)
        d.run(1)
        XCTAssertEqual(rendered.values, ["e:1"])
        XCTAssertEqual(comparisons.value, 2, "the same value is compared")
    }

    func testAnIntoAllRootComparesTheIdenticalValueAndSkipsItsWholeTree() {
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
        XCTAssertEqual(comparisons.value, 1)
    }
}
