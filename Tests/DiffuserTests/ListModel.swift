import XCTest
@testable import Diffuser

/// The keyed list diff as conformance/README.md 10.2-10.5 defines it, computed slowly
/// and apart from the core: the pairing (`ListReference.pairing`), the moves 10.3's rule
/// picks among the longest increasing subsequences, the batches of 10.4 and the script
/// of 10.5. The rules are pinned so that every implementation gives the same moves,
/// batches and scripts; the property tests compare the core with this model entry for
/// entry, not only for validity.
enum ListModel {
    /// The diff of `old` -> `new`, keys by `key`, contents by `==` (10.2 and 10.3).
    static func diff(_ old: [ListItem], _ new: [ListItem]) -> ListDiff {
        let (oldToNew, duplicates) = ListReference.pairing(old.map(\.key), new.map(\.key))
        var newToOld = [Int](repeating: -1, count: new.count)
        for (i, j) in oldToNew.enumerated() where j >= 0 { newToOld[j] = i }
        let matched = new.indices.filter { newToOld[$0] >= 0 }
        let stays = staying(matched.map { newToOld[$0] })
        let moves = matched.indices.filter { !stays.contains($0) }
            .map { ListDiff.Pair(old: newToOld[matched[$0]], new: matched[$0]) }
        let updates = matched.filter { old[newToOld[$0]] != new[$0] }
            .map { ListDiff.Pair(old: newToOld[$0], new: $0) }
        return ListDiff(oldCount: old.count, newCount: new.count,
                        deletes: old.indices.filter { oldToNew[$0] < 0 },
                        inserts: new.indices.filter { newToOld[$0] < 0 },
                        moves: moves, updates: updates, oldToNew: oldToNew, newToOld: newToOld,
                        hasDuplicates: duplicates)
    }

    /// The positions in `values` (the old indices of the matched items, in new order) of
    /// the items that stay (10.3): a longest strictly increasing subsequence, ending at the
    /// last position of the top level, each element preceded by the last position one
    /// level lower with a smaller value.
    static func staying(_ values: [Int]) -> Set<Int> {
        var level = [Int](repeating: 1, count: values.count)
        for t in values.indices {
            for u in 0..<t where values[u] < values[t] { level[t] = max(level[t], level[u] + 1) }
        }
        guard let top = level.max() else { return [] }
        var t = level.lastIndex(of: top)!
        var stays: Set<Int> = [t]
        while level[t] > 1 {
            t = (0..<t).last { level[$0] == level[t] - 1 && values[$0] < values[t] }!
            stays.insert(t)
        }
        return stays
    }

    /// The batch of `diff` (10.4).
    static func batch(_ diff: ListDiff, movedAndChanged mode: ListBatch.MovedAndChanged) -> ListBatch {
        let moved = Set(diff.moves.map(\.new))
        let both = moved.intersection(diff.updates.map(\.new)).sorted()
        let reloads = diff.updates.filter { !moved.contains($0.new) }.map(\.old).sorted()
        switch mode {
        case .moveThenReload:
            return ListBatch(deletes: diff.deletes, inserts: diff.inserts, moves: diff.moves,
                             reloads: reloads, reloadsAfterMoves: both)
        case .deleteAndInsert:
            return ListBatch(deletes: (diff.deletes + both.map { diff.newToOld[$0] }).sorted(),
                             inserts: (diff.inserts + both).sorted(),
                             moves: diff.moves.filter { !both.contains($0.new) },
                             reloads: reloads, reloadsAfterMoves: [])
        }
    }

    /// The script of `diff` (10.5).
    static func script(_ diff: ListDiff) -> [ListScript.Step] {
        var steps = runs(diff.deletes).reversed().map { ListScript.Step.remove(at: $0.at, count: $0.count) }
        // The list after the removes, as old indices; the items placed so far.
        var list = (0..<diff.oldCount).filter { diff.oldToNew[$0] >= 0 }
        let movedOld = Set(diff.moves.map(\.old))
        var placed = Set(list.filter { !movedOld.contains($0) })
        for move in diff.moves {
            let from = list.firstIndex(of: move.old)!
            list.remove(at: from)
            let before = list.indices
                .filter { placed.contains(list[$0]) && diff.oldToNew[list[$0]] < move.new }
                .max { diff.oldToNew[list[$0]] < diff.oldToNew[list[$1]] }
            let to = before.map { $0 + 1 } ?? 0
            list.insert(move.old, at: to)
            placed.insert(move.old)
            if from != to { steps.append(.move(from: from, to: to)) }
        }
        steps += runs(diff.inserts).map { .insert(at: $0.at, count: $0.count) }
        steps += runs(diff.updates.map(\.new)).map { .change(at: $0.at, count: $0.count) }
        return steps
    }

    /// Ascending indices as runs of consecutive ones.
    static func runs(_ indices: [Int]) -> [(at: Int, count: Int)] {
        var result: [(at: Int, count: Int)] = []
        for i in indices {
            if let last = result.last, last.at + last.count == i {
                result[result.count - 1].count += 1
            } else {
                result.append((i, 1))
            }
        }
        return result
    }

    /// The length of a longest common subsequence of `a` and `b`: with unique keys, the
    /// most matched items any set of moves can leave in place.
    static func lcsLength(_ a: [Int], _ b: [Int]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in a.indices {
            for j in b.indices {
                table[i + 1][j + 1] = a[i] == b[j] ? table[i][j] + 1 : max(table[i][j + 1], table[i + 1][j])
            }
        }
        return table[a.count][b.count]
    }
}
