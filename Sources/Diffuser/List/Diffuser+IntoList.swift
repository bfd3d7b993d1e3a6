/// What a list sink receives: the list it applied last, the new list, and the diff
/// between them, together, so that the data source and the view are updated from the same
/// pair of lists.
public struct ListChanges<Element> {
    /// The list of the last successful run (empty on the first run).
    public let old: [Element]
    /// The list of this run: what the data source must hold once the changes are applied.
    public let new: [Element]
    /// From `old` to `new`.
    public let diff: ListDiff
    /// Whether this is the first run (or the first since every earlier run failed): a list
    /// view that has shown nothing yet may simply reload.
    public let isFirst: Bool

    /// Changes from explicit parts, for tests.
    public init(old: [Element], new: [Element], diff: ListDiff, isFirst: Bool) {
        self.old = old
        self.new = new
        self.diff = diff
        self.isFirst = isFirst
    }

    /// The diff as one UIKit batch; see `ListBatch`.
    public func batch(movedAndChanged: ListBatch.MovedAndChanged = .deleteAndInsert) -> ListBatch {
        diff.batch(movedAndChanged: movedAndChanged)
    }

    /// The diff as a step-by-step script; see `ListScript`.
    public func script() -> ListScript {
        diff.script()
    }
}

extension ListChanges: Sendable where Element: Sendable {}

/// The last list an `intoList` node applied: the node's cache. Touched only by the
/// node's runs, which the graph's serializer orders.
@usableFromInline
final class ListCache<List> {
    @usableFromInline
    var last: List?

    @inlinable
    init() {}
}

extension Diffuser {
    /// A diffuser that keeps a list view in step with a list: it diffs each new list against
    /// the last one it applied and hands `sink` both, with the diff (`ListChanges`).
    ///
    /// Why: a list view (a collection view, a RecyclerView) must be told what changed, in
    /// indices that agree with the list its data source holds. Handing the sink the diff and
    /// the new list together keeps the two in step: set the data source to `changes.new`
    /// and apply `changes.batch()` (or `changes.script()`) in the same update.
    ///
    /// - The first run calls `sink` with `isFirst == true` and a diff from the empty list
    ///   (every item an insert), even for an empty list.
    /// - A later run whose list has the same keys in the same order with the same content
    ///   (an empty diff) does not call `sink`. Like every gate, the node still keeps the new
    ///   list as the one the next run is diffed against.
    /// - If `sink` throws, the node keeps the last list it applied successfully, so the
    ///   next run's diff starts from what the view shows; the error aborts the run.
    ///
    /// Items are paired by `key` (see `ListDiff` for duplicates and moves); `sameContent`
    /// decides which matched items are updates. `key` is called only where the diff needs
    /// a key (never on the first run), `sameContent` once per matched pair. Either may
    /// throw: the error aborts the run, nothing is called after it, and the node keeps
    /// the last list it applied, as when `sink` throws.
    ///
    /// ```swift
    /// let diffuser = Diffuser<Model>.map(\.rows, .intoList(key: \.id, sameContent: ==) { changes in
    ///     dataSource.rows = changes.new
    ///     let batch = changes.batch()
    ///     collectionView.performBatchUpdates { ... }
    /// })
    /// ```
    @inlinable
    public static func intoList<Element, Key: Hashable>(
        key: @escaping (Element) throws -> Key,
        sameContent: @escaping (Element, Element) throws -> Bool,
        _ sink: @escaping (ListChanges<Element>) throws -> Void
    ) -> Diffuser<A> where A == [Element] {
        listNode(
            count: { $0.count },
            key: { list, index in try key(list[index]) },
            sameKey: { $0 == $1 },
            sameContent: { old, i, new, j in try sameContent(old[i], new[j]) },
            keep: { $0 }
        ) { old, new, diff in
            try sink(ListChanges(old: old ?? [], new: new, diff: diff, isFirst: old == nil))
        }
    }

    /// `intoList(key:sameContent:_:)` with content compared by `==`.
    @inlinable
    public static func intoList<Element: Equatable, Key: Hashable>(
        key: @escaping (Element) throws -> Key,
        _ sink: @escaping (ListChanges<Element>) throws -> Void
    ) -> Diffuser<A> where A == [Element] {
        intoList(key: key, sameContent: ==, sink)
    }

    /// `intoList(key:sameContent:_:)` for `Identifiable` items: keyed by `id`, content
    /// compared by `==`.
    @inlinable
    public static func intoList<Element: Identifiable & Equatable>(
        _ sink: @escaping (ListChanges<Element>) throws -> Void
    ) -> Diffuser<A> where A == [Element] {
        intoList(key: { $0.id }, sameContent: ==, sink)
    }
}

// MARK: Lists in any storage

