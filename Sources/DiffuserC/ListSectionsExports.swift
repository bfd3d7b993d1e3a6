import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The sections diff for C (include/diffuser.h, "Lists"): dfs_list_sections_diff_compute
// takes lists of sections whose keys, item counts and item keys are flat C arrays;
// dfs_list_sections_diff_read reads two list values through a dfs_list_sections_reader.
// The diff is the core's ListSectionsDiff (and its ListSectionsBatch); this file only
// reads the arrays or the reader and lays the result out in one block.

/// One side of a sections diff, read and checked from a `dfs_list_sections_side`.
private struct CSectionsSide {
    let sectionKeys: UnsafePointer<UInt64>?
    let sectionContents: UnsafePointer<UInt64>?
    let itemKeys: UnsafePointer<UInt64>?
    let itemContents: UnsafePointer<UInt64>?
    let count: Int
    /// Section `s`'s items are `starts[s] ..< starts[s + 1]` of the item arrays.
    let starts: [Int]

    init(_ side: UnsafePointer<dfs_list_sections_side>?, _ name: String) throws {
        guard let side else { throw CError.null(name) }
        let value = side.pointee
        count = try checkedCount(value.section_count, "\(name)->section_count", atMost: maxListCount)
        if count > 0 && value.section_keys == nil { throw CError.null("\(name)->section_keys") }
        if count > 0 && value.item_counts == nil { throw CError.null("\(name)->item_counts") }
        try reserveListMemory(items: count, "\(count) sections (\(name))")
        var starts = [Int](repeating: 0, count: count + 1)
        for s in 0..<count {
            let items = try checkedCount(value.item_counts![s], "\(name)->item_counts[\(s)]", atMost: maxListCount)
            starts[s + 1] = starts[s] + items
            guard starts[s + 1] <= maxListCount else {
                throw CError.argument("\(name) holds more than \(maxListCount) items in all")
            }
        }
        if starts[count] > 0 && value.item_keys == nil { throw CError.null("\(name)->item_keys") }
        self.starts = starts
        sectionKeys = value.section_keys
        sectionContents = value.section_contents
        itemKeys = value.item_keys
        itemContents = value.item_contents
    }

    var itemCount: Int { starts[count] }
}

/// A section of either side, as the core's sections diff sees it.
private struct CSection {
    let isNew: Bool
    let index: Int
}

/// An item of either side: its section, its index there, and its place in the flat arrays.
private struct CSectionItem {
    let isNew: Bool
    let section: Int
    let item: Int
    let flat: Int
}

@_cdecl("dfs_list_sections_diff_compute")
public func dfs_list_sections_diff_compute(
    _ oldList: UnsafePointer<dfs_list_sections_side>?, _ newList: UnsafePointer<dfs_list_sections_side>?,
    _ sameContent: dfs_list_sections_same_fn?, _ ctx: UnsafeMutableRawPointer?, _ flags: UInt32,
    _ out: UnsafeMutablePointer<dfs_list_sections_diff>?
) -> dfs_status {
    produce(out, empty: dfs_list_sections_diff()) {
        try checkListFlags(flags)
        let old = try CSectionsSide(oldList, "old_list")
        let new = try CSectionsSide(newList, "new_list")
        try reserveListMemory(
            items: old.count + new.count + old.itemCount + new.itemCount, newSections: new.count,
            "\(old.count) + \(new.count) sections holding \(old.itemCount) + \(new.itemCount) items")
        let sides = (old: old, new: new)
        func side(_ isNew: Bool) -> CSectionsSide { isNew ? sides.new : sides.old }

        // Content: the callback, else fingerprints given for both lists, else unchanged.
        let sameSection: (CSection, CSection) throws -> Bool
        let sameItem: (CSectionItem, CSectionItem) throws -> Bool
        if let sameContent {
            func ask(_ a: Int, _ i: Int, _ b: Int, _ j: Int) throws -> Bool {
                let serial = dfsi_error_serial()
                let answer = sameContent(
                    Int32(truncatingIfNeeded: a), Int32(truncatingIfNeeded: i),
                    Int32(truncatingIfNeeded: b), Int32(truncatingIfNeeded: j), ctx)
                if answer < 0 { throw CError.callback("same_content", code: answer, since: serial) }
                return answer != 0
            }
            sameSection = { try ask($0.index, -1, $1.index, -1) }
            sameItem = { try ask($0.section, $0.item, $1.section, $1.item) }
        } else {
            let sections = try fingerprints(
                old.sectionContents, old.count, new.sectionContents, new.count, "section_contents")
            let items = try fingerprints(old.itemContents, old.itemCount, new.itemContents, new.itemCount, "item_contents")
            sameSection = { a, b in sections.map { $0.old[a.index] == $0.new[b.index] } ?? true }
            sameItem = { a, b in items.map { $0.old[a.flat] == $0.new[b.flat] } ?? true }
        }

        let diff = try ListSectionsDiff(
            from: (0..<old.count).map { CSection(isNew: false, index: $0) },
            to: (0..<new.count).map { CSection(isNew: true, index: $0) },
            sectionKey: { side($0.isNew).sectionKeys![$0.index] },
            sameSection: sameSection,
            items: { section in
                let starts = side(section.isNew).starts
                return (starts[section.index]..<starts[section.index + 1]).map {
                    CSectionItem(isNew: section.isNew, section: section.index, item: $0 - starts[section.index], flat: $0)
                }
            },
            itemKey: { side($0.isNew).itemKeys![$0.flat] },
            sameItem: sameItem)
        return try CSectionsDiffBlock.make(diff, flags: flags)
    }
}

