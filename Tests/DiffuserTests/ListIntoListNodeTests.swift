import XCTest
@_spi(Bindings) @testable import Diffuser

/// The core parts the bindings' `intoList` stands on: `ListDiff` with keys compared by
/// `sameKey` (only hashes in the keys, as a binding's key objects are), and the `intoList`
/// node over lists read through functions of an index (`dfs_diffuser_into_list`), with its
/// order of calls, what it keeps, and failures.
final class ListIntoListNodeTests: XCTestCase {
    struct Failure: Error, Equatable {
        let place: String
    }

    /// A key that is only a hash of what identifies an item, compared through the item.
    struct HashedKey: Hashable {
        let hash: Int
        let list: Int
        let index: Int
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// Keys that collide (`key % 3`) compared exactly by `sameKey` give the diff of the
    /// exact keys: the same pairing, moves, updates and duplicates.
    func testHashedKeysWithSameKeyGiveTheExactDiff() {
        var g = ListRandom(seed: 77)
        for _ in 0..<2_000 {
            let alphabet = g.int(1...10)
            let old = ListGen.list(&g, count: g.int(0...40), alphabet: alphabet)
            let new = g.chance(0.1) ? old : ListGen.edited(old, &g, alphabet: alphabet, unique: false)
            let lists = [old, new]
            let exact = ListDiff(from: old, to: new, key: \.key, sameContent: ==)
            var sameKeyCalls = 0
            let hashed = ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { HashedKey(hash: old[$0].key % 3, list: 0, index: $0) },
                newKey: { HashedKey(hash: new[$0].key % 3, list: 1, index: $0) },
                sameKey: { a, b in
                    sameKeyCalls += 1
                    return a.hash == b.hash && lists[a.list][a.index].key == lists[b.list][b.index].key
                },
                sameContent: { old[$0] == new[$1] })
            XCTAssertEqual(hashed, exact, "\(old) -> \(new)")
            if !old.isEmpty && !new.isEmpty { XCTAssertGreaterThan(sameKeyCalls, 0) }
        }
    }

    func testThrowingSameKeyAbortsTheDiff() {
        let old = [1, 2, 3, 4]
        let new = [4, 3, 2, 1]
        var calls = 0
        XCTAssertThrowsError(try ListDiff(
            oldCount: old.count, newCount: new.count,
            oldKey: { old[$0] }, newKey: { new[$0] },
            sameKey: { a, b in
                calls += 1
                if calls == 3 { throw Failure(place: "sameKey") }
                return a == b
            },
            sameContent: { _, _ in true })
        ) { XCTAssertEqual($0 as? Failure, Failure(place: "sameKey")) }
        XCTAssertEqual(calls, 3, "nothing after the failure")
    }

    /// A list stored elsewhere, named for the log: the node reads it through functions.
    final class Stored {
        let name: String
        let keys: [Int]
        let contents: [Int]
        init(_ name: String, _ keys: [Int], _ contents: [Int]? = nil) {
            self.name = name
            self.keys = keys
            self.contents = contents ?? keys.map { _ in 0 }
        }
    }

    final class Recorder {
        var log: [String] = []
        var failAt = 0
        var calls = 0
        var kept: [String] = []
        var applied: [(old: String?, new: String, diff: ListDiff)] = []

        func call(_ entry: String) throws {
            log.append(entry)
            calls += 1
            if calls == failAt { throw Failure(place: entry) }
        }
    }

    func node(_ r: Recorder) -> Diffuser<Stored> {
        .intoList(
            count: { list in try r.call("count(\(list.name))"); return list.keys.count },
            key: { list, i in try r.call("key(\(list.name)\(i))"); return list.keys[i] },
            sameKey: { $0 == $1 },
            sameContent: { old, i, new, j in
                try r.call("same(\(old.name)\(i),\(new.name)\(j))")
                return old.contents[i] == new.contents[j]
            },
            keep: { list in try r.call("keep(\(list.name))"); r.kept.append(list.name); return list },
            counted: { old, new in try r.call("counted(\(old),\(new))") }
        ) { old, new, diff in
            try r.call("sink(\(new.name))")
            r.applied.append((old?.name, new.name, diff))
        }
    }

    func testOrderOfCallsAndWhatIsKept() throws {
        let r = Recorder()
        let diffuser = node(r)
        try diffuser.tryRun(Stored("E", []))
        XCTAssertEqual(r.log, ["count(E)", "counted(0,0)", "keep(E)", "sink(E)"],
                       "a first run reads no key and calls the sink")
        r.log = []
        try diffuser.tryRun(Stored("F", []))
        XCTAssertEqual(r.log, ["count(E)", "count(F)", "counted(0,0)", "keep(F)"], "an empty diff: kept, no sink call")
        r.log = []
        try diffuser.tryRun(Stored("G", [10, 20, 30]))
        r.log = []
        try diffuser.tryRun(Stored("B", [10, 30, 20, 40], [0, 1, 0, 0]))
        XCTAssertEqual(r.log, [
            "count(G)", "count(B)", "counted(3,4)", "key(G0)", "key(B0)", "same(G0,B0)", "key(G1)", "key(B1)", "key(G2)", "key(B3)",
            "key(G1)", "key(G2)", "key(B1)", "key(B2)", "key(B3)", "same(G2,B1)", "same(G1,B2)", "keep(B)", "sink(B)",
        ], "the order the C test checks too (test_list.c)")
        XCTAssertEqual(r.applied.map(\.old), [nil, "F", "G"])
    }

    /// Each call of a run failing in turn: the run throws that failure, nothing is called
    /// after it, and the next run is diffed from the list the sink applied last.
    func testEveryFailureKeepsTheAppliedList() throws {
        let a = Stored("A", [1, 2, 3, 4, 5])
        let b = Stored("B", [1, 3, 2, 9, 4, 5], [0, 1, 0, 0, 0, 2])
        let c = Stored("C", [5, 1, 2, 3, 4])
        let reference = Recorder()
        let full = node(reference)
        try full.tryRun(a)
        reference.log = []
        try full.tryRun(b)
        let callsOfB = reference.log
        for failAt in 1...callsOfB.count {
            let r = Recorder()
            let diffuser = node(r)
            try diffuser.tryRun(a)
            r.log = []
            r.failAt = r.calls + failAt
            XCTAssertThrowsError(try diffuser.tryRun(b)) {
                XCTAssertEqual($0 as? Failure, Failure(place: callsOfB[failAt - 1]))
            }
            XCTAssertEqual(r.log, Array(callsOfB.prefix(failAt)), "nothing after call \(failAt)")
            r.failAt = 0
            try diffuser.tryRun(c)
            XCTAssertEqual(r.applied.last?.old, "A", "diffed from A after a failure at \(callsOfB[failAt - 1])")
        }
        // A failed first run: the next one is a first run again.
        let r = Recorder()
        let diffuser = node(r)
        r.failAt = 3
        XCTAssertThrowsError(try diffuser.tryRun(a))
        try diffuser.tryRun(b)
        XCTAssertEqual(r.applied.count, 1)
        XCTAssertNil(r.applied[0].old)
        XCTAssertEqual(r.applied[0].diff.inserts, Array(0..<6))
    }
}
