import XCTest
@testable import Diffuser

// Helpers of the list diff tests: seeded generators, a UIKit batch simulator, a script
// replayer and slow reference algorithms.

/// SplitMix64: a seeded generator, so that every property case replays.
struct ListRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x2545_F491_4F6C_DD1D &+ 1 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
}

/// A list item: identified by `key`, with `content` that may change.
struct ListItem: Equatable, Hashable, CustomStringConvertible {
    var key: Int
    var content: Int
    var description: String { content == 0 ? "\(key)" : "\(key)'\(content)" }
}

enum ListGen {
    /// A random list of `count` items with keys drawn from `0..<alphabet`.
    static func list(_ g: inout ListRandom, count: Int, alphabet: Int) -> [ListItem] {
        (0..<count).map { _ in ListItem(key: g.int(0..<max(alphabet, 1)), content: g.chance(0.2) ? g.int(1...3) : 0) }
    }

    /// A list of `count` distinct keys taken from `0..<alphabet` (alphabet >= count).
    static func uniqueList(_ g: inout ListRandom, count: Int, alphabet: Int) -> [ListItem] {
        var keys = Array(0..<max(alphabet, count))
        keys.shuffle(using: &g)
        return keys.prefix(count).map { ListItem(key: $0, content: g.chance(0.2) ? g.int(1...3) : 0) }
    }

    /// `list` after a few random edits: deletes, inserts, moves, content changes, swaps.
    static func edited(_ list: [ListItem], _ g: inout ListRandom, alphabet: Int, unique: Bool) -> [ListItem] {
        var result = list
        var nextKey = alphabet
        let edits = g.int(0...10)
        for _ in 0..<edits {
            switch g.int(0..<6) {
            case 0 where !result.isEmpty:
                result.remove(at: g.int(0..<result.count))
            case 1:
                let key: Int
                if unique {
                    key = nextKey
                    nextKey += 1
                } else {
                    key = g.int(0..<max(alphabet, 1))
                }
                result.insert(ListItem(key: key, content: 0), at: g.int(0...result.count))
            case 2 where !result.isEmpty:
                let item = result.remove(at: g.int(0..<result.count))
                result.insert(item, at: g.int(0...result.count))
            case 3 where !result.isEmpty:
                let i = g.int(0..<result.count)
                result[i].content = g.int(0...3)
            case 4 where result.count > 1:
                result.swapAt(g.int(0..<result.count), g.int(0..<result.count))
            case 5 where result.count > 1:
                // Move a block.
                let start = g.int(0..<result.count)
                let end = min(result.count, start + g.int(1...5))
                let block = Array(result[start..<end])
                result.removeSubrange(start..<end)
                result.insert(contentsOf: block, at: g.int(0...result.count))
            default:
                break
            }
        }
        return result
    }

    /// A pair of lists for one property case, of one of several shapes.
    static func pair(_ g: inout ListRandom, maxCount: Int = 64, unique: Bool = false) -> ([ListItem], [ListItem]) {
        let alphabets = [1, 2, 3, 5, 8, 16, 64, 1000]
        let count = g.int(0...maxCount)
        let alphabet = unique ? max(count * 2, 4) + g.int(0...maxCount) : alphabets[g.int(0..<alphabets.count)]
        let old = unique ? uniqueList(&g, count: count, alphabet: alphabet) : list(&g, count: count, alphabet: alphabet)
        switch g.int(0..<10) {
        case 0:
            // Unrelated lists.
            let newCount = g.int(0...maxCount)
            return (old, unique ? uniqueList(&g, count: newCount, alphabet: alphabet) : list(&g, count: newCount, alphabet: alphabet))
        case 1:
            return (old, old.shuffled(using: &g))
        case 2:
            return (old, old.reversed())
        case 3:
            return (old, old)
        default:
            return (old, edited(old, &g, alphabet: alphabet, unique: unique))
        }
    }
}

