import XCTest
@testable import Diffuser

/// A `map` over a gate hands the part its transform made to the gate instead of letting
/// the gate copy it (`GateFlags.offered`, `GateFlags.taken`). These tests follow the
/// part's storage through every path a pass can take: kept, compared equal and dropped,
/// replaced, dropped by a failing effect or child, offered to a gate shared by several
/// maps, and lent by a key path from a model that still owns it. A part freed twice
/// crashes; a part never freed stays in `Token.live`.
final class PartHandoverTests: XCTestCase {
    /// Storage whose instances are counted, so that a test can tell whether a part was
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

    struct Model {
        var part: Part
    }

    override func setUp() {
        super.setUp()
        Token.live = 0
    }

    func testAGateKeepsThePartItsMapMadeAndFreesItOnceWhenReplaced() {
        let seen = Recorder<Int>()
        weak var first: Token?
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .into { (part: Part) in
                if first == nil { first = part.token }
                seen.append(part.n)
            })
            d.run(1)
            XCTAssertEqual(seen.values, [1])
            XCTAssertEqual(Token.live, 1, "the gate keeps the part; nothing else is left")
            XCTAssertNotNil(first)
            d.run(1)
            XCTAssertEqual(seen.values, [1], "an equal part stops at the gate")
            XCTAssertEqual(Token.live, 1, "the equal part, not kept, was freed")
            XCTAssertNotNil(first, "the gate still holds the first part")
            d.run(2)
            XCTAssertEqual(seen.values, [1, 2])
            XCTAssertNil(first, "the replaced part was freed")
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0, "the cached part goes with the diffuser")
    }

    func testAPartTakenByAGateWhoseEffectFailsIsFreedOnceAndRetried() {
        let seen = Recorder<Int>()
        var fail = true
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .into(throwing: { (part: Part) in
                if fail { throw TestFailure(tag: "effect") }
                seen.append(part.n)
            }))
            XCTAssertThrowsError(try d.tryRun(1)) { XCTAssertEqual($0 as? TestFailure, TestFailure(tag: "effect")) }
            XCTAssertEqual(Token.live, 0, "the part the gate took, not stored, was freed")
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

    func testAnIntoAllUnderAMapTakesThePartAndFreesItWhenAChildFails() {
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

    func testAGateSharedByTwoMapsAndRunDirectlyKeepsEachPartOnce() {
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
            XCTAssertEqual(Token.live, 1, "the gate holds the second part; the first and third were freed")
            let direct = Part(n: 7)
            gate.run(direct)
            XCTAssertEqual(seen.values, [1, 10, 7])
            XCTAssertEqual(Token.live, 1, "the gate copied the part it was given, which the test still owns")
            XCTAssertEqual(direct.n, 7)
            d.run(2)
            XCTAssertEqual(seen.values, [1, 10, 7, 2, 20])
            XCTAssertEqual(Token.live, 2, "the test's part and the gate's")
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAPartLentByAKeyPathFromAModelThatOwnsItStaysTheModels() {
        let seen = Recorder<Int>()
        weak var modelsToken: Token?
        do {
            var model = Model(part: Part(n: 1))
            modelsToken = model.part.token
            let d = Diffuser<Model>.map(\.part, .into { (part: Part) in seen.append(part.n) })
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
}
