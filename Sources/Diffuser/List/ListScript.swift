/// A diff as a sequence of steps, each one valid on the list as the steps before it left
/// it: what RecyclerView's `notifyItemRange*` / `notifyItemMoved` calls expect, and what
/// patches an array in place.
///
/// The steps come in four phases:
/// 1. removes, highest index first, so that no remove shifts a later one;
/// 2. moves, each with the item's *current* position and the position it moves to (as
///    `array.insert(array.remove(at: from), at: to)`), one per item of `ListDiff.moves`
///    (a move that would leave the item where it is is left out);
/// 3. inserts, lowest index first, at their final (new) indices;
/// 4. changes, at final (new) indices, for every item whose content changed (moved or
///    not).
///
/// Adjacent removes, inserts and changes are merged into runs (`count > 1`).
///
/// ```swift
/// for step in diff.script().steps {
///     switch step {
///     case let .remove(at, count): adapter.notifyItemRangeRemoved(at, count)
///     case let .move(from, to): adapter.notifyItemMoved(from, to)
///     case let .insert(at, count): adapter.notifyItemRangeInserted(at, count)
///     case let .change(at, count): adapter.notifyItemRangeChanged(at, count)
///     }
/// }
/// ```
public struct ListScript: Equatable, Sendable {
    /// One step, in the coordinates of the list as the previous steps left it.
    public enum Step: Equatable, Hashable, Sendable {
        /// Remove `count` items starting at `at`.
        case remove(at: Int, count: Int)
        /// Remove the item at `from`, then insert it at `to` (`to` counts without it).
        case move(from: Int, to: Int)
        /// Insert `count` items of the new list, `new[at..<at + count]`, at `at`.
        case insert(at: Int, count: Int)
        /// Replace `count` items starting at `at` with `new[at..<at + count]`.
        case change(at: Int, count: Int)
    }

    /// The steps, in order.
    public var steps: [Step]

    /// A script from explicit steps. The steps are not checked; prefer the initializer
    /// that makes the script of a diff.
    public init(steps: [Step]) {
        self.steps = steps
    }

    /// The script that performs `diff`. O(n + k log n) for n items and k moves.
    public init(_ diff: ListDiff) {
        var steps: [Step] = []
        Self.appendRemoves(diff.deletes, to: &steps)
        if !diff.moves.isEmpty { Self.appendMoves(diff, to: &steps) }
        Self.appendRuns(diff.inserts, to: &steps) { .insert(at: $0, count: $1) }
        var changed: [Int] = []
        changed.reserveCapacity(diff.updates.count)
        for update in diff.updates { changed.append(update.new) }
        Self.appendRuns(changed, to: &steps) { .change(at: $0, count: $1) }
        self.steps = steps
    }

    /// Applies the script to `array`, which must hold the old list; `new` is the new list,
    /// from which inserted and changed items are taken. Afterwards `array` holds the new
    /// list's items (the matched unchanged items are the old ones).
    ///
    /// Each step costs up to O(n) for an array: meant for modest lists and for checking a
    /// script, not as the fastest way to build the new list.
    public func apply<Element>(to array: inout [Element], from new: [Element]) {
        for step in steps {
            switch step {
            case let .remove(at, count):
                array.removeSubrange(at..<(at + count))
            case let .move(from, to):
                let item = array.remove(at: from)
                array.insert(item, at: to)
            case let .insert(at, count):
                array.insert(contentsOf: new[at..<(at + count)], at: at)
            case let .change(at, count):
                array.replaceSubrange(at..<(at + count), with: new[at..<(at + count)])
            }
        }
    }

    /// Appends the removes of `deletes` (ascending) as runs, highest first.
    static func appendRemoves(_ deletes: [Int], to steps: inout [Step]) {
        var end = deletes.count
        while end > 0 {
            var start = end - 1
            while start > 0 && deletes[start - 1] == deletes[start] - 1 { start -= 1 }
            steps.append(.remove(at: deletes[start], count: end - start))
            end = start
        }
    }

