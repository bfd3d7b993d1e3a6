/// What changed from one list to the next, with items identified by a key and their
/// content compared separately.
///
/// Build one with `ListDiff(from:to:key:sameContent:)` (or a variant below), then apply it
/// in the form your list view wants: `batch()` for one UIKit batch
/// (`performBatchUpdates`), `script()` for step-by-step notifications (RecyclerView's
/// `notifyItem*`) or for patching an array.
///
/// ## Pairing
/// An item of the old list and an item of the new list are the same item (are *matched*)
/// when their keys are equal. Items of the common prefix and suffix (equal keys at the
/// same places from either end) pair in place. In the rest, the k-th old occurrence of a
/// key pairs with the k-th new occurrence of that key; extra occurrences on either side
/// are deletes or inserts. Duplicate keys are therefore never an error, but they make the
/// identity of the duplicated items ambiguous, so the diff reports them
/// (`hasDuplicates`).
///
/// ## Minimal moves
/// Of the matched items, those on one longest increasing subsequence (taken in new order,
/// of old indices) stay where they are and every other matched item moves. No set of moves
/// smaller than that can reorder the matched items, so `moves.count` is the minimum for
/// this pairing.
///
/// ## Indices
/// Every index refers to the list it names: `deletes` and the `old` of a pair are indices
/// into the old list, `inserts` and the `new` of a pair are indices into the new list.
/// Every array is sorted ascending by the index it is listed in (pairs by `new`).
public struct ListDiff: Equatable, Sendable {
    /// A matched item: its index in the old list and its index in the new list.
    public struct Pair: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// The item's index in the old list.
        public var old: Int
        /// The item's index in the new list.
        public var new: Int

        /// The pair of old index `old` and new index `new`.
        @inlinable
        public init(old: Int, new: Int) {
            self.old = old
            self.new = new
        }

        public var description: String { "\(old)->\(new)" }
    }

    /// The number of items in the old list.
    public var oldCount: Int
    /// The number of items in the new list.
    public var newCount: Int
    /// Old indices of the items that are not in the new list, ascending.
    public var deletes: [Int]
    /// New indices of the items that were not in the old list, ascending.
    public var inserts: [Int]
    /// The matched items that changed place relative to the others, ascending by `new`:
    /// the matched items outside one longest increasing subsequence.
    public var moves: [Pair]
    /// The matched items whose content changed (the content comparison returned
    /// `false`), ascending by `new`. Includes items that also moved.
    public var updates: [Pair]
    /// For each old index, the new index of the same item, or -1 for a deleted item.
    public var oldToNew: [Int]
    /// For each new index, the old index of the same item, or -1 for an inserted item.
    public var newToOld: [Int]
    /// Whether a key was seen more than once in one of the lists while pairing items
    /// outside the common prefix and suffix (the only part where duplicates can change the
    /// pairing). Looked for only when both lists have items there: a diff from or to an
    /// empty list (an `intoList` node's first run) pairs nothing and says `false`, whatever
    /// the keys.
    ///
    /// Duplicates never make the diff fail; the k-th occurrences pair up. A list view that
    /// requires unique identifiers (a diffable data source) should still be told, and must
    /// check a list it is given whole (the first) itself.
    public var hasDuplicates: Bool

    /// A diff from explicit parts, for tests and bindings. The parts are not checked;
    /// prefer the initializers that compute a diff.
    @inlinable
    public init(
        oldCount: Int, newCount: Int,
        deletes: [Int], inserts: [Int], moves: [Pair], updates: [Pair],
        oldToNew: [Int], newToOld: [Int], hasDuplicates: Bool
    ) {
        self.oldCount = oldCount
        self.newCount = newCount
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.updates = updates
        self.oldToNew = oldToNew
        self.newToOld = newToOld
        self.hasDuplicates = hasDuplicates
    }

    /// Whether nothing changed: no delete, insert, move or update.
    @inlinable
    public var isEmpty: Bool {
        deletes.isEmpty && inserts.isEmpty && moves.isEmpty && updates.isEmpty
    }

    /// The number of matched items (items in both lists).
    @inlinable
    public var matchedCount: Int { oldCount - deletes.count }
}

extension ListDiff: CustomStringConvertible {
    public var description: String {
        "ListDiff(\(oldCount)->\(newCount): deletes \(deletes), inserts \(inserts), moves \(moves), "
            + "updates \(updates)\(hasDuplicates ? ", duplicates" : ""))"
    }
}
