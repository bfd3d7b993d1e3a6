import XCTest
@testable import Diffuser

/// A closure's map hands its gate the part it made as owned, and a gate whose `keep` is
/// the value itself exchanges it with its cache (`MapNode(owning:_:)`,
/// `GateNode(taking:_:)`): the map then frees the old cached part. Every part must still
/// be freed exactly once, whatever the gate does with it, and a gate with its own `keep`
/// must still be called.
final class TakingTests: XCTestCase {
    /// Parts that hold a counted token (`Token.live`): a leak leaves one alive, an extra
    /// release crashes or goes below zero.
    typealias Token = DiffuserTests.Token
    typealias Part = DiffuserTests.Part

    func testAPartWithTheSameBitsAsTheCacheIsFreedNotTaken() {
        Token.live = 0
        let seen = Recorder<Int>()
        do {
            // The closure returns the same part (the same token) each time: the gate finds
            // the very value it keeps, does not take it, and the map frees its copy.
            let shared = Part(n: 7)
            let d = Diffuser<Int>.map({ _ in shared }, .into { seen.append($0.n) })
            for _ in 0..<5 { d.run(0) }
            XCTAssertEqual(seen.values, [7])
            XCTAssertEqual(Token.live, 1, "one token: the shared part's")
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAnEqualPartWithOtherBitsReplacesTheCache() {
        Token.live = 0
        weak var first: Token?
        do {
            let d = Diffuser<Int>.map({ Part(n: $0 / 10) }, .into { (part: Part) in
                if first == nil { first = part.token }
            })
            d.run(10)
            XCTAssertNotNil(first)
            d.run(11)
            XCTAssertNil(first, "the equal part of 11 was taken into the cache; the first one freed")
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAThrowingTransformsPartReplacesTheCacheToo() {
        Token.live = 0
        weak var first: Token?
        do {
            let d = Diffuser<Int>.map(throwing: { (n: Int) throws -> Part in Part(n: n / 10) },
                                      .into { (part: Part) in if first == nil { first = part.token } })
            d.run(10)
            XCTAssertNotNil(first)
            d.run(11)
            XCTAssertNil(first, "the equal part of 11 replaced the first one, which was freed")
            XCTAssertEqual(Token.live, 1)
            d.run(20)
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testTheReplacedPartLivesThroughTheEffectAndIsFreedBeforeTheNextSibling() {
        Token.live = 0
        weak var current: Token?
        weak var previous: Token?
        let log = Recorder<String>()
        do {
            let d = Diffuser<Int>.intoAll(
                .map({ Part(n: $0) }, .into { (part: Part) in
                    previous = current
                    current = part.token
                    log.append("effect \(part.n), previous alive: \(previous != nil)")
                }),
                .intoAlways { (n: Int) in log.append("sibling \(n), previous alive: \(previous != nil)") }
            )
            d.run(1)
            d.run(2)
            XCTAssertEqual(log.values, ["effect 1, previous alive: false", "sibling 1, previous alive: false",
                                        "effect 2, previous alive: true", "sibling 2, previous alive: false"])
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAThrowingPredicateLeavesThePartToTheMap() {
        Token.live = 0
        let seen = Recorder<Int>()
        var fail = false
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .intoWhen(throwing: { (old: Part, new: Part) in
                if fail { throw TestFailure(tag: "didChange") }
                return old.n != new.n
            }, effect: { (part: Part) in seen.append(part.n) }))
            d.run(1)
            fail = true
            XCTAssertThrowsError(try d.tryRun(2))
            XCTAssertEqual(Token.live, 1, "the failed part was freed; the cache holds 1")
            fail = false
            d.run(2)
            XCTAssertEqual(seen.values, [1, 2])
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAFailingChildUnderATakingGateLeavesTheCacheAsItWas() {
        Token.live = 0
        let seen = Recorder<String>()
        var fail = true
        do {
            let d = Diffuser<Int>.map({ Part(n: $0) }, .intoAll(
                .map({ $0.n }, .into { seen.append("n\($0)") }),
                .intoAlways(throwing: { (part: Part) in
                    if fail { throw TestFailure(tag: "child") }
                    seen.append("p\(part.n)")
                })
            ))
            XCTAssertThrowsError(try d.tryRun(1))
            XCTAssertEqual(Token.live, 0, "not taken: freed by the map")
            fail = false
            d.run(1)
            XCTAssertEqual(seen.values, ["n1", "p1"], "the gate retries 1; its first child's gate already holds 1")
            XCTAssertEqual(Token.live, 1)
        }
        XCTAssertEqual(Token.live, 0)
    }

    func testAGateWithItsOwnKeepIsCalledForAnOwnedPart() {
        let log = Recorder<String>()
        let d = Diffuser<Int>.map({ $0 + 1 }, .into(
            comparing: CallableValueTests.KeepingEquality(log: log, failOn: nil),
            calling: LogEffect(name: "e", log: log)))
        d.run(0)
        d.run(0)
        d.run(1)
        XCTAssertEqual(log.values, ["keep:1", "e:1", "keep:1", "keep:2", "e:2"],
                       "keep runs for every kept part, owned or not")
    }
}
