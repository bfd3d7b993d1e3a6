import XCTest
@testable import Diffuser

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
        struct Parts: SelectionFunction {
            func selectAll(_ value: Int, into parts: inout SelectedParts<Int>) {
                while parts.count < parts.capacity { parts.append(value) }
            }
        }
        let kinds: [(String, ([Diffuser<Int>]) -> Diffuser<Int>)] = [
            ("intoAll", { .intoAll($0) }),
            ("intoAlways", { .intoAlways($0) }),
            ("mapAll", { .mapAll(calling: Parts(), $0) }),
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
}
