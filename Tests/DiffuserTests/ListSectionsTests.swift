import XCTest
@testable import Diffuser

/// Sections diffed in one call: the sections' own diff, each section's item diff, and the
/// batch in UIKit's coordinates, played by a simulator.
final class ListSectionsTests: XCTestCase {
    struct Section: Equatable, CustomStringConvertible {
        var key: Int
        var header: Int
        var items: [ListItem]
        var description: String { "\(key)'\(header)\(items)" }
        var head: ListItem { ListItem(key: key, content: header) }
    }

    static func diff(_ old: [Section], _ new: [Section]) -> ListSectionsDiff {
        ListSectionsDiff(
            from: old, to: new,
            sectionKey: \.key, sameSection: { $0.header == $1.header },
            items: \.items, itemKey: \.key, sameItem: ==)
    }

    static func sections(_ g: inout ListRandom) -> ([Section], [Section]) {
        let alphabet = [2, 4, 8, 100][g.int(0..<4)]
        var old: [Section] = []
        for _ in 0..<g.int(0...8) {
            old.append(Section(key: g.int(0..<alphabet), header: g.int(0...1), items: ListGen.list(&g, count: g.int(0...12), alphabet: [2, 5, 50][g.int(0..<3)])))
        }
        var heads = ListGen.edited(old.map(\.head), &g, alphabet: alphabet, unique: false)
        if g.chance(0.2) { heads.shuffle(using: &g) }
        // Each new section takes the items of an old section with its key, edited, or new ones.
        var pool = old
        let new = heads.map { head -> Section in
            if let k = pool.firstIndex(where: { $0.key == head.key }), !g.chance(0.1) {
                let items = pool.remove(at: k).items
                let edited = g.chance(0.5) ? items : ListGen.edited(items, &g, alphabet: 5, unique: false)
                return Section(key: head.key, header: head.content, items: edited)
            }
            return Section(key: head.key, header: head.content, items: ListGen.list(&g, count: g.int(0...12), alphabet: 5))
        }
        return (old, new)
    }