struct ListCheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Plays a `ListBatch` by UIKit's rules (`performBatchUpdates` of a collection view whose
/// data source already holds `new`), and returns what the view shows afterwards: an item
/// not deleted, inserted or reloaded keeps its old content.
///
/// Throws where UIKit raises an exception: an index out of range, an old index used twice
/// among deletes, reloads and move sources, a new index used twice among inserts and move
/// destinations, counts that do not add up.
func playUIKitBatch<E>(_ batch: ListBatch, old: [E], new: [E]) throws -> [E] {
    let oldCount = old.count
    let newCount = new.count
    if oldCount - batch.deletes.count + batch.inserts.count != newCount {
        throw ListCheckFailure("invalid number of items: \(oldCount) - \(batch.deletes.count) + \(batch.inserts.count) != \(newCount)")
    }
    var oldUsed = [Bool](repeating: false, count: oldCount)
    func useOld(_ i: Int, _ what: String) throws {
        guard i >= 0 && i < oldCount else { throw ListCheckFailure("\(what) old index \(i) out of 0..<\(oldCount)") }
        guard !oldUsed[i] else { throw ListCheckFailure("old index \(i) used twice (\(what))") }
        oldUsed[i] = true
    }
    var newUsed = [Bool](repeating: false, count: newCount)
    func useNew(_ j: Int, _ what: String) throws {
        guard j >= 0 && j < newCount else { throw ListCheckFailure("\(what) new index \(j) out of 0..<\(newCount)") }
        guard !newUsed[j] else { throw ListCheckFailure("new index \(j) used twice (\(what))") }
        newUsed[j] = true
    }
    for i in batch.deletes { try useOld(i, "delete") }
    for i in batch.reloads { try useOld(i, "reload") }
    for move in batch.moves { try useOld(move.old, "move source") }
    for j in batch.inserts { try useNew(j, "insert") }
    for move in batch.moves { try useNew(move.new, "move destination") }

    var reloaded = [Bool](repeating: false, count: oldCount)
    for i in batch.reloads { reloaded[i] = true }
    var moveSource = [Bool](repeating: false, count: oldCount)
    for move in batch.moves { moveSource[move.old] = true }
    var deleted = [Bool](repeating: false, count: oldCount)
    for i in batch.deletes { deleted[i] = true }

    var shown = [E?](repeating: nil, count: newCount)
    for j in batch.inserts { shown[j] = new[j] }
    for move in batch.moves { shown[move.new] = old[move.old] }
    // The items that stay fill the free places in their old order.
    var slot = 0
    for i in 0..<oldCount where !deleted[i] && !moveSource[i] {
        while slot < newCount && shown[slot] != nil { slot += 1 }
        guard slot < newCount else { throw ListCheckFailure("no place left for old item \(i)") }
        shown[slot] = reloaded[i] ? new[slot] : old[i]
        slot += 1
    }
    // Reloads after the batch: new indices of moved items.
    var movedInto = Set(batch.moves.map(\.new))
    for j in batch.reloadsAfterMoves {
        guard movedInto.remove(j) != nil else { throw ListCheckFailure("reload after moves at \(j), not a moved item") }
        shown[j] = new[j]
    }
    return shown.map { $0! }
}

/// Replays a script on `old`, checking that every index is in range for the list as the
/// previous steps left it.
func playScript<E>(_ script: ListScript, old: [E], new: [E]) throws -> [E] {
    var list = old
    for step in script.steps {
        switch step {
        case let .remove(at, count):
            guard count > 0, at >= 0, at + count <= list.count else { throw ListCheckFailure("\(step) on \(list.count) items") }
            list.removeSubrange(at..<(at + count))
        case let .move(from, to):
            guard from >= 0, from < list.count, to >= 0, to < list.count else { throw ListCheckFailure("\(step) on \(list.count) items") }
            let item = list.remove(at: from)
            list.insert(item, at: to)
        case let .insert(at, count):
            guard count > 0, at >= 0, at <= list.count, at + count <= new.count else { throw ListCheckFailure("\(step) on \(list.count) items") }
            list.insert(contentsOf: new[at..<(at + count)], at: at)
        case let .change(at, count):
            guard count > 0, at >= 0, at + count <= list.count, at + count <= new.count else { throw ListCheckFailure("\(step) on \(list.count) items") }
            list.replaceSubrange(at..<(at + count), with: new[at..<(at + count)])
        }
    }
    return list
}

enum ListReference {
    /// The pairing the diff promises, computed slowly: common prefix and suffix in place,
    /// then the k-th old occurrence of a key with its k-th new occurrence. Returns old->new
    /// and whether a key occurs twice on one side of the middle.
    static func pairing<K: Hashable>(_ old: [K], _ new: [K]) -> (oldToNew: [Int], duplicates: Bool) {
        var o2n = [Int](repeating: -1, count: old.count)
        var p = 0
        while p < min(old.count, new.count) && old[p] == new[p] { o2n[p] = p; p += 1 }
        var s = 0
        while s < min(old.count, new.count) - p && old[old.count - 1 - s] == new[new.count - 1 - s] {
            o2n[old.count - 1 - s] = new.count - 1 - s
            s += 1
        }
        var oldOccurrences: [K: [Int]] = [:]
        for i in p..<(old.count - s) { oldOccurrences[old[i], default: []].append(i) }
        var newOccurrences: [K: [Int]] = [:]
        for j in p..<(new.count - s) { newOccurrences[new[j], default: []].append(j) }
        for (key, olds) in oldOccurrences {
            let news = newOccurrences[key] ?? []
            for k in 0..<min(olds.count, news.count) { o2n[olds[k]] = news[k] }
        }
        // Duplicates are looked for only where keys are hashed: when both middles are
        // non-empty.
        let hashed = p < old.count - s && p < new.count - s
        let duplicates = hashed
            && (oldOccurrences.values.contains { $0.count > 1 } || newOccurrences.values.contains { $0.count > 1 })
        return (o2n, duplicates)
    }

