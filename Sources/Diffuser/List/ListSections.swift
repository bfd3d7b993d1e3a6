/// What changed in a list of sections, each holding its own items, diffed in one call.
///
/// Sections are paired by their own key (`sections`, a `ListDiff` whose updates are the
/// sections whose own content, such as a header, changed). The items of each new section
/// are diffed against the items of the old section it was paired with (`items`). Items
/// move within their section; an item that changes section is deleted from the old one
/// and inserted into the new one.
public struct ListSectionsDiff: Equatable, Sendable {
    /// The diff of the sections themselves.
    public var sections: ListDiff
    /// For each new section, the diff of its items from those of the old section paired
    /// with it, or from no items when the section is new.
    public var items: [ListDiff]

    /// A diff from explicit parts, for tests and bindings. The parts are not checked
    /// (`items` must hold one diff for each of the new sections); prefer the initializers
    /// that compute a diff.
    public init(sections: ListDiff, items: [ListDiff]) {
        self.sections = sections
        self.items = items
    }

    /// Diffs two lists of sections.
    ///
    /// - Parameters:
    ///   - old: the sections applied last.
    ///   - new: the sections to apply.
    ///   - sectionKey: identifies a section.
    ///   - sameSection: compares the content of two paired sections, apart from their
    ///     items (a header, a footer); `false` makes the section an update.
    ///   - items: the items of a section.
    ///   - itemKey: identifies an item within its section.
    ///   - sameItem: compares the content of two paired items.
    @inlinable
    public init<Section, SectionKey: Hashable, Item, ItemKey: Hashable>(
        from old: [Section], to new: [Section],
        sectionKey: (Section) throws -> SectionKey,
        sameSection: (Section, Section) throws -> Bool,
        items: (Section) throws -> [Item],
        itemKey: (Item) throws -> ItemKey,
        sameItem: (Item, Item) throws -> Bool
    ) rethrows {
        try self.init(
            sections: ListDiff(from: old, to: new, key: sectionKey, sameContent: sameSection),
            itemDiff: { o, j in
                let oldItems = try o.map { try items(old[$0]) } ?? []
                return try ListDiff(from: oldItems, to: items(new[j]), key: itemKey, sameContent: sameItem)
            })
    }

    /// The sections diff given the diff of the sections themselves: `itemDiff(o, j)` is
    /// the diff of new section `j`'s items from those of old section `o` (nil for a new
    /// section), asked for each new section in order. This is the one place that says
    /// how a sections diff is made, and in which order its parts are asked for; the
    /// bindings read their lists through it.
    @_spi(Bindings)
    public init(sections: ListDiff, itemDiffs itemDiff: (Int?, Int) throws -> ListDiff) rethrows {
        try self.init(sections: sections, itemDiff: itemDiff)
    }

    /// `init(sections:itemDiffs:)`, callable from the public initializer's inlined body.
    @usableFromInline
    init(sections: ListDiff, itemDiff: (Int?, Int) throws -> ListDiff) rethrows {
        var itemDiffs: [ListDiff] = []
        itemDiffs.reserveCapacity(sections.newCount)
        for j in 0..<sections.newCount {
            let o = sections.newToOld[j]
            itemDiffs.append(try itemDiff(o >= 0 ? o : nil, j))
        }
        self.init(sections: sections, items: itemDiffs)
    }

    /// Whether the sections' diff or any section's item diff has duplicates: a key that
    /// occurred twice where keys pair by occurrence, outside the common prefix and suffix
    /// (see `ListDiff.hasDuplicates`).
    public var hasDuplicates: Bool {
        sections.hasDuplicates || items.contains { $0.hasDuplicates }
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        sections.isEmpty && items.allSatisfy(\.isEmpty)
    }

    /// This diff as one UIKit batch; see `ListSectionsBatch`.
    public func batch(movedAndChanged: ListBatch.MovedAndChanged = .deleteAndInsert) -> ListSectionsBatch {
        ListSectionsBatch(self, movedAndChanged: movedAndChanged)
    }
}

/// The position of an item in a list of sections: what UIKit calls an index path.
public struct ListIndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The item's index within its section.
    public var item: Int

    /// The path of item `item` of section `section`.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// Section order first, then item order within a section.
    public static func < (a: ListIndexPath, b: ListIndexPath) -> Bool {
        (a.section, a.item) < (b.section, b.item)
    }

    public var description: String { "[\(section), \(item)]" }
}

