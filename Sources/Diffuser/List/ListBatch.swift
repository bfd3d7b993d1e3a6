/// A diff as one batch update in UIKit's coordinates, for `performBatchUpdates` of a
/// `UICollectionView` or `UITableView` (and any list view with the same rules).
///
/// UIKit reads a batch against two states: deletes, reloads and the sources of moves are
/// indices in the list *before* the batch; inserts and the destinations of moves are
/// indices in the list *after* it. It rejects a batch (with "invalid number of items" or
/// "attempt to perform a delete and a move from the same index path") when an index is
/// used twice on one side, when an item is both reloaded and moved or deleted, or when the
/// counts do not add up. A `ListBatch` never does any of these:
/// - every old index appears at most once among `deletes`, `reloads` and move sources;
/// - every new index appears at most once among `inserts` and move destinations;
/// - `newCount == oldCount - deletes.count + inserts.count`.
///
/// An item that both moved and changed cannot be moved and reloaded in one batch. By
/// default (`.deleteAndInsert`) it is deleted at its old index and inserted at its new
/// one (the cell is rebuilt without a move animation). With `.moveThenReload` it is moved
/// in the batch and listed in `reloadsAfterMoves`, at its new index, to reload once the
/// batch is done (in a second batch, or with `reconfigureItems`).
///
/// ```swift
/// let batch = diff.batch()
/// collectionView.performBatchUpdates {
///     items = newItems
///     collectionView.deleteItems(at: batch.deletes.map { IndexPath(item: $0, section: 0) })
///     collectionView.insertItems(at: batch.inserts.map { IndexPath(item: $0, section: 0) })
///     collectionView.reloadItems(at: batch.reloads.map { IndexPath(item: $0, section: 0) })
///     for move in batch.moves {
///         collectionView.moveItem(at: IndexPath(item: move.old, section: 0),
///                                 to: IndexPath(item: move.new, section: 0))
///     }
/// }
/// ```
public struct ListBatch: Equatable, Sendable {
    /// How a batch shows an item that both moved and changed content.
    public enum MovedAndChanged: Equatable, Sendable {
        /// Delete it at its old index and insert it at its new one.
        case deleteAndInsert
        /// Move it in the batch and reload it at its new index afterwards
        /// (`reloadsAfterMoves`).
        case moveThenReload
    }

    /// Old indices to delete, ascending.
    public var deletes: [Int]
    /// New indices to insert, ascending.
    public var inserts: [Int]
    /// Items to move from an old index to a new one, ascending by `new`.
    public var moves: [ListDiff.Pair]
    /// Old indices of items that stay in place (relative to the others) and changed
    /// content, ascending.
    public var reloads: [Int]
    /// New indices of items moved by this batch that also changed content, ascending: to
    /// reload after the batch. Empty unless the batch was made with `.moveThenReload`.
    public var reloadsAfterMoves: [Int]

    /// The batch that performs `diff`, showing items that both moved and changed as
    /// `movedAndChanged` says.
    public init(_ diff: ListDiff, movedAndChanged: MovedAndChanged = .deleteAndInsert) {
        var deletes = diff.deletes
        var inserts = diff.inserts
        var moves: [ListDiff.Pair] = []
        var reloads: [Int] = []
        var reloadsAfterMoves: [Int] = []
        reloads.reserveCapacity(diff.updates.count)
        if movedAndChanged == .deleteAndInsert { moves.reserveCapacity(diff.moves.count) }

        // Both lists are ascending by new index: walk them together.
        var movedAndChangedOld: [Int] = []
        var movedAndChangedNew: [Int] = []
        var m = 0
        for update in diff.updates {
            while m < diff.moves.count && diff.moves[m].new < update.new {
                if movedAndChanged == .deleteAndInsert { moves.append(diff.moves[m]) }
                m += 1
            }
            if m < diff.moves.count && diff.moves[m].new == update.new {
                // Moved and changed.
                if movedAndChanged == .deleteAndInsert {
                    movedAndChangedOld.append(update.old)
                    movedAndChangedNew.append(update.new)
                } else {
                    reloadsAfterMoves.append(update.new)
                }
                m += 1
            } else {
                // Items that did not move keep their relative order, so these old indices
                // are ascending too.
                reloads.append(update.old)
            }
        }
        if movedAndChanged == .deleteAndInsert {
            while m < diff.moves.count {
                moves.append(diff.moves[m])
                m += 1
            }
            if !movedAndChangedOld.isEmpty {
                movedAndChangedOld.sort()
                deletes = Self.merge(deletes, movedAndChangedOld)
                inserts = Self.merge(inserts, movedAndChangedNew)
            }
        } else {
            moves = diff.moves
        }
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.reloads = reloads
        self.reloadsAfterMoves = reloadsAfterMoves
    }

    /// A batch from explicit parts, for tests and bindings. The parts are not checked.
    public init(deletes: [Int], inserts: [Int], moves: [ListDiff.Pair], reloads: [Int], reloadsAfterMoves: [Int]) {
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.reloads = reloads
        self.reloadsAfterMoves = reloadsAfterMoves
    }

    /// Whether the batch does nothing.
    public var isEmpty: Bool {
        deletes.isEmpty && inserts.isEmpty && moves.isEmpty && reloads.isEmpty && reloadsAfterMoves.isEmpty
    }

    /// Two ascending arrays of distinct values merged into one ascending array.
    static func merge(_ a: [Int], _ b: [Int]) -> [Int] {
        if a.isEmpty { return b }
        var result: [Int] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] {
                result.append(a[i]); i += 1
            } else {
                result.append(b[j]); j += 1
            }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }
}

extension ListDiff {
    /// This diff as one UIKit batch; see `ListBatch`.
    public func batch(movedAndChanged: ListBatch.MovedAndChanged = .deleteAndInsert) -> ListBatch {
        ListBatch(self, movedAndChanged: movedAndChanged)
    }
}