extension Diffuser {
    /// The node of every `intoList`, over lists in any storage read through functions of
    /// an index: the building block of the bindings (the C ABI's
    /// `dfs_diffuser_into_list`, and through it Java's `Diffuser.intoList`), which have no
    /// Swift array to hand over.
    ///
    /// The node keeps the last list it applied, and on each run:
    /// 1. diffs the kept list (none on the first run: an empty one) against the new one,
    ///    asking `count(old)` (not on the first run), `count(new)`, then telling
    ///    `counted` both counts (0 for the old one on the first run), then asking `key`,
    ///    `sameKey` and `sameContent` in the order `ListDiff` asks for them
    ///    (`init(oldCount:newCount:oldKey:newKey:sameKey:sameContent:)`);
    /// 2. calls `keep(new)` for what it will store (a binding retains a borrowed value);
    /// 3. if this is not the first run and the diff is empty, stores that and returns
    ///    without calling `sink`;
    /// 4. otherwise calls `sink(old, new, diff)`, `old` being `nil` on the first run, and
    ///    stores the kept list once `sink` returned.
    ///
    /// A throw from any of these functions aborts the run and leaves the kept list as it
    /// was (a failed first run leaves none, so the next run is a first run again).
    ///
    /// A key is asked only where the diff needs it: never on the first run, and past the
    /// common prefix and suffix only when both lists have items left there. A `key` that
    /// throws for an item therefore fails the first later run that needs that item's key,
    /// and every later run that needs it while the item is in the kept list.
    ///
    /// - Parameters:
    ///   - count: the number of items of a list.
    ///   - key: the key of item `index` of `list`.
    ///   - sameKey: whether two keys identify the same item (see
    ///     `ListDiff.init(oldCount:newCount:oldKey:newKey:sameKey:sameContent:)`).
    ///   - sameContent: whether old item `oldIndex` and new item `newIndex`, matched by
    ///     key, have the same content.
    ///   - keep: what the node stores to keep a list past the run.
    ///   - counted: told the counts of both lists before any key is asked (a binding
    ///     that must not run out of memory checks here that the diff's can be had).
    ///   - sink: applies the diff; receives the kept list (`nil` on the first run), the
    ///     new list and the diff between them.
    @_spi(Bindings) @inlinable
    public static func intoList<Key: Hashable>(
        count: @escaping (_ list: A) throws -> Int,
        key: @escaping (_ list: A, _ index: Int) throws -> Key,
        sameKey: @escaping (Key, Key) throws -> Bool,
        sameContent: @escaping (_ old: A, _ oldIndex: Int, _ new: A, _ newIndex: Int) throws -> Bool,
        keep: @escaping (_ list: A) throws -> A,
        counted: @escaping (_ oldCount: Int, _ newCount: Int) throws -> Void = { _, _ in },
        _ sink: @escaping (_ old: A?, _ new: A, _ diff: ListDiff) throws -> Void
    ) -> Diffuser<A> {
        listNode(count: count, key: key, sameKey: sameKey, sameContent: sameContent, keep: keep, counted: counted, sink)
    }

    /// `intoList(count:key:sameKey:sameContent:keep:counted:_:)`, which every `intoList` is.
    @inlinable
    static func listNode<Key: Hashable>(
        count: @escaping (_ list: A) throws -> Int,
        key: @escaping (_ list: A, _ index: Int) throws -> Key,
        sameKey: @escaping (Key, Key) throws -> Bool,
        sameContent: @escaping (_ old: A, _ oldIndex: Int, _ new: A, _ newIndex: Int) throws -> Bool,
        keep: @escaping (_ list: A) throws -> A,
        counted: @escaping (_ oldCount: Int, _ newCount: Int) throws -> Void = { _, _ in },
        _ sink: @escaping (_ old: A?, _ new: A, _ diff: ListDiff) throws -> Void
    ) -> Diffuser<A> {
        let cache = ListCache<A>()
        return .intoAlways(throwing: { (list: A) in
            let last = cache.last
            let diff: ListDiff
            if let last {
                let oldCount = try count(last)
                let newCount = try count(list)
                try counted(oldCount, newCount)
                diff = try ListDiff(
                    oldCount: oldCount, newCount: newCount,
                    oldKey: { try key(last, $0) }, newKey: { try key(list, $0) },
                    sameKey: sameKey,
                    sameContent: { try sameContent(last, $0, list, $1) })
            } else {
                let newCount = try count(list)
                try counted(0, newCount)
                diff = try ListDiff(
                    oldCount: 0, newCount: newCount,
                    oldKey: { try key(list, $0) }, newKey: { try key(list, $0) },
                    sameKey: sameKey,
                    sameContent: { _, _ in true })
            }
            let kept = try keep(list)
            if last != nil && diff.isEmpty {
                cache.last = kept
                return
            }
            try sink(last, list, diff)
            cache.last = kept
        })
    }
}
