import XCTest
@testable import Diffuser

/// The keyed list diff: seeded property tests against slow references, a UIKit batch
/// simulator and a script replayer, plus hand-picked cases.
final class ListDiffTests: XCTestCase {
    /// Small lists (0-64 items), small key alphabets so that duplicates are common.
    func testPropertiesSmallLists() throws {
        var duplicateCases = 0
        for seed in 0..<4000 as Range<UInt64> {
            var g = ListRandom(seed: seed)
            let (old, new) = ListGen.pair(&g)
            let diff = ListDiff(from: old, to: new, key: \.key)
            do {
                try checkListDiff(diff, old: old, new: new)
            } catch {
                XCTFail("seed \(seed): \(error)")
                return
            }
            if diff.hasDuplicates { duplicateCases += 1 }
        }
        // The generator must exercise duplicates.
        XCTAssertGreaterThan(duplicateCases, 1000)
    }

    /// Lists of unique keys: the same deletes and inserts as the standard library's
    /// `difference(from:).inferringMoves()`, and never more moves.
    func testUniqueKeysAgreeWithCollectionDifference() throws {
        for seed in 0..<2000 as Range<UInt64> {
            var g = ListRandom(seed: 10_000 + seed)
            let (old, new) = ListGen.pair(&g, unique: true)
            let diff = ListDiff(from: old, to: new, key: \.key)
            do {
                try checkListDiff(diff, old: old, new: new)
            } catch {
                XCTFail("seed \(seed): \(error)")
                return
            }
            XCTAssertFalse(diff.hasDuplicates)
            let standard = new.map(\.key).difference(from: old.map(\.key)).inferringMoves()
            var removals = Set<Int>()
            var insertions = Set<Int>()
            var standardMoves = 0
            for change in standard {
                switch change {
                case let .remove(offset, _, associated):
                    if associated == nil { removals.insert(offset) } else { standardMoves += 1 }
                case let .insert(offset, _, associated):
                    if associated == nil { insertions.insert(offset) }
                }
            }
            XCTAssertEqual(Set(diff.deletes), removals, "seed \(seed)")
            XCTAssertEqual(Set(diff.inserts), insertions, "seed \(seed)")
            XCTAssertLessThanOrEqual(diff.moves.count, standardMoves, "seed \(seed)")
        }
    }

    /// A few large lists, duplicates and not, checked the same way.
    func testPropertiesLargeLists() throws {
        for seed in 0..<24 as Range<UInt64> {
            var g = ListRandom(seed: 50_000 + seed)
            let (old, new) = ListGen.pair(&g, maxCount: 1500, unique: seed % 2 == 0)
            let diff = ListDiff(from: old, to: new, key: \.key)
            do {
                try checkListDiff(diff, old: old, new: new)
            } catch {
                XCTFail("seed \(seed): \(String(describing: error).prefix(2000))")
                return
            }
        }
    }

    /// A shuffled and a reversed large list: moves are exactly matched minus the LIS.
    func testLargePermutations() throws {
        var g = ListRandom(seed: 7)
        let old = ListGen.uniqueList(&g, count: 3000, alphabet: 3000)
        for new in [old.shuffled(using: &g), old.reversed()] {
            let diff = ListDiff(from: old, to: new, key: \.key)
            try checkListDiff(diff, old: old, new: new)
        }
        let reversed = ListDiff(from: old, to: Array(old.reversed()), key: \.key)
        XCTAssertEqual(reversed.moves.count, 2999)
    }

    func testEmptyAndUnchanged() {
        let empty = ListDiff(keys: [Int](), [])
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty.oldToNew, [])

        let list = [3, 1, 2]
        let same = ListDiff(keys: list, list)
        XCTAssertTrue(same.isEmpty)
        XCTAssertEqual(same.oldToNew, [0, 1, 2])
        XCTAssertEqual(same.newToOld, [0, 1, 2])
        XCTAssertEqual(same.script().steps, [])
        XCTAssertTrue(same.batch().isEmpty)

