import XCTest
@testable import Diffuser

/// The `intoList` combinator: what the sink receives, when, and what it keeps.
final class ListIntoListTests: XCTestCase {
    struct Row: Identifiable, Equatable {
        var id: Int
        var title: String
    }

    struct Model: Equatable {
        var title: String
        var rows: [Row]
    }

    struct Failure: Error {}

    func testFirstRunInsertsEverything() {
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList { received.append($0) }
        diffuser.run([Row(id: 1, title: "a"), Row(id: 2, title: "b")])
        XCTAssertEqual(received.count, 1)
        XCTAssertTrue(received[0].isFirst)
        XCTAssertEqual(received[0].old, [])
        XCTAssertEqual(received[0].new.map(\.id), [1, 2])
        XCTAssertEqual(received[0].diff.inserts, [0, 1])
    }

    func testFirstRunOfAnEmptyListStillCallsTheSink() {
        var calls = 0
        let diffuser = Diffuser<[Row]>.intoList { _ in calls += 1 }
        diffuser.run([])
        diffuser.run([])
        XCTAssertEqual(calls, 1)
    }

    func testUnchangedListDoesNotCallTheSink() {
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList { received.append($0) }
        let rows = [Row(id: 1, title: "a"), Row(id: 2, title: "b")]
        diffuser.run(rows)
        diffuser.run(rows)
        diffuser.run(rows.map { $0 })
        XCTAssertEqual(received.count, 1)
    }

    func testChangesCarryBothListsAndTheDiff() throws {
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList(key: \.id, sameContent: ==) { received.append($0) }
        let a = [Row(id: 1, title: "a"), Row(id: 2, title: "b"), Row(id: 3, title: "c")]
        let b = [Row(id: 3, title: "c"), Row(id: 1, title: "A"), Row(id: 4, title: "d")]
        diffuser.run(a)
        diffuser.run(b)
        XCTAssertEqual(received.count, 2)
        let changes = received[1]
        XCTAssertFalse(changes.isFirst)
        XCTAssertEqual(changes.old, a)
        XCTAssertEqual(changes.new, b)
        XCTAssertEqual(changes.diff.deletes, [1])
        XCTAssertEqual(changes.diff.inserts, [2])
        XCTAssertEqual(changes.diff.updates, [ListDiff.Pair(old: 0, new: 1)])
        // What the sink is meant to do with it works.
        XCTAssertEqual(try playUIKitBatch(changes.batch(), old: changes.old, new: changes.new), b)
        var patched = changes.old
        changes.script().apply(to: &patched, from: changes.new)
        XCTAssertEqual(patched, b)
    }

    func testFailureKeepsTheLastAppliedList() {
        var fail = false
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList { changes in
            if fail { throw Failure() }
            received.append(changes)
        }
        let a = [Row(id: 1, title: "a")]
        let b = [Row(id: 1, title: "a"), Row(id: 2, title: "b")]
        let c = [Row(id: 3, title: "c"), Row(id: 1, title: "a")]
        diffuser.run(a)
        fail = true
        XCTAssertThrowsError(try diffuser.tryRun(b))
        fail = false
        diffuser.run(c)
        XCTAssertEqual(received.count, 2)
        // Diffed from a, the list the sink applied, not from b.
        XCTAssertEqual(received[1].old, a)
        XCTAssertEqual(received[1].diff.inserts, [0])
        XCTAssertEqual(received[1].diff.deletes, [])
        // Back to the applied list after a failure: nothing to do.
        fail = true
        XCTAssertThrowsError(try diffuser.tryRun(b))
        fail = false
        diffuser.run(c)
        XCTAssertEqual(received.count, 2)
    }

    func testFailedFirstRunIsFirstAgain() {
        var fail = true
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList { changes in
            if fail { throw Failure() }
            received.append(changes)
        }
        XCTAssertThrowsError(try diffuser.tryRun([Row(id: 1, title: "a")]))
        fail = false
        diffuser.run([Row(id: 2, title: "b")])
        XCTAssertEqual(received.count, 1)
        XCTAssertTrue(received[0].isFirst)
        XCTAssertEqual(received[0].old, [])
    }