    func testProperties() throws {
        var movedSections = 0
        var itemMoves = 0
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 90_000 + seed)
            let (old, new) = Self.sections(&g)
            let diff = Self.diff(old, new)
            do {
                // The sections' own diff, and each section's items.
                try checkListDiff(diff.sections, old: old.map(\.head), new: new.map(\.head))
                XCTAssertEqual(diff.items.count, new.count)
                for (j, items) in diff.items.enumerated() {
                    let o = diff.sections.newToOld[j]
                    try checkListDiff(items, old: o >= 0 ? old[o].items : [], new: new[j].items)
                }
                for mode in [ListBatch.MovedAndChanged.deleteAndInsert, .moveThenReload] {
                    let batch = diff.batch(movedAndChanged: mode)
                    let shown = try Self.playUIKitSectionsBatch(batch, old: old, new: new)
                    guard shown == new else { throw ListCheckFailure("batch \(mode) shows \(shown)") }
                    movedSections += batch.sectionMoves.count
                    itemMoves += batch.itemMoves.count
                }
            } catch {
                XCTFail("seed \(seed): \(error)\nold \(old)\nnew \(new)")
                return
            }
            XCTAssertEqual(diff.isEmpty, old == new, "seed \(seed)")
        }
        XCTAssertGreaterThan(movedSections, 100)
        XCTAssertGreaterThan(itemMoves, 100)
    }

    func testItemsMoveWithinASection() {
        let old = [Section(key: 1, header: 0, items: [ListItem(key: 1, content: 0), ListItem(key: 2, content: 0)])]
        let new = [Section(key: 1, header: 0, items: [ListItem(key: 2, content: 0), ListItem(key: 1, content: 0)])]
        let batch = Self.diff(old, new).batch()
        XCTAssertEqual(batch.itemMoves.count, 1)
        XCTAssertEqual(batch.sectionMoves, [])
        XCTAssertEqual(batch.sectionReloads, [])
    }

    /// The order in which the diff calls its functions: the sections first (keys as
    /// `ListDiff` asks them, `sameSection` per pair), then for each new section its
    /// paired old section's items, its own, and their diff. `items` is not called for a
    /// deleted section (B). The C API's `dfs_list_sections_diff_read`
    /// (test_list_sections.c) and Java's `ListSectionsDiff.of` (ListSectionsDiffTest)
    /// check the same log for the same lists.
    func testCallOrder() {
        struct Named { let list: String; let key: Int; let items: [Int]; let changed: [Int] }
        func named(_ list: String, _ key: Character, _ items: [Int], changed: [Int] = []) -> Named {
            Named(list: list, key: Int(key.asciiValue!), items: items, changed: changed)
        }
        func name(_ s: Named) -> String { s.list + String(UnicodeScalar(UInt8(s.key))) }
        struct Item { let section: String; let key: Int; let changed: Bool }
        // A [1 2] B [3] C [4 5] -> A [2 1] D [6] C [4 5], C's 5 changed.
        let old = [named("o", "A", [1, 2]), named("o", "B", [3]), named("o", "C", [4, 5])]
        let new = [named("n", "A", [2, 1]), named("n", "D", [6]), named("n", "C", [4, 5], changed: [5])]
        var log: [String] = []
        let diff = ListSectionsDiff(
            from: old, to: new,
            sectionKey: { s -> Int in log.append("sk(\(name(s)))"); return s.key },
            sameSection: { a, b in log.append("ss(\(name(a)),\(name(b)))"); return true },
            items: { s -> [Item] in
                log.append("items(\(name(s)))")
                return s.items.map { Item(section: name(s), key: $0, changed: s.changed.contains($0)) }
            },
            itemKey: { i -> Int in log.append("ik(\(i.section)\(i.key))"); return i.key },
            sameItem: { a, b in log.append("si(\(a.section)\(a.key),\(b.section)\(b.key))"); return a.changed == b.changed })
        XCTAssertEqual(log.joined(separator: " "), [
            "sk(oA) sk(nA) ss(oA,nA) sk(oB) sk(nD) sk(oC) sk(nC) ss(oC,nC) sk(oB) sk(nD)",
            "items(oA) items(nA) ik(oA1) ik(nA2) ik(oA2) ik(nA1) ik(oA1) ik(oA2) ik(nA2) ik(nA1) si(oA2,nA2) si(oA1,nA1)",
            "items(nD)",
            "items(oC) items(nC) ik(oC4) ik(nC4) si(oC4,nC4) ik(oC5) ik(nC5) si(oC5,nC5)",
        ].joined(separator: " "))
        XCTAssertEqual(diff.sections.deletes, [1])
        XCTAssertEqual(diff.sections.inserts, [1])
        XCTAssertEqual(diff.items[0].moves.count, 1)
        XCTAssertEqual(diff.items[2].updates, [ListDiff.Pair(old: 1, new: 1)])
    }

    /// Plays a sections batch by UIKit's rules and returns what the view shows.
    static func playUIKitSectionsBatch(_ batch: ListSectionsBatch, old: [Section], new: [Section]) throws -> [Section] {
        // The sections themselves, as a list batch whose reloads refresh the whole section.
        let sectionBatch = ListBatch(
            deletes: batch.sectionDeletes, inserts: batch.sectionInserts, moves: batch.sectionMoves,
            reloads: batch.sectionReloads, reloadsAfterMoves: batch.sectionReloadsAfterMoves)
        let oldTagged = old.enumerated().map { (old: $0.offset, section: $0.element) }
        let newTagged = new.map { (old: -1, section: $0) }
        // Keep track of where each old section lands to apply its item changes.
        let shown = try playUIKitBatch(sectionBatch, old: oldTagged.map { Tagged($0.old, $0.section) }, new: newTagged.map { Tagged($0.old, $0.section) })

        var itemOps = batch.itemDeletes.count + batch.itemInserts.count + batch.itemMoves.count
            + batch.itemReloads.count + batch.itemReloadsAfterMoves.count
        let deleted = Set(batch.sectionDeletes)
        let reloaded = Set(batch.sectionReloads)
        let movedFrom = Set(batch.sectionMoves.map(\.old))
        var result: [Section] = []
        for (j, tagged) in shown.enumerated() {
            var section = tagged.section
            let o = tagged.old
            if o >= 0 && !deleted.contains(o) && !reloaded.contains(o) && !movedFrom.contains(o) {
                // A section that stays: its item changes apply here.
                let items = ListBatch(
                    deletes: batch.itemDeletes.filter { $0.section == o }.map(\.item),
                    inserts: batch.itemInserts.filter { $0.section == j }.map(\.item),
                    moves: batch.itemMoves.filter { $0.old.section == o }.map {
                        ListDiff.Pair(old: $0.old.item, new: $0.new.item)
                    },
                    reloads: batch.itemReloads.filter { $0.section == o }.map(\.item),
                    reloadsAfterMoves: batch.itemReloadsAfterMoves.filter { $0.section == j }.map(\.item))
                guard batch.itemMoves.filter({ $0.old.section == o }).allSatisfy({ $0.new.section == j }) else {
                    throw ListCheckFailure("item moved out of section \(o)")
                }
                itemOps -= items.deletes.count + items.inserts.count + items.moves.count + items.reloads.count
                    + items.reloadsAfterMoves.count
                section.items = try playUIKitBatch(items, old: section.items, new: new[j].items)
            }
            result.append(section)
        }
        guard itemOps == 0 else { throw ListCheckFailure("\(itemOps) item changes in sections that do not stay") }
        return result
    }

    struct Tagged {
        var old: Int
        var section: Section
        init(_ old: Int, _ section: Section) {
            self.old = old
            self.section = section
        }
    }
}