@_cdecl("dfs_list_sections_diff_read")
public func dfs_list_sections_diff_read(
    _ reader: UnsafePointer<dfs_list_sections_reader>?, _ oldList: UnsafeRawPointer?, _ newList: UnsafeRawPointer?, _ flags: UInt32,
    _ out: UnsafeMutablePointer<dfs_list_sections_diff>?
) -> dfs_status {
    produce(out, empty: dfs_list_sections_diff()) {
        guard let reader else { throw CError.null("reader") }
        let functions = reader.pointee
        let sections = try CListReader(
            CCallback(functions.sections, functions.sections_ctx, nil), name: "reader->sections", role: "the sections reader")
        guard let items = functions.items else { throw CError.null("reader->items") }
        let itemsReader = try CListReader(
            CCallback(functions.items_reader, functions.items_reader_ctx, nil), name: "reader->items_reader", role: "the items reader")
        try checkListFlags(flags)
        let old = CValue(oldList)
        let new = CValue(newList)

        /// The items of section `index` of `list`, released once `body` returns.
        func withItems<R>(of list: CValue, _ index: Int, _ body: (CValue) throws -> R) throws -> R {
            var stored: UnsafeRawPointer?
            let serial = dfsi_error_serial()
            let code = items(list.pointer, Int32(truncatingIfNeeded: index), &stored, functions.items_ctx)
            if code != 0 {
                // A list stored before failing is taken back all the same.
                if let stored { functions.items_release?(stored, functions.items_ctx) }
                throw CError.callback("the sections reader's items", code: code, since: serial)
            }
            defer { functions.items_release?(stored, functions.items_ctx) }
            return try body(CValue(stored))
        }

        // The items read in all, which the batch's counts hold as int32_t.
        var oldItems = 0
        var newItems = 0
        let diff = try ListSectionsDiff(sections: sections.diff(from: old, to: new, ofSections: true), itemDiffs: { o, j in
            let items = try o.map { o in
                try withItems(of: old, o) { oldItems in
                    try withItems(of: new, j) { try itemsReader.diff(from: oldItems, to: $0) }
                }
            } ?? withItems(of: new, j) { try itemsReader.diff(from: nil, to: $0) }
            oldItems += items.oldCount
            newItems += items.newCount
            guard oldItems <= maxListCount && newItems <= maxListCount else {
                throw CError.argument("the sections hold more than \(maxListCount) items in all")
            }
            return items
        })
        return try CSectionsDiffBlock.make(diff, flags: flags)
    }
}

/// The fingerprints of both lists, if either gives them (then both must, unless empty).
private func fingerprints(
    _ old: UnsafePointer<UInt64>?, _ oldCount: Int, _ new: UnsafePointer<UInt64>?, _ newCount: Int, _ name: String
) throws -> (old: UnsafePointer<UInt64>, new: UnsafePointer<UInt64>)? {
    if old == nil && new == nil { return nil }
    if oldCount > 0 && old == nil { throw CError.null("old_list->\(name) (new_list has them)") }
    if newCount > 0 && new == nil { throw CError.null("new_list->\(name) (old_list has them)") }
    // A side without items reads nothing: any non-NULL pointer stands in for it.
    let some = (old ?? new)!
    return (old ?? some, new ?? some)
}

@_cdecl("dfs_list_sections_diff_free")
public func dfs_list_sections_diff_free(_ diff: UnsafeMutablePointer<dfs_list_sections_diff>?) {
    guard let diff else { return }
    free(diff.pointee.block)
    diff.pointee = dfs_list_sections_diff()
}