    /// The length of a longest increasing subsequence, by the O(n^2) recurrence.
    static func lisLength(_ values: [Int]) -> Int {
        var best = [Int](repeating: 1, count: values.count)
        var result = 0
        for i in 0..<values.count {
            for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
            result = max(result, best[i])
        }
        return result
    }
}

/// Every property of `diff` from `old` to `new` (keys by `key`, content by `==`), checked
/// against the slow references, the UIKit simulator and the script replayer.
func checkListDiff(_ diff: ListDiff, old: [ListItem], new: [ListItem], file: StaticString = #filePath, line: UInt = #line) throws {
    let context = "old \(old)\nnew \(new)\n\(diff)"
    func fail(_ message: String) -> ListCheckFailure { ListCheckFailure("\(message)\n\(context)") }

    guard diff.oldCount == old.count, diff.newCount == new.count,
          diff.oldToNew.count == old.count, diff.newToOld.count == new.count
    else { throw fail("counts") }

    // The maps are inverse and pair equal keys.
    var matched = 0
    for (i, j) in diff.oldToNew.enumerated() where j >= 0 {
        guard j < new.count, diff.newToOld[j] == i else { throw fail("maps disagree at old \(i)") }
        guard old[i].key == new[j].key else { throw fail("old \(i) paired with new \(j), keys differ") }
        matched += 1
    }
    guard diff.newToOld.filter({ $0 >= 0 }).count == matched else { throw fail("newToOld has extra pairs") }

    // The promised pairing.
    let reference = ListReference.pairing(old.map(\.key), new.map(\.key))
    guard reference.oldToNew == diff.oldToNew else { throw fail("pairing differs from the reference \(reference.oldToNew)") }
    guard reference.duplicates == diff.hasDuplicates else { throw fail("hasDuplicates \(diff.hasDuplicates), reference \(reference.duplicates)") }

    // Deletes, inserts, updates: exactly the unmatched and the changed.
    guard diff.deletes == (0..<old.count).filter({ diff.oldToNew[$0] < 0 }) else { throw fail("deletes") }
    guard diff.inserts == (0..<new.count).filter({ diff.newToOld[$0] < 0 }) else { throw fail("inserts") }
    let expectedUpdates = (0..<new.count).compactMap { j -> ListDiff.Pair? in
        let i = diff.newToOld[j]
        return i >= 0 && old[i] != new[j] ? ListDiff.Pair(old: i, new: j) : nil
    }
    guard diff.updates == expectedUpdates else { throw fail("updates, expected \(expectedUpdates)") }
    guard old.count - diff.deletes.count + diff.inserts.count == new.count else { throw fail("counts do not add up") }
    guard diff.matchedCount == matched else { throw fail("matchedCount") }

    // Moves: matched pairs, ascending by new, the rest increasing, as few as an LIS allows.
    var movedNew = Set<Int>()
    for (k, move) in diff.moves.enumerated() {
        guard move.old >= 0, move.old < old.count, diff.oldToNew[move.old] == move.new else { throw fail("move \(move) is not a pair") }
        if k > 0 && diff.moves[k - 1].new >= move.new { throw fail("moves not ascending") }
        movedNew.insert(move.new)
    }
    let sequence = (0..<new.count).compactMap { diff.newToOld[$0] >= 0 ? diff.newToOld[$0] : nil }
    let staying = (0..<new.count).compactMap { j -> Int? in
        diff.newToOld[j] >= 0 && !movedNew.contains(j) ? diff.newToOld[j] : nil
    }
    guard zip(staying, staying.dropFirst()).allSatisfy({ $0 < $1 }) else { throw fail("items that stay are not in order") }
    let lis = ListReference.lisLength(sequence)
    guard diff.moves.count == matched - lis else { throw fail("\(diff.moves.count) moves, minimum \(matched - lis)") }

    // Both batch forms: valid for UIKit and turning old into new.
    for mode in [ListBatch.MovedAndChanged.deleteAndInsert, .moveThenReload] {
        let batch = diff.batch(movedAndChanged: mode)
        try checkBatchInvariants(batch, diff: diff, mode: mode, context: context)
        let shown = try playUIKitBatch(batch, old: old, new: new)
        guard shown == new else { throw fail("batch \(mode) \(batch) shows \(shown)") }
    }

    // The script: every index in range, turning old into new; and its own apply.
    let script = diff.script()
    let replayed = try playScript(script, old: old, new: new)
    guard replayed == new else { throw fail("script \(script.steps) gives \(replayed)") }
    var applied = old
    script.apply(to: &applied, from: new)
    guard applied == new else { throw fail("script.apply gives \(applied)") }
    let scriptMoves = script.steps.filter { if case .move = $0 { return true } else { return false } }.count
    guard scriptMoves <= diff.moves.count else { throw fail("script has more moves than the diff") }
    try checkScriptOrder(script, context: context)
}

