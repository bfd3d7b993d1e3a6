import XCTest
@_spi(Bindings) @testable import Diffuser
import DiffuserC
import CDiffuserFFI

/// The keyed list diff over seeded random lists, compared entry for entry with
/// `ListModel` (conformance/README.md 10.2-10.5), and the other ways to get it (the
/// index-based and keys-only forms, `dfs_list_diff_compute`, `dfs_list_diff_read`, the
/// `intoList` sinks of Swift and C) compared with it: every implementation must give the
/// same pairing, moves, batches and scripts.
final class ListPropertyTests: XCTestCase {
    /// Small lists, so that edge cases (empty sides, one key, prefix meets suffix) are
    /// frequent and the slow model stays fast.
    static func pair(_ g: inout ListRandom) -> ([ListItem], [ListItem]) {
        let (old, new) = ListGen.pair(&g, maxCount: 10)
        return g.chance(0.1) ? (new, old) : (old, new)
    }

    /// The diff, its batches and its script are the model's; they are valid (UIKit, script
    /// replay, the fewest moves for the pairing: `checkListDiff`); the index-based and
    /// keys-only forms give the same diff.
    func testSwiftMatchesTheModel() throws {
        for seed in 0..<5000 as Range<UInt64> {
            var g = ListRandom(seed: 200_000 + seed)
            let (old, new) = Self.pair(&g)
            let context = "seed \(seed): \(old) -> \(new)"
            let diff = ListDiff(from: old, to: new, key: \.key, sameContent: ==)
            let model = ListModel.diff(old, new)
            guard diff == model else { return XCTFail("\(context)\n got \(diff)\nwant \(model)") }
            for mode in [ListBatch.MovedAndChanged.deleteAndInsert, .moveThenReload] {
                let batch = diff.batch(movedAndChanged: mode)
                let want = ListModel.batch(diff, movedAndChanged: mode)
                guard batch == want else { return XCTFail("\(context)\n\(mode) \(batch)\nwant \(want)") }
            }
            let script = diff.script().steps
            guard script == ListModel.script(diff) else {
                return XCTFail("\(context)\nscript \(script)\nwant \(ListModel.script(diff))")
            }
            do { try checkListDiff(diff, old: old, new: new) } catch { return XCTFail("\(context): \(error)") }
            XCTAssertEqual(ListDiff(oldCount: old.count, newCount: new.count, oldKey: { old[$0].key },
                                    newKey: { new[$0].key }, sameContent: { old[$0] == new[$1] }), diff, context)
            var keysOnly = diff
            keysOnly.updates = []
            XCTAssertEqual(ListDiff(keys: old.map(\.key), new.map(\.key)), keysOnly, context)
            XCTAssertEqual(diff.isEmpty, old == new, context)
        }
    }