/// A sections diff as one batch update in UIKit's coordinates (see `ListBatch` for the
/// rules UIKit enforces): section deletes, reloads and move sources, and item deletes,
/// reloads and move sources are in old coordinates; section inserts and move destinations,
/// and item inserts and move destinations, in new coordinates.
///
/// To stay within what UIKit accepts, item changes are only listed for sections that stay
/// in place and are not reloaded:
/// - a section that changed content and stayed in place is reloaded (with its items);
/// - a section that moved is moved only if neither it nor its items changed; otherwise it
///   is deleted and inserted (or with `.moveThenReload`, moved and then reloaded at its new
///   index, in `sectionReloadsAfterMoves`);
/// - in the other sections, items follow `ListBatch`.
public struct ListSectionsBatch: Equatable, Sendable {
    /// An item that moves within its section: from its old index path to its new one.
    public struct ItemMove: Equatable, Hashable, Sendable {
        /// Where the item was, in the old sections.
        public var old: ListIndexPath
        /// Where the item is, in the new sections.
        public var new: ListIndexPath

        /// The move of the item at `old` to `new`.
        public init(old: ListIndexPath, new: ListIndexPath) {
            self.old = old
            self.new = new
        }
    }

    /// Old indices of sections to delete, ascending.
    public var sectionDeletes: [Int] = []
    /// New indices of sections to insert, ascending.
    public var sectionInserts: [Int] = []
    /// Sections to move, ascending by new index.
    public var sectionMoves: [ListDiff.Pair] = []
    /// Old indices of sections to reload, ascending.
    public var sectionReloads: [Int] = []
    /// New indices of moved sections to reload after the batch (`.moveThenReload`).
    public var sectionReloadsAfterMoves: [Int] = []
    /// Items to delete, in old coordinates, ascending.
    public var itemDeletes: [ListIndexPath] = []
    /// Items to insert, in new coordinates, ascending.
    public var itemInserts: [ListIndexPath] = []
    /// Items to move within their section.
    public var itemMoves: [ItemMove] = []
    /// Items to reload, in old coordinates, ascending.
    public var itemReloads: [ListIndexPath] = []
    /// Items moved by this batch to reload after it, in new coordinates
    /// (`.moveThenReload`).
    public var itemReloadsAfterMoves: [ListIndexPath] = []

    /// The batch that performs `diff`.
    public init(_ diff: ListSectionsDiff, movedAndChanged: ListBatch.MovedAndChanged = .deleteAndInsert) {
        let sections = diff.sections
        var deletes = sections.deletes
        var inserts = sections.inserts
        var movedAway: [Int] = []
        var movedInto: [Int] = []
        // Walk moves and updates (both ascending by new index) together.
        var changed = Set<Int>()
        for update in sections.updates { changed.insert(update.new) }
        var moved = Set<Int>()
        for move in sections.moves { moved.insert(move.new) }
        for j in 0..<sections.newCount {
            let o = sections.newToOld[j]
            if o < 0 { continue }
            let items = diff.items[j]
            if moved.contains(j) {
                if changed.contains(j) || !items.isEmpty {
                    if movedAndChanged == .deleteAndInsert {
                        movedAway.append(o)
                        movedInto.append(j)
                    } else {
                        sectionMoves.append(ListDiff.Pair(old: o, new: j))
                        sectionReloadsAfterMoves.append(j)
                    }
                } else {
                    sectionMoves.append(ListDiff.Pair(old: o, new: j))
                }
            } else if changed.contains(j) {
                sectionReloads.append(o)
            } else if !items.isEmpty {
                let batch = items.batch(movedAndChanged: movedAndChanged)
                for i in batch.deletes { itemDeletes.append(ListIndexPath(section: o, item: i)) }
                for i in batch.inserts { itemInserts.append(ListIndexPath(section: j, item: i)) }
                for i in batch.reloads { itemReloads.append(ListIndexPath(section: o, item: i)) }
                for i in batch.reloadsAfterMoves { itemReloadsAfterMoves.append(ListIndexPath(section: j, item: i)) }
                for move in batch.moves {
                    itemMoves.append(ItemMove(
                        old: ListIndexPath(section: o, item: move.old),
                        new: ListIndexPath(section: j, item: move.new)))
                }
            }
        }
        if !movedAway.isEmpty {
            movedAway.sort()
            deletes = ListBatch.merge(deletes, movedAway)
            inserts = ListBatch.merge(inserts, movedInto)
        }
        // Sections that stay in place keep their relative order, so item deletes (old
        // sections) and inserts (new sections) are ascending already.
        sectionDeletes = deletes
        sectionInserts = inserts
    }

    /// Whether the batch does nothing.
    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && sectionMoves.isEmpty && sectionReloads.isEmpty
            && sectionReloadsAfterMoves.isEmpty && itemDeletes.isEmpty && itemInserts.isEmpty
            && itemMoves.isEmpty && itemReloads.isEmpty && itemReloadsAfterMoves.isEmpty
    }
}
