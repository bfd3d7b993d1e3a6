import XCTest
@testable import Diffuser

/// A value behind a stored property at a non-zero offset: the conformance runner's
/// "stored key paths" form maps every selection into one and then maps `\.value`, so
/// that every vector runs through `FieldNode` (a part read in place).
struct StoredPart<V> {
    var before: Int = 0
    var value: V

    init(_ value: V) {
        self.value = value
    }
}

/// Key paths to stored properties are read in place (`FieldNode`) and nodes pass values
/// by address (`withBorrowed`): results, order of calls and lifetimes must be those of
/// the same tree built with closures.
final class StoredKeyPathTests: XCTestCase {
    /// A reference type compared by content; counts live instances, so that a test sees
    /// whether a gate keeps exactly the references it should.
    final class Box: Equatable, @unchecked Sendable {
        nonisolated(unsafe) static var live = 0
        let text: String
        init(_ text: String) { self.text = text; Box.live += 1 }
        deinit { Box.live -= 1 }
        static func == (a: Box, b: Box) -> Bool { a.text == b.text }
    }

    /// Equal when within 1 of each other: not transitive, so a gate that kept the old
    /// value on "equal" would drift differently.
    struct Near: Equatable {
        var x: Int
        static func == (a: Near, b: Near) -> Bool { abs(a.x - b.x) <= 1 }
    }

    struct Inner: Equatable {
        var flag: Bool
        var box: Box
        var reading: Double
    }

    struct Model: Equatable {
        var title: String
        var count: Int8
        var inner: Inner
        var tags: [String]
        var pair: (Int, String)
        var optional: Box?
        var near: Near

        static func == (a: Model, b: Model) -> Bool {
            a.title == b.title && a.count == b.count && a.inner == b.inner && a.tags == b.tags
                && a.pair == b.pair && a.optional == b.optional && a.near == b.near
        }
    }

    // MARK: The fast path is taken exactly for stored key paths

    func testStoredKeyPathsAreReadInPlaceAndOthersProjected() {
        let sink = Diffuser<Int>.intoAlways { _ in }
        func isField<A, B>(_ keyPath: KeyPath<A, B>, _ child: Diffuser<B>) -> Bool {
            Diffuser<A>.map(keyPath, child).node is FieldNode<A, B>
        }
        XCTAssertTrue(isField(\Model.pair.0, sink))
        XCTAssertTrue(isField(\StoredPart<Int>.value, sink))
        XCTAssertTrue(isField(\Int.self, sink))
        XCTAssertTrue(isField(\Model.inner.reading, Diffuser<Double>.intoAlways { _ in }))
        // Computed, through an array, through an optional, from a class: projected.
        XCTAssertFalse(isField(\Model.tags.count, sink))
        XCTAssertFalse(isField(\Model.title.utf8.count, sink))
        XCTAssertFalse(isField(\Model.optional?.text.count, Diffuser<Int?>.intoAlways { _ in }))
        XCTAssertFalse(isField(\Box.text, Diffuser<String>.intoAlways { _ in }))
    }

    // MARK: Same effects as closures

    /// The same tree over `Model`, built with key paths or with closures, logging every
    /// effect with the leaf's name.
    func tree(keyPaths: Bool, _ log: Recorder<String>) -> Diffuser<Model> {
        func leaf<B: Equatable>(_ name: String, _ keyPath: KeyPath<Model, B>) -> Diffuser<Model> {
            let effect = Diffuser<B>.into { log.append("\(name)=\($0)") }
            return keyPaths ? .map(keyPath, effect) : .map({ $0[keyPath: keyPath] }, effect)
        }
        func innerLeaf<B: Equatable>(_ name: String, _ keyPath: KeyPath<Inner, B>) -> Diffuser<Inner> {
            let effect = Diffuser<B>.into { log.append("\(name)=\($0)") }
            return keyPaths ? .map(keyPath, effect) : .map({ $0[keyPath: keyPath] }, effect)
        }
        let inner = Diffuser<Inner>.intoAll(
            innerLeaf("flag", \.flag), innerLeaf("box", \.box.text), innerLeaf("reading", \.reading))
        let innerMapped: Diffuser<Model> = keyPaths ? .map(\.inner, inner) : .map({ $0.inner }, inner)
        return .intoAll(
            leaf("title", \.title), leaf("count", \.count), innerMapped, leaf("tags", \.tags),
            leaf("pair.0", \.pair.0), leaf("pair.1", \.pair.1), leaf("optional", \.optional),
            leaf("near", \.near.x), leaf("nearValue", \.near), leaf("reading", \.inner.reading))
    }

    func model(_ generator: inout SeededGenerator) -> Model {
        func pick<T>(_ options: [T]) -> T { options[Int(generator.next() % UInt64(options.count))] }
        // Strings longer than 15 bytes live on the heap; copies share no storage.
        let title = String(decoding: Array(pick(["a title that is long enough", "short", "another long title here"]).utf8),
                           as: UTF8.self)
        return Model(
            title: title,
            count: pick([0, 1, -128]),
            inner: Inner(flag: pick([true, false]), box: Box(pick(["x", "y"])), reading: pick([0.0, -0.0, .nan, 1.5])),
            tags: pick([[], ["one"], ["one", "two and some more text"]]),
            pair: (pick([1, 2]), pick(["p", "q"])),
            optional: pick([nil, Box("o")]),
            near: Near(x: pick([0, 1, 2, 3])))
    }