        let fromEmpty = ListDiff(keys: [], list)
        XCTAssertEqual(fromEmpty.inserts, [0, 1, 2])
        XCTAssertEqual(fromEmpty.script().steps, [.insert(at: 0, count: 3)])
        let toEmpty = ListDiff(keys: list, [])
        XCTAssertEqual(toEmpty.deletes, [0, 1, 2])
        XCTAssertEqual(toEmpty.script().steps, [.remove(at: 0, count: 3)])
    }

    func testOneMoveForARotation() {
        // A B C D E -> B C D E A: one move, not four.
        let diff = ListDiff(keys: Array("ABCDE"), Array("BCDEA"))
        XCTAssertEqual(diff.moves, [ListDiff.Pair(old: 0, new: 4)])
        XCTAssertEqual(diff.script().steps, [.move(from: 0, to: 4)])
        let back = ListDiff(keys: Array("BCDEA"), Array("ABCDE"))
        XCTAssertEqual(back.moves, [ListDiff.Pair(old: 4, new: 0)])
    }

    func testDuplicateKeysPairInOrder() {
        // a a b -> b a a a: the two old a's pair with the first two new a's.
        let diff = ListDiff(keys: Array("aab"), Array("baaa"))
        XCTAssertTrue(diff.hasDuplicates)
        XCTAssertEqual(diff.oldToNew, [1, 2, 0])
        XCTAssertEqual(diff.inserts, [3])
        XCTAssertEqual(diff.moves.count, 1)
    }

    func testDuplicatesInTheNewListOnly() {
        let diff = ListDiff(keys: Array("xab"), Array("ybba"))
        XCTAssertTrue(diff.hasDuplicates)
        XCTAssertEqual(diff.deletes, [0])
        XCTAssertEqual(diff.inserts, [0, 2])
        XCTAssertEqual(diff.oldToNew, [-1, 3, 1])
        // A duplicate in the common suffix pairs in place and is not looked for.
        let suffix = ListDiff(keys: Array("xab"), Array("yabb"))
        XCTAssertFalse(suffix.hasDuplicates)
        XCTAssertEqual(suffix.inserts, [0, 2])
    }

    func testMovedAndChangedItem() throws {
        let old = [ListItem(key: 1, content: 0), ListItem(key: 2, content: 0), ListItem(key: 3, content: 0)]
        let new = [ListItem(key: 3, content: 1), ListItem(key: 1, content: 0), ListItem(key: 2, content: 5)]
        let diff = ListDiff(from: old, to: new, key: \.key)
        XCTAssertEqual(diff.moves, [ListDiff.Pair(old: 2, new: 0)])
        XCTAssertEqual(diff.updates, [ListDiff.Pair(old: 2, new: 0), ListDiff.Pair(old: 1, new: 2)])

        let deleteAndInsert = diff.batch()
        XCTAssertEqual(deleteAndInsert.deletes, [2])
        XCTAssertEqual(deleteAndInsert.inserts, [0])
        XCTAssertEqual(deleteAndInsert.moves, [])
        XCTAssertEqual(deleteAndInsert.reloads, [1])

        let moveThenReload = diff.batch(movedAndChanged: .moveThenReload)
        XCTAssertEqual(moveThenReload.deletes, [])
        XCTAssertEqual(moveThenReload.moves, [ListDiff.Pair(old: 2, new: 0)])
        XCTAssertEqual(moveThenReload.reloads, [1])
        XCTAssertEqual(moveThenReload.reloadsAfterMoves, [0])

        XCTAssertEqual(diff.script().steps, [.move(from: 2, to: 0), .change(at: 0, count: 1), .change(at: 2, count: 1)])
        try checkListDiff(diff, old: old, new: new)
    }

    func testScriptMergesRuns() {
        let diff = ListDiff(keys: Array("abcdefgh"), Array("aXYdhZ"))
        // b c removed (1..<3), e f g removed (4..<7): highest run first.
        XCTAssertEqual(diff.deletes, [1, 2, 4, 5, 6])
        XCTAssertEqual(diff.script().steps, [
            .remove(at: 4, count: 3),
            .remove(at: 1, count: 2),
            .insert(at: 1, count: 2),
            .insert(at: 5, count: 1),
        ])
    }

    func testThrowingKeyAbortsTheDiff() {
        struct Boom: Error {}
        XCTAssertThrowsError(try ListDiff(from: [1, 2, 3], to: [3, 2, 1], key: { (x: Int) -> Int in
            if x == 2 { throw Boom() }
            return x
        }, sameContent: ==))
        XCTAssertThrowsError(try ListDiff(from: [1, 2, 3], to: [3, 2, 1], key: { $0 }, sameContent: { _, _ in throw Boom() }))
    }

    /// The promises the index-based form makes about its callbacks, over random pairs with
    /// duplicates and keys hashed to a few values (so that distinct keys meet in the
    /// table): each key is asked at most twice, `sameKey` gets two keys of one list
    /// earlier first, and `sameContent` is asked once per matched pair.
    func testCallbackPromises() throws {
        /// A key that hashes to one of four values and compares by its full value.
        struct Crowded: Hashable {
            let value: Int
            func hash(into hasher: inout Hasher) { hasher.combine(value % 4) }
        }
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 50_000 + seed)
            let (old, new) = ListGen.pair(&g, maxCount: 24)
            var oldAsked = [Int](repeating: 0, count: old.count)
            var newAsked = [Int](repeating: 0, count: new.count)
            var contentAsked: [ListDiff.Pair: Int] = [:]
            var misordered: [String] = []
            // A key remembers which list and place it came from, for the order check.
            var origin: [ObjectIdentifier: (list: Character, index: Int)] = [:]
            final class Tagged: Hashable {
                let key: Crowded
                init(_ key: Crowded) { self.key = key }
                static func == (a: Tagged, b: Tagged) -> Bool { a.key == b.key }
                func hash(into hasher: inout Hasher) { hasher.combine(key) }
            }
            var made: [Tagged] = []
            /// The key of item `index` of `list`, counted and remembered with its origin.
            func key(_ list: Character, _ index: Int) -> Tagged {
                if list == "o" { oldAsked[index] += 1 } else { newAsked[index] += 1 }
                let key = Tagged(Crowded(value: (list == "o" ? old : new)[index].key))
                made.append(key)
                origin[ObjectIdentifier(key)] = (list, index)
                return key
            }
            let diff = ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { key("o", $0) }, newKey: { key("n", $0) },
                sameKey: { a, b in
                    let x = origin[ObjectIdentifier(a)]!, y = origin[ObjectIdentifier(b)]!
                    if x.list == y.list && x.index >= y.index || x.list == "n" && y.list == "o" {
                        misordered.append("sameKey(\(x.list)\(x.index), \(y.list)\(y.index))")
                    }
                    return a == b
                },
                sameContent: { i, j in
                    contentAsked[ListDiff.Pair(old: i, new: j), default: 0] += 1
                    return old[i] == new[j]
                })
            try checkListDiff(diff, old: old, new: new)
            XCTAssertLessThanOrEqual(oldAsked.max() ?? 0, 2, "seed \(seed): an old key asked \(oldAsked)")
            XCTAssertLessThanOrEqual(newAsked.max() ?? 0, 2, "seed \(seed): a new key asked \(newAsked)")
            XCTAssertEqual(misordered, [], "seed \(seed)")
            XCTAssertLessThanOrEqual(contentAsked.values.max() ?? 0, 1, "seed \(seed)")
            XCTAssertEqual(contentAsked.count, diff.oldToNew.filter { $0 >= 0 }.count, "seed \(seed)")
            if oldAsked.max() ?? 0 > 2 || !misordered.isEmpty { return }
        }
    }

    /// The two cases of the review: the prefix's last item met again by the suffix, and
    /// a duplicate in the old middle.
    func testCallbackPromisesByHand() {
        var asked: [String: Int] = [:]
        _ = ListDiff(
            oldCount: 3, newCount: 2,
            oldKey: { i in asked["o\(i)", default: 0] += 1; return ["A", "X", "B"][i] },
            newKey: { j in asked["n\(j)", default: 0] += 1; return ["C", "B"][j] },
            sameContent: { _, _ in true })
        XCTAssertLessThanOrEqual(asked.values.max() ?? 0, 2, "\(asked)")
        /// A key that knows where it came from; hashed and compared by its value.
        struct Placed: Hashable {
            let value: Int, place: String
            static func == (a: Placed, b: Placed) -> Bool { a.value == b.value }
            func hash(into hasher: inout Hasher) { hasher.combine(value) }
        }
        var pairs: [String] = []
        _ = ListDiff(
            oldCount: 4, newCount: 3,
            oldKey: { Placed(value: [1, 7, 7, 2][$0], place: "o\($0)") },
            newKey: { Placed(value: [3, 7, 4][$0], place: "n\($0)") },
            sameKey: { a, b in pairs.append("\(a.place)-\(b.place)"); return a == b },
            sameContent: { _, _ in true })
        XCTAssertTrue(pairs.contains("o1-o2"), "\(pairs)")
        XCTAssertFalse(pairs.contains("o2-o1"), "\(pairs)")
    }

    /// Keys and contents asked in the core's order: Java's `ListDiff.of` checks the same
    /// log for the same lists (ListDiffTest.theCoreAsksForKeysInItsOrder).
    func testKeyCallsInTheCoresOrder() {
        var log: [String] = []
        let old = ["1", "2", "3"].map { ("a" + $0, $0) }, new = ["1", "3", "2"].map { ("b" + $0, $0) }
        let diff = ListDiff(from: old, to: new, key: { (item: (String, String)) -> String in
            log.append("k:\(item.0)")
            return item.1
        }, sameContent: { x, y in
            log.append("c:\(x.0),\(y.0)")
            return true
        })
        XCTAssertEqual(log.joined(separator: " "),
                       "k:a1 k:b1 c:a1,b1 k:a2 k:b3 k:a3 k:b2 k:a2 k:a3 k:b3 k:b2 c:a3,b3 c:a2,b2")
        XCTAssertEqual(diff.moves.count, 1)
    }

    func testIndexBasedEntry() {
        let oldKeys: [UInt64] = [10, 20, 30, 40]
        let newKeys: [UInt64] = [40, 10, 30, 50]
        let oldPrints: [UInt64] = [1, 1, 1, 1]
        let newPrints: [UInt64] = [1, 2, 1, 1]
        let diff = ListDiff(
            oldCount: 4, newCount: 4,
            oldKey: { oldKeys[$0] }, newKey: { newKeys[$0] },
            sameContent: { oldPrints[$0] == newPrints[$1] })
        XCTAssertEqual(diff.deletes, [1])
        XCTAssertEqual(diff.inserts, [3])
        XCTAssertEqual(diff.moves, [ListDiff.Pair(old: 3, new: 0)])
        XCTAssertEqual(diff.updates, [ListDiff.Pair(old: 0, new: 1)])
    }

    func testIdentifiable() {
        struct Row: Identifiable, Equatable { var id: String; var title: String }
        let diff = ListDiff(
            from: [Row(id: "a", title: "A"), Row(id: "b", title: "B")],
            to: [Row(id: "b", title: "B!"), Row(id: "a", title: "A")])
        XCTAssertEqual(diff.moves.count, 1)
        XCTAssertEqual(diff.updates, [ListDiff.Pair(old: 1, new: 0)])
    }
}

import Testing

/// Counts a diff cannot have stop the program with a message, in every build: each case
/// runs in a child process.
@Suite struct ListDiffCountTests {
    @Test func aNegativeCountStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ListDiff(oldCount: -1, newCount: 0, oldKey: { $0 }, newKey: { $0 }, sameContent: { _, _ in true })
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("ListDiff: negative count"))
    }

    @Test func aCountPastTheBoundStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ListDiff(oldCount: 0, newCount: Int(Int32.max), oldKey: { $0 }, newKey: { $0 },
                         sameContent: { _, _ in true })
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("ListDiff: list too long"))
    }
}