    /// With unique keys the moves are the fewest over any way of reordering: the matched
    /// items less a longest common subsequence of the two key lists. (With duplicates the
    /// pairing is fixed first, and the moves are the fewest for it: `checkListDiff`.)
    func testFewestMovesWithUniqueKeys() {
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 210_000 + seed)
            let (old, new) = ListGen.pair(&g, maxCount: 12, unique: true)
            let diff = ListDiff(from: old, to: new, key: \.key, sameContent: ==)
            let fewest = diff.matchedCount - ListModel.lcsLength(old.map(\.key), new.map(\.key))
            guard diff.moves.count == fewest else {
                return XCTFail("seed \(seed): \(old) -> \(new): \(diff.moves.count) moves, \(fewest) possible")
            }
        }
    }

    /// `dfs_list_diff_compute` gives the Swift diff, batch and script, with contents by a
    /// callback, by fingerprints, and without contents (no updates), under every flag set.
    func testCComputeMatchesSwift() throws {
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 220_000 + seed)
            let (old, new) = Self.pair(&g)
            let flags = UInt32(seed % 8)
            let context = "seed \(seed) flags \(flags): \(old) -> \(new)"
            for contents in CListDiff.Contents.allCases {
                var want = ListDiff(from: old, to: new, key: \.key, sameContent: ==)
                if contents == .none { want.updates = [] }
                let c = try CListDiff.compute(old, new, contents: contents, flags: flags)
                guard c == Self.expected(want, flags: flags) else { return XCTFail("\(context) \(contents)\n C \(c)\n S \(want)") }
            }
        }
    }

    /// `dfs_list_diff_read` gives the Swift diff, with exact keys and with keys that
    /// collide (only a hash, `same_key` deciding), contents by fingerprints or callback.
    func testCReadMatchesSwift() throws {
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 230_000 + seed)
            let (old, new) = Self.pair(&g)
            let want = Self.expected(ListDiff(from: old, to: new, key: \.key, sameContent: ==), flags: 5)
            for (hashModulus, fingerprints) in [(0, false), (0, true), (2, false), (1, true)] {
                let c = try CListDiff.read(old, new, hashModulus: hashModulus, fingerprints: fingerprints, flags: 5)
                guard c == want else {
                    return XCTFail("seed \(seed) hash % \(hashModulus) fingerprints \(fingerprints): \(old) -> \(new)\n C \(c)\n S \(want)")
                }
            }
        }
    }

    /// What C should give for `diff` under `flags`.
    static func expected(_ diff: ListDiff, flags: UInt32) -> CListDiff {
        let mode: ListBatch.MovedAndChanged = flags & 2 != 0 ? .moveThenReload : .deleteAndInsert
        return CListDiff(diff: diff, batch: flags & 3 != 0 ? diff.batch(movedAndChanged: mode) : nil,
                         script: flags & 4 != 0 ? diff.script().steps : nil)
    }

    /// A sequence of lists whose next one is often a reordering or the same.
    static func next(_ g: inout ListRandom, after current: [ListItem]) -> [ListItem] {
        if g.chance(0.15) { return current }
        if g.chance(0.3) { return current.shuffled(using: &g) }
        return pair(&g).1
    }

    /// Swift `intoList`: the sink gets the diff from the list last applied (none at first),
    /// and is not called when nothing changed; a failing sink leaves that list applied.
    func testIntoListSinkGetsTheDiffFromTheAppliedList() throws {
        for seed in 0..<300 as Range<UInt64> {
            var g = ListRandom(seed: 240_000 + seed)
            var applied: [ListItem]?
            var got: ListChanges<ListItem>?
            var fail = false
            let node = Diffuser<[ListItem]>.intoList(key: \.key, sameContent: ==) { changes in
                got = changes
                if fail { throw ListCheckFailure("sink") }
            }
            var list: [ListItem] = []
            for step in 0..<30 {
                list = Self.next(&g, after: list)
                got = nil
                fail = g.chance(0.15)
                let context = "seed \(seed) step \(step): \(applied ?? []) -> \(list)"
                var threw = false
                do { try node.tryRun(list) } catch { threw = true }
                let want = ListDiff(from: applied ?? [], to: list, key: \.key, sameContent: ==)
                if applied != nil && want.isEmpty {
                    guard got == nil, !threw else { return XCTFail("\(context): sink called for an empty diff") }
                    applied = list
                    continue
                }
                guard let changes = got else { return XCTFail("\(context): sink not called") }
                guard changes.diff == want, changes.old == (applied ?? []), changes.new == list,
                      changes.isFirst == (applied == nil)
                else { return XCTFail("\(context): sink got \(changes.diff) first \(changes.isFirst), want \(want)") }
                XCTAssertEqual(threw, fail, context)
                if !fail { applied = list }
            }
        }
    }

    /// What the C sink of one run saw.
    final class SinkLog {
        var calls: [(diff: CListDiff, new: [ListItem], isFirst: Bool)] = []
        var fail = false
        var flags: UInt32 = 0
    }

    /// `dfs_diffuser_into_list`: the sink gets what `dfs_list_diff_compute` gives from the
    /// list last applied, with exact or colliding keys, as Swift's `intoList` does.
    func testCIntoListSinkGetsTheComputedDiff() throws {
        for seed in 0..<200 as Range<UInt64> {
            var g = ListRandom(seed: 250_000 + seed)
            let log = SinkLog()
            log.flags = [0, 1, 2, 5, 6, 7][Int(seed) % 6]
            let hashModulus = [0, 0, 2, 1][Int(seed) % 4]
            var reader = listReader(hashModulus: hashModulus, fingerprints: seed % 3 == 0)
            let sink: dfs_list_sink_fn = { diff, newList, isFirst, ctx in
                let log = Unmanaged<SinkLog>.fromOpaque(ctx!).takeUnretainedValue()
                log.calls.append((CListDiff(diff!.pointee, flags: log.flags), ListBox.from(newList).items, isFirst != 0))
                return log.fail ? 1 : 0
            }
            var node: OpaquePointer?
            XCTAssertEqual(DiffuserC.dfs_diffuser_into_list(
                DiffuserC.dfs_type_pointer(), &reader, listReaderContext(hashModulus: hashModulus), nil, log.flags,
                sink, Unmanaged.passUnretained(log).toOpaque(), nil, &node), DFS_OK)
            defer { _ = DiffuserC.dfs_diffuser_release(node) }
            var boxes: [ListBox] = []
            var applied: [ListItem]?
            var list: [ListItem] = []
            for step in 0..<25 {
                list = Self.next(&g, after: list)
                let box = ListBox(list)
                boxes.append(box)
                log.calls = []
                log.fail = g.chance(0.15)
                let context = "seed \(seed) step \(step) flags \(log.flags) hash % \(hashModulus): \(applied ?? []) -> \(list)"
                let status = DiffuserC.dfs_diffuser_run(node, box.pointer)
                let want = try CListDiff.compute(applied ?? [], list, contents: .callback, flags: log.flags)
                if applied != nil && want.diff.isEmpty {
                    guard log.calls.isEmpty, status == DFS_OK else { return XCTFail("\(context): sink called for an empty diff") }
                    applied = list
                    continue
                }
                guard log.calls.count == 1 else { return XCTFail("\(context): \(log.calls.count) sink calls") }
                let call = log.calls[0]
                guard call.diff == want, call.new == list, call.isFirst == (applied == nil) else {
                    return XCTFail("\(context): sink got \(call.diff) first \(call.isFirst), want \(want)")
                }
                XCTAssertEqual(status == DFS_OK, !log.fail, context)
                if !log.fail { applied = list }
            }
        }
    }

    /// A key whose hash is `value % modulus`: distinct keys meet in the hash table.
    struct PoorlyHashedKey: Hashable {
        var value: Int
        var modulus: Int
        static func == (a: Self, b: Self) -> Bool { a.value == b.value }
        func hash(into hasher: inout Hasher) { hasher.combine(value % modulus) }
    }

    /// Lists of up to 120 items give the model's diff, with keys that hash poorly or are
    /// strings too, and C and Swift agree on them.
    func testLargerListsAndPoorHashes() throws {
        for seed in 0..<200 as Range<UInt64> {
            var g = ListRandom(seed: 260_000 + seed)
            let alphabet = [1, 3, 10, 60, 500][g.int(0...4)]
            let old = ListGen.list(&g, count: g.int(0...120), alphabet: alphabet)
            let new = g.chance(0.3) ? old.shuffled(using: &g) : ListGen.edited(old, &g, alphabet: alphabet, unique: false)
            let context = "seed \(seed): \(old) -> \(new)"
            let model = ListModel.diff(old, new)
            let diff = ListDiff(from: old, to: new, key: \.key, sameContent: ==)
            guard diff == model else { return XCTFail("\(context)\n got \(diff)\nwant \(model)") }
            for modulus in [1, 2, 7] {
                let poor = ListDiff(from: old, to: new, key: { PoorlyHashedKey(value: $0.key, modulus: modulus) }, sameContent: ==)
                guard poor == model else { return XCTFail("\(context): hash % \(modulus) gives \(poor)") }
            }
            XCTAssertEqual(ListDiff(from: old, to: new, key: { "k\($0.key)" }, sameContent: ==), model, context)
            XCTAssertEqual(try CListDiff.compute(old, new, contents: .callback, flags: 5), Self.expected(diff, flags: 5), context)
            do { try checkListDiff(diff, old: old, new: new) } catch { return XCTFail("\(context): \(error)") }
        }
    }

    /// `ListDiff(from:to:key:sameContent:)` calls `key` at most twice per item and
    /// `sameContent` exactly once per matched pair, as it documents.
    func testKeyAndContentCallCounts() {
        for seed in 0..<3000 as Range<UInt64> {
            var g = ListRandom(seed: 270_000 + seed)
            let (old, new) = Self.pair(&g)
            // Items tagged with their list and index, so that calls count per item.
            let tagged = [old, new].enumerated().map { list in
                list.element.enumerated().map { (list: list.offset, index: $0.offset, item: $0.element) }
            }
            var keyCalls = [[Int](repeating: 0, count: old.count), [Int](repeating: 0, count: new.count)]
            var contentCalls: [ListDiff.Pair: Int] = [:]
            let diff = ListDiff(from: tagged[0], to: tagged[1], key: { x -> Int in
                keyCalls[x.list][x.index] += 1
                return x.item.key
            }, sameContent: { a, b in
                contentCalls[ListDiff.Pair(old: a.index, new: b.index), default: 0] += 1
                return a.item == b.item
            })
            let context = "seed \(seed): \(old) -> \(new)"
            let matched = new.indices.filter { diff.newToOld[$0] >= 0 }.map { ListDiff.Pair(old: diff.newToOld[$0], new: $0) }
            XCTAssertEqual(contentCalls, Dictionary(uniqueKeysWithValues: matched.map { ($0, 1) }), context)
            guard (keyCalls[0] + keyCalls[1]).allSatisfy({ $0 <= 2 }) else {
                return XCTFail("\(context): key calls per item \(keyCalls)")
            }
        }
    }
}