    /// A key or content function that throws aborts the run with its error and the node
    /// keeps the list it applied, as the C reader's and Java's functions do
    /// (test_list.c, IntoListTest).
    func testThrowingKeyOrContentAbortsTheRun() throws {
        struct Refused: Error, Equatable { let item: Int }
        var refuseKey: Int?
        var refuseContent: Int?
        var received: [ListChanges<Row>] = []
        let diffuser = Diffuser<[Row]>.intoList(key: { (row: Row) throws -> Int in
            if row.id == refuseKey { throw Refused(item: row.id) }
            return row.id
        }, sameContent: { (a: Row, b: Row) throws -> Bool in
            if a.id == refuseContent { throw Refused(item: -a.id) }
            return a == b
        }) { received.append($0) }
        let a = [Row(id: 1, title: "a"), Row(id: 2, title: "b")]
        let b = [Row(id: 2, title: "b"), Row(id: 1, title: "a")]
        refuseKey = 1
        diffuser.run(a)
        XCTAssertEqual(received.count, 1, "the first run asks no key")
        XCTAssertThrowsError(try diffuser.tryRun(b)) { XCTAssertEqual($0 as? Refused, Refused(item: 1)) }
        refuseKey = nil
        refuseContent = 2
        XCTAssertThrowsError(try diffuser.tryRun(b)) { XCTAssertEqual($0 as? Refused, Refused(item: -2)) }
        XCTAssertEqual(received.count, 1, "no sink call after a failure")
        refuseContent = nil
        try diffuser.tryRun(b)
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(received[1].old, a, "diffed from the list applied last")
        XCTAssertEqual(received[1].diff.moves.count, 1)
    }

    /// The key and content functions, called in the core's order: Java's `intoList`
    /// checks the same log for the same lists (IntoListTest.theCoreAsksInItsOrder).
    func testKeyCallsInTheCoresOrder() {
        struct Named { var name: String; var key: String }
        func named(_ list: String, _ keys: String...) -> [Named] { keys.map { Named(name: list + $0, key: $0) } }
        var log: [String] = []
        let diffuser = Diffuser<[Named]>.intoList(key: { (item: Named) -> String in
            log.append("k:\(item.name)")
            return item.key
        }, sameContent: { x, y in
            log.append("c:\(x.name),\(y.name)")
            return true
        }) { _ in log.append("sink") }
        diffuser.run(named("a", "1", "2", "3"))
        XCTAssertEqual(log, ["sink"], "the first run reads no key")
        log = []
        diffuser.run(named("b", "1", "3", "2"))
        XCTAssertEqual(log.joined(separator: " "), [
            "k:a1 k:b1 c:a1,b1", "k:a2 k:b3", "k:a3 k:b2", "k:a2 k:a3 k:b3 k:b2", "c:a3,b3", "c:a2,b2", "sink",
        ].joined(separator: " "))
    }

    func testComposesWithMap() {
        var titles: [String] = []
        var lists: [[Int]] = []
        let diffuser = Diffuser<Model>(
            .map(\.title, .into { titles.append($0) }),
            .map(\.rows, .intoList(key: \.id) { lists.append($0.new.map(\.id)) })
        )
        diffuser.run(Model(title: "x", rows: [Row(id: 1, title: "a")]))
        diffuser.run(Model(title: "y", rows: [Row(id: 1, title: "a")]))
        diffuser.run(Model(title: "y", rows: [Row(id: 2, title: "b"), Row(id: 1, title: "a")]))
        XCTAssertEqual(titles, ["x", "y"])
        XCTAssertEqual(lists, [[1], [2, 1]])
    }

    /// Over a random sequence of lists, each sink call's batch turns the previous applied
    /// list into the new one, and the sink sees every change.
    func testSequenceOfRandomLists() throws {
        var g = ListRandom(seed: 4242)
        var shown: [ListItem] = []
        var calls = 0
        let diffuser = Diffuser<[ListItem]>.intoList(key: \.key) { changes in
            calls += 1
            guard changes.old == shown else { throw ListCheckFailure("old is not what was shown") }
            shown = try playUIKitBatch(changes.batch(), old: shown, new: changes.new)
        }
        var list: [ListItem] = []
        for step in 0..<500 {
            list = g.chance(0.2) ? list : ListGen.edited(list, &g, alphabet: 6, unique: false)
            try diffuser.tryRun(list)
            XCTAssertEqual(shown, list, "step \(step)")
        }
        XCTAssertGreaterThan(calls, 300)
    }
}