/// Batch invariants beyond what UIKit checks: sorted, disjoint, nothing reloaded that is
/// deleted or moved, every update shown.
func checkBatchInvariants(_ batch: ListBatch, diff: ListDiff, mode: ListBatch.MovedAndChanged, context: String) throws {
    func fail(_ message: String) -> ListCheckFailure { ListCheckFailure("batch \(mode): \(message)\n\(batch)\n\(context)") }
    func ascending(_ a: [Int]) -> Bool { zip(a, a.dropFirst()).allSatisfy { $0 < $1 } }
    guard ascending(batch.deletes), ascending(batch.inserts), ascending(batch.reloads),
          ascending(batch.reloadsAfterMoves), ascending(batch.moves.map(\.new))
    else { throw fail("not ascending") }
    let deleted = Set(batch.deletes)
    let movedFrom = Set(batch.moves.map(\.old))
    for i in batch.reloads where deleted.contains(i) || movedFrom.contains(i) { throw fail("reload of a deleted or moved index \(i)") }
    guard deleted.isDisjoint(with: movedFrom) else { throw fail("delete and move of one index") }
    guard Set(batch.inserts).isDisjoint(with: batch.moves.map(\.new)) else { throw fail("insert and move to one index") }
    let movedAndChanged = Set(diff.moves.map(\.new)).intersection(diff.updates.map(\.new))
    switch mode {
    case .deleteAndInsert:
        guard batch.reloadsAfterMoves.isEmpty else { throw fail("reloads after moves") }
        guard batch.moves.count == diff.moves.count - movedAndChanged.count,
              batch.deletes.count == diff.deletes.count + movedAndChanged.count,
              batch.inserts.count == diff.inserts.count + movedAndChanged.count,
              batch.reloads.count == diff.updates.count - movedAndChanged.count
        else { throw fail("counts") }
    case .moveThenReload:
        guard batch.moves == diff.moves, batch.deletes == diff.deletes, batch.inserts == diff.inserts,
              Set(batch.reloadsAfterMoves) == movedAndChanged,
              batch.reloads.count == diff.updates.count - movedAndChanged.count
        else { throw fail("counts") }
    }
}

/// The script's phases come in order (removes, moves, inserts, changes), removes
/// descending, inserts and changes ascending, adjacent runs merged.
func checkScriptOrder(_ script: ListScript, context: String) throws {
    func fail(_ message: String) -> ListCheckFailure { ListCheckFailure("script: \(message)\n\(script.steps)\n\(context)") }
    var phase = 0
    var lastRemove: (at: Int, count: Int)?
    var lastInsert: (at: Int, count: Int)?
    var lastChange: (at: Int, count: Int)?
    for step in script.steps {
        let stepPhase: Int
        switch step {
        case let .remove(at, count):
            stepPhase = 0
            if let last = lastRemove, at + count >= last.at { throw fail("removes not descending or not merged") }
            lastRemove = (at, count)
        case .move:
            stepPhase = 1
        case let .insert(at, count):
            stepPhase = 2
            if let last = lastInsert, at <= last.at + last.count { throw fail("inserts not ascending or not merged") }
            lastInsert = (at, count)
        case let .change(at, count):
            stepPhase = 3
            if let last = lastChange, at <= last.at + last.count { throw fail("changes not ascending or not merged") }
            lastChange = (at, count)
        }
        guard stepPhase >= phase else { throw fail("phases out of order") }
        phase = stepPhase
    }
}