    /// Appends `indices` (ascending) as runs of consecutive indices, lowest first.
    static func appendRuns(_ indices: [Int], to steps: inout [Step], _ make: (Int, Int) -> Step) {
        var start = 0
        while start < indices.count {
            var end = start + 1
            while end < indices.count && indices[end] == indices[end - 1] + 1 { end += 1 }
            steps.append(make(indices[start], end - start))
            start = end
        }
    }

    /// Appends one move per moved item, in new order, with current positions.
    ///
    /// After the removes the list holds the matched items in old order. Items that stay
    /// (on the increasing subsequence) never move; each moved item, taken in new order, goes
    /// right after the item that precedes it in the new list among those already in place.
    /// Every slot an item can occupy is known in advance: its old place, and for a moved
    /// item its place in the run that follows the staying item before it in new order (or
    /// the run before every staying item). A Fenwick tree over these slots counts the items
    /// in front of a slot, which is the item's current position.
    static func appendMoves(_ diff: ListDiff, to steps: inout [Step]) {
        let n = diff.oldCount
        let survivors = diff.matchedCount
        // rank[i]: position of old item i among the matched old items.
        var rank = [Int32](repeating: -1, count: n)
        var r: Int32 = 0
        for i in 0..<n where diff.oldToNew[i] >= 0 {
            rank[i] = r
            r += 1
        }
        // groupSize[g]: moved items placed in run g (0: before every staying item; r + 1:
        // after the staying item of rank r). slotInGroup: each moved item's place in its run.
        var groupSize = [Int32](repeating: 0, count: survivors + 1)
        var groupOfMove = [Int32](repeating: 0, count: diff.moves.count)
        var offsetInGroup = [Int32](repeating: 0, count: diff.moves.count)
        var group = 0
        var m = 0
        for j in 0..<diff.newCount {
            let old = diff.newToOld[j]
            if old < 0 { continue }
            if m < diff.moves.count && diff.moves[m].new == j {
                groupOfMove[m] = Int32(group)
                offsetInGroup[m] = groupSize[group]
                groupSize[group] += 1
                m += 1
            } else {
                group = Int(rank[old]) + 1
            }
        }
        // oldSlot[r]: the slot of the matched item of rank r; each is followed by its run.
        var oldSlot = [Int32](repeating: 0, count: survivors)
        var base = Int(groupSize[0])
        for r in 0..<survivors {
            oldSlot[r] = Int32(base + r)
            base += Int(groupSize[r + 1])
        }
        let slotCount = survivors + diff.moves.count
        // A Fenwick tree of occupied slots, built in O(slotCount).
        var tree = [Int32](repeating: 0, count: slotCount + 1)
        for r in 0..<survivors { tree[Int(oldSlot[r]) + 1] = 1 }
        var i = 1
        while i <= slotCount {
            let parent = i + (i & -i)
            if parent <= slotCount { tree[parent] += tree[i] }
            i += 1
        }
        func countBefore(_ slot: Int) -> Int {
            var sum = 0
            var i = slot
            while i > 0 {
                sum += Int(tree[i])
                i -= i & -i
            }
            return sum
        }
        func add(_ slot: Int, _ delta: Int32) {
            var i = slot + 1
            while i <= slotCount {
                tree[i] += delta
                i += i & -i
            }
        }
        for (index, move) in diff.moves.enumerated() {
            let from = Int(oldSlot[Int(rank[move.old])])
            let g = Int(groupOfMove[index])
            let to = (g == 0 ? 0 : Int(oldSlot[g - 1]) + 1) + Int(offsetInGroup[index])
            let fromPosition = countBefore(from)
            add(from, -1)
            let toPosition = countBefore(to)
            add(to, 1)
            if fromPosition != toPosition { steps.append(.move(from: fromPosition, to: toPosition)) }
        }
    }
}

extension ListDiff {
    /// This diff as a step-by-step script; see `ListScript`.
    public func script() -> ListScript {
        ListScript(self)
    }
}
