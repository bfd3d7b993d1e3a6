import XCTest
@testable import Diffuser

/// Sections diffed in one call, over seeded random sections: the sections' diff and each
/// section's item diff are `ListModel`'s, the batch is ordered as `ListSectionsBatch`
/// documents and plays to the new sections, the scripts replay, and
/// `dfs_list_sections_diff_compute` gives the same, with contents by the callback and by
/// fingerprints.
final class ListSectionsPropertyTests: XCTestCase {
    typealias Section = ListSectionsTests.Section

    func testSectionsMatchTheModelAndC() throws {
        var sectionMoves = 0
        var itemMoves = 0
        for seed in 0..<2000 as Range<UInt64> {
            var g = ListRandom(seed: 300_000 + seed)
            let (old, new) = ListSectionsTests.sections(&g)
            let context = "seed \(seed): \(old) -> \(new)"
            let diff = ListSectionsTests.diff(old, new)
            do {
                try checkAgainstTheModel(diff, old: old, new: new)
                for mode in [ListBatch.MovedAndChanged.deleteAndInsert, .moveThenReload] {
                    let batch = diff.batch(movedAndChanged: mode)
                    try checkOrder(batch)
                    let shown = try ListSectionsTests.playUIKitSectionsBatch(batch, old: old, new: new)
                    guard shown == new else { throw ListCheckFailure("batch \(mode) shows \(shown)\n\(batch)") }
                    sectionMoves += batch.sectionMoves.count
                    itemMoves += batch.itemMoves.count
                }
                try checkScripts(diff, old: old, new: new)
                try checkC(diff, old: old, new: new, flags: UInt32(seed % 8))
            } catch {
                return XCTFail("\(context)\n\(error)")
            }
        }
        XCTAssertGreaterThan(sectionMoves, 50)
        XCTAssertGreaterThan(itemMoves, 50)
    }

    /// The sections as a list of their heads, and each new section's items against those
    /// of the old section paired with it (none for a new section).
    func checkAgainstTheModel(_ diff: ListSectionsDiff, old: [Section], new: [Section]) throws {
        let sections = ListModel.diff(old.map(\.head), new.map(\.head))
        guard diff.sections == sections else { throw ListCheckFailure("sections \(diff.sections)\nwant \(sections)") }
        guard diff.items.count == new.count else { throw ListCheckFailure("\(diff.items.count) item diffs") }
        for j in new.indices {
            let o = diff.sections.newToOld[j]
            let items = ListModel.diff(o >= 0 ? old[o].items : [], new[j].items)
            guard diff.items[j] == items else { throw ListCheckFailure("items of \(j): \(diff.items[j])\nwant \(items)") }
        }
        guard diff.hasDuplicates == (sections.hasDuplicates || diff.items.contains { $0.hasDuplicates }),
              diff.isEmpty == (old == new)
        else { throw ListCheckFailure("hasDuplicates \(diff.hasDuplicates), isEmpty \(diff.isEmpty)") }
    }

    /// Every index list of the batch ascending, as `ListSectionsBatch` documents (moves by
    /// their new index).
    func checkOrder(_ batch: ListSectionsBatch) throws {
        func ascending<T: Comparable>(_ a: [T]) -> Bool { zip(a, a.dropFirst()).allSatisfy { $0 < $1 } }
        guard ascending(batch.sectionDeletes), ascending(batch.sectionInserts), ascending(batch.sectionMoves.map(\.new)),
              ascending(batch.sectionReloads), ascending(batch.sectionReloadsAfterMoves),
              ascending(batch.itemDeletes), ascending(batch.itemInserts), ascending(batch.itemReloads),
              ascending(batch.itemReloadsAfterMoves)
        else { throw ListCheckFailure("batch not ascending\n\(batch)") }
    }

    /// The sections' script rearranges whole sections; then each item script, applied to
    /// the items of its section, gives the new items.
    func checkScripts(_ diff: ListSectionsDiff, old: [Section], new: [Section]) throws {
        var shown = try playScript(diff.sections.script(), old: old, new: new)
        for j in shown.indices {
            let o = diff.sections.newToOld[j]
            shown[j].items = try playScript(diff.items[j].script(), old: o >= 0 ? old[o].items : [], new: new[j].items)
        }
        guard shown == new else { throw ListCheckFailure("scripts give \(shown)") }
    }

    /// C gives the same diffs, scripts and batch under `flags`, with either kind of contents.
    func checkC(_ diff: ListSectionsDiff, old: [Section], new: [Section], flags: UInt32) throws {
        let mode: ListBatch.MovedAndChanged = flags & 2 != 0 ? .moveThenReload : .deleteAndInsert
        let want = CSectionsDiff(
            sections: diff.sections, items: diff.items,
            scripts: flags & 4 != 0 ? [diff.sections.script().steps] + diff.items.map { $0.script().steps }
                                    : [nil] + diff.items.map { _ in nil },
            hasDuplicates: diff.hasDuplicates,
            batch: flags & 3 != 0 ? diff.batch(movedAndChanged: mode) : nil)
        for callback in [true, false] {
            let c = try CSectionsDiff.compute(old, new, callback: callback, flags: flags)
            guard c == want else { throw ListCheckFailure("C (callback \(callback), flags \(flags))\n\(c)\nwant \(want)") }
        }
    }
}
