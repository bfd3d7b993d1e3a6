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

/// The last list an `intoList` node applied: the node's cache.
@usableFromInline
final class ListCache<Element> {
    @usableFromInline
    var last: [Element]?

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
    /// decides which matched items are updates.
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
        key: @escaping (Element) -> Key,
        sameContent: @escaping (Element, Element) -> Bool,
        _ sink: @escaping (ListChanges<Element>) throws -> Void
    ) -> Diffuser<A> where A == [Element] {
        let cache = ListCache<Element>()
        return .intoAlways(throwing: { (list: [Element]) in
            let last = cache.last
            let old = last ?? []
            let diff = ListDiff(from: old, to: list, key: key, sameContent: sameContent)
            if last != nil && diff.isEmpty {
                cache.last = list
                return
            }
            try sink(ListChanges(old: old, new: list, diff: diff, isFirst: last == nil))
            cache.last = list
        })
    }

    /// `intoList(key:sameContent:_:)` with content compared by `==`.
    @inlinable
    public static func intoList<Element: Equatable, Key: Hashable>(
        key: @escaping (Element) -> Key,
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