/// Lays a sections diff out as `dfs_list_sections_diff`: the item diffs' structs first,
/// then every int32_t array, in one malloc'd block.
private enum CSectionsDiffBlock {
    static func make(_ diff: ListSectionsDiff, flags: UInt32) throws -> dfs_list_sections_diff {
        let moveThenReload = flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD.rawValue != 0
        let batch = moveThenReload || flags & DFS_LIST_BATCH.rawValue != 0
            ? diff.batch(movedAndChanged: moveThenReload ? .moveThenReload : .deleteAndInsert)
            : nil
        let wantScript = flags & DFS_LIST_SCRIPT.rawValue != 0
        let sectionsScript = wantScript ? diff.sections.script() : nil
        let itemScripts = wantScript ? diff.items.map { $0.script() } : nil

        var values = CListDiffBlock.valueCount(diff.sections, nil, sectionsScript)
        for (j, items) in diff.items.enumerated() {
            values += CListDiffBlock.valueCount(items, nil, itemScripts?[j])
        }
        if let batch {
            values += batch.sectionDeletes.count + batch.sectionInserts.count + 2 * batch.sectionMoves.count
                + batch.sectionReloads.count + batch.sectionReloadsAfterMoves.count
                + 2 * (batch.itemDeletes.count + batch.itemInserts.count + batch.itemReloads.count
                    + batch.itemReloadsAfterMoves.count)
                + 4 * batch.itemMoves.count
        }
        // The structs first: malloc's alignment suits them, and their size keeps the
        // int32_t values after them aligned.
        let structBytes = diff.items.count * MemoryLayout<dfs_list_diff>.stride
        let bytes = structBytes + values * MemoryLayout<Int32>.stride
        guard let raw = malloc(max(bytes, 1)) else {
            throw CError(status: DFS_ERR_MEMORY, message: "out of memory for a sections diff of \(bytes) bytes")
        }
        let itemDiffs = raw.bindMemory(to: dfs_list_diff.self, capacity: diff.items.count)
        var cursor = CInt32Cursor((raw + structBytes).bindMemory(to: Int32.self, capacity: max(values, 1)))

        var result = dfs_list_sections_diff()
        result.block = raw
        result.has_duplicates = diff.hasDuplicates ? 1 : 0
        result.sections = CListDiffBlock.fill(diff.sections, nil, sectionsScript, &cursor)
        for (j, items) in diff.items.enumerated() {
            (itemDiffs + j).initialize(to: CListDiffBlock.fill(items, nil, itemScripts?[j], &cursor))
        }
        result.item_diff_count = Int32(diff.items.count)
        result.items = diff.items.isEmpty ? nil : UnsafePointer(itemDiffs)
        if let batch { put(batch, into: &result, &cursor) }
        precondition(cursor.written == values, "sections diff block size")
        return result
    }

    private static func put(
        _ batch: ListSectionsBatch, into result: inout dfs_list_sections_diff, _ cursor: inout CInt32Cursor
    ) {
        func paths(_ paths: [ListIndexPath]) -> UnsafePointer<Int32>? {
            cursor.put(paths, width: 2) { path, to in
                to[0] = Int32(truncatingIfNeeded: path.section)
                to[1] = Int32(truncatingIfNeeded: path.item)
            }
        }
        result.batch_section_delete_count = Int32(batch.sectionDeletes.count)
        result.batch_section_insert_count = Int32(batch.sectionInserts.count)
        result.batch_section_move_count = Int32(batch.sectionMoves.count)
        result.batch_section_reload_count = Int32(batch.sectionReloads.count)
        result.batch_section_reload_after_move_count = Int32(batch.sectionReloadsAfterMoves.count)
        result.batch_item_delete_count = Int32(batch.itemDeletes.count)
        result.batch_item_insert_count = Int32(batch.itemInserts.count)
        result.batch_item_move_count = Int32(batch.itemMoves.count)
        result.batch_item_reload_count = Int32(batch.itemReloads.count)
        result.batch_item_reload_after_move_count = Int32(batch.itemReloadsAfterMoves.count)
        result.batch_section_deletes = cursor.put(batch.sectionDeletes)
        result.batch_section_inserts = cursor.put(batch.sectionInserts)
        result.batch_section_moves = cursor.put(batch.sectionMoves)
        result.batch_section_reloads = cursor.put(batch.sectionReloads)
        result.batch_section_reloads_after_moves = cursor.put(batch.sectionReloadsAfterMoves)
        result.batch_item_deletes = paths(batch.itemDeletes)
        result.batch_item_inserts = paths(batch.itemInserts)
        result.batch_item_moves = cursor.put(batch.itemMoves, width: 4) { move, to in
            to[0] = Int32(truncatingIfNeeded: move.old.section)
            to[1] = Int32(truncatingIfNeeded: move.old.item)
            to[2] = Int32(truncatingIfNeeded: move.new.section)
            to[3] = Int32(truncatingIfNeeded: move.new.item)
        }
        result.batch_item_reloads = paths(batch.itemReloads)
        result.batch_item_reloads_after_moves = paths(batch.itemReloadsAfterMoves)
    }
}