    func testKeyPathTreeRunsTheEffectsOfTheClosureTree() {
        var generator = SeededGenerator(seed: 34)
        let closureLog = Recorder<String>(), keyPathLog = Recorder<String>()
        let closures = tree(keyPaths: false, closureLog), keyPaths = tree(keyPaths: true, keyPathLog)
        var previous = model(&generator)
        for step in 0..<400 {
            // Now and then the very value again, or an equal copy, to reach the same-bits
            // and equal-bits-differ paths of the gates.
            let next: Model
            switch step % 5 {
            case 0: next = previous
            case 1: next = Model(title: String(decoding: Array(previous.title.utf8), as: UTF8.self), count: previous.count,
                                 inner: Inner(flag: previous.inner.flag, box: Box(previous.inner.box.text),
                                              reading: previous.inner.reading),
                                 tags: previous.tags.map { String(decoding: Array($0.utf8), as: UTF8.self) },
                                 pair: previous.pair, optional: previous.optional.map { Box($0.text) }, near: previous.near)
            default: next = model(&generator)
            }
            closures.run(next)
            keyPaths.run(next)
            previous = next
        }
        XCTAssertGreaterThan(closureLog.count, 400)
        XCTAssertEqual(keyPathLog.values, closureLog.values)
    }

    /// NaN is not equal to itself: a gate fed a NaN in place runs its effect every time,
    /// the same value or not.
    func testNaNReadInPlaceRunsEveryTime() {
        let log = Recorder<Double>()
        let diffuser = Diffuser<Inner>.map(\.reading, .into { log.append($0) })
        let value = Inner(flag: true, box: Box("b"), reading: .nan)
        for _ in 0..<3 { diffuser.run(value) }
        XCTAssertEqual(log.count, 3)
    }

    /// A non-transitive equality read in place: the gate compares with the previous
    /// run's value and keeps every new value, so 0, 1, 2, 3 runs only on 0.
    func testNearEqualityKeepsEveryValue() {
        let log = Recorder<Int>()
        let diffuser = Diffuser<Model>.map(\.near, .into { log.append($0.x) })
        var generator = SeededGenerator(seed: 1)
        var value = model(&generator)
        for x in [0, 1, 2, 3, 5, 5, 6] {
            value.near = Near(x: x)
            diffuser.run(value)
        }
        XCTAssertEqual(log.values, [0, 5])
    }

    // MARK: Failures and lifetimes

    /// An effect below a field node that throws leaves its gate's cache unchanged, so the
    /// next run retries; the value it kept is released exactly when replaced.
    func testFailureRetriesAndReferencesAreKeptExactly() throws {
        let baseline = Box.live
        var fail = true
        let seen = Recorder<String>()
        do {
            let diffuser = Diffuser<Inner>.map(\.box, .into(throwing: { box in
                seen.append(box.text)
                if fail { throw TestFailure(tag: "effect") }
            }))
            XCTAssertThrowsError(try diffuser.tryRun(Inner(flag: true, box: Box("first"), reading: 0)))
            XCTAssertEqual(Box.live, baseline, "a failed run keeps nothing")
            fail = false
            try diffuser.tryRun(Inner(flag: true, box: Box("first"), reading: 0))
            XCTAssertEqual(Box.live, baseline + 1, "the gate keeps the box it ran with")
            try diffuser.tryRun(Inner(flag: true, box: Box("first"), reading: 0))
            XCTAssertEqual(Box.live, baseline + 1, "an equal box replaces the kept one")
            try diffuser.tryRun(Inner(flag: false, box: Box("second"), reading: 0))
            XCTAssertEqual(Box.live, baseline + 1)
            XCTAssertEqual(seen.values, ["first", "first", "second"])
        }
        XCTAssertEqual(Box.live, baseline, "the tree released what it kept")
    }

    /// Values lent to effects and transforms without a copy stay theirs to copy: a
    /// closure that keeps the value it was lent keeps it alive.
    func testBorrowedValuesMayBeKeptByUserCode() {
        let baseline = Box.live
        var kept: [Inner] = []
        var keptByTransform: [Box] = []
        do {
            let diffuser = Diffuser<Model>.intoAll(
                .map(\.inner, .intoAlways { kept.append($0) }),
                .map({ (model: Model) -> Box in keptByTransform.append(model.inner.box); return model.inner.box },
                     .intoAlways { _ in }))
            var generator = SeededGenerator(seed: 7)
            for _ in 0..<10 { diffuser.run(model(&generator)) }
        }
        XCTAssertEqual(kept.count, 10)
        XCTAssertEqual(keptByTransform.count, 10)
        XCTAssertEqual(kept.map(\.box.text).count, 10)
        kept.removeAll()
        keptByTransform.removeAll()
        XCTAssertEqual(Box.live, baseline)
    }
}
