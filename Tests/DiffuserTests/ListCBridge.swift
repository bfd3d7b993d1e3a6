import XCTest
@_spi(Bindings) @testable import Diffuser
import DiffuserC
import CDiffuserFFI

/// The C list API called on Swift lists and its results read back into Swift values, so
/// that the property tests can compare what C returns with `ListDiff`, `ListBatch`,
/// `ListScript` and `ListSectionsDiff` on the same inputs.

/// A list handed to C as an opaque pointer: a list of a `dfs_list_reader`, or one of the
/// two lists a content callback compares.
final class ListBox {
    let items: [ListItem]
    init(_ items: [ListItem]) { self.items = items }

    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ pointer: UnsafeRawPointer?) -> ListBox {
        Unmanaged<ListBox>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

/// A C list diff read back: the diff, and the batch and script if the flags asked for
/// them.
struct CListDiff: Equatable {
    var diff: ListDiff
    var batch: ListBatch?
    var script: [ListScript.Step]?

    /// How `compute` gives the contents to C.
    enum Contents: CaseIterable { case callback, fingerprints, none }
}

extension CListDiff {
    init(_ c: dfs_list_diff, flags: UInt32) {
        diff = ListDiff(oldCount: Int(c.old_count), newCount: Int(c.new_count),
                        deletes: ints(c.deletes, c.delete_count), inserts: ints(c.inserts, c.insert_count),
                        moves: pairs(c.moves, c.move_count), updates: pairs(c.updates, c.update_count),
                        oldToNew: ints(c.old_to_new, c.old_count), newToOld: ints(c.new_to_old, c.new_count),
                        hasDuplicates: c.has_duplicates != 0)
        if flags & 3 != 0 {
            batch = ListBatch(deletes: ints(c.batch_deletes, c.batch_delete_count),
                              inserts: ints(c.batch_inserts, c.batch_insert_count),
                              moves: pairs(c.batch_moves, c.batch_move_count),
                              reloads: ints(c.batch_reloads, c.batch_reload_count),
                              reloadsAfterMoves: ints(c.batch_reloads_after_moves, c.batch_reload_after_move_count))
        } else {
            precondition(c.batch_delete_count == 0 && c.batch_moves == nil, "a batch not asked for")
        }
        if flags & 4 != 0 {
            script = (0..<Int(c.script_count)).map { k in
                let kind = UInt32(bitPattern: c.script![3 * k]), a = Int(c.script![3 * k + 1]), b = Int(c.script![3 * k + 2])
                switch kind {
                case DFS_LIST_REMOVE.rawValue: return .remove(at: a, count: b)
                case DFS_LIST_MOVE.rawValue: return .move(from: a, to: b)
                case DFS_LIST_INSERT.rawValue: return .insert(at: a, count: b)
                default: return .change(at: a, count: b)
                }
            }
        } else {
            precondition(c.script_count == 0, "a script not asked for")
        }
    }

    /// `dfs_list_diff_compute` of `old` -> `new`.
    static func compute(_ old: [ListItem], _ new: [ListItem], contents: Contents, flags: UInt32) throws -> CListDiff {
        let oldKeys = old.map { UInt64($0.key) }, newKeys = new.map { UInt64($0.key) }
        let oldContents = old.map { UInt64($0.content) }, newContents = new.map { UInt64($0.content) }
        let lists = [ListBox(old), ListBox(new)]
        let sameContent: dfs_list_same_fn = { i, j, ctx in
            let lists = ctx!.assumingMemoryBound(to: ListBox.self)
            return lists[0].items[Int(i)] == lists[1].items[Int(j)] ? 1 : 0
        }
        var out = dfs_list_diff()
        let status = oldKeys.withUnsafeBufferPointer { ok in newKeys.withUnsafeBufferPointer { nk in
            oldContents.withUnsafeBufferPointer { oc in newContents.withUnsafeBufferPointer { nc in
                lists.withUnsafeBufferPointer { ctx in
                    var oldSide = dfs_list_side(keys: ok.baseAddress, contents: contents == .fingerprints ? oc.baseAddress : nil,
                                                count: old.count)
                    var newSide = dfs_list_side(keys: nk.baseAddress, contents: contents == .fingerprints ? nc.baseAddress : nil,
                                                count: new.count)
                    return DiffuserC.dfs_list_diff_compute(&oldSide, &newSide, contents == .callback ? sameContent : nil,
                                                           UnsafeMutableRawPointer(mutating: ctx.baseAddress), flags, &out)
                }
            } }
        } }
        guard status == DFS_OK else { throw ListCheckFailure("dfs_list_diff_compute: \(status)") }
        defer { DiffuserC.dfs_list_diff_free(&out) }
        return CListDiff(out, flags: flags)
    }

    /// `dfs_list_diff_read` of `old` -> `new` through `listReader`.
    static func read(_ old: [ListItem], _ new: [ListItem], hashModulus: Int, fingerprints: Bool,
                     flags: UInt32) throws -> CListDiff {
        let oldBox = ListBox(old), newBox = ListBox(new)
        var reader = listReader(hashModulus: hashModulus, fingerprints: fingerprints)
        var out = dfs_list_diff()
        let status = withExtendedLifetime((oldBox, newBox)) {
            DiffuserC.dfs_list_diff_read(&reader, listReaderContext(hashModulus: hashModulus),
                                         oldBox.pointer, newBox.pointer, flags, &out)
        }
        guard status == DFS_OK else { throw ListCheckFailure("dfs_list_diff_read: \(status)") }
        defer { DiffuserC.dfs_list_diff_free(&out) }
        return CListDiff(out, flags: flags)
    }
}

/// A `dfs_list_reader` over `ListBox` lists. With `hashModulus` > 0 the keys it gives
/// are only `key % hashModulus`, so that distinct keys collide, and `same_key` compares
/// the full keys; its context must be `listReaderContext(hashModulus:)`. With
/// `fingerprints` contents are fingerprints, otherwise `same_content` compares them.
func listReader(hashModulus: Int, fingerprints: Bool) -> dfs_list_reader {
    var reader = dfs_list_reader()
    reader.count = { list, count, _ in count!.pointee = ListBox.from(list).items.count; return 0 }
    if hashModulus > 0 {
        reader.key = { list, i, key, ctx in
            key!.pointee = UInt64(ListBox.from(list).items[Int(i)].key % Int(bitPattern: ctx!))
            return 0
        }
        reader.same_key = { a, i, b, j, _ in
            ListBox.from(a).items[Int(i)].key == ListBox.from(b).items[Int(j)].key ? 1 : 0
        }
    } else {
        reader.key = { list, i, key, _ in key!.pointee = UInt64(ListBox.from(list).items[Int(i)].key); return 0 }
    }
    if fingerprints {
        reader.content = { list, i, fingerprint, _ in
            fingerprint!.pointee = UInt64(ListBox.from(list).items[Int(i)].content)
            return 0
        }
    } else {
        reader.same_content = { a, i, b, j, _ in
            ListBox.from(a).items[Int(i)].content == ListBox.from(b).items[Int(j)].content ? 1 : 0
        }
    }
    return reader
}

/// The context of `listReader(hashModulus:fingerprints:)`: the modulus itself.
func listReaderContext(hashModulus: Int) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer(bitPattern: max(hashModulus, 1))
}

/// A C sections diff read back: the sections' diff, each new section's item diff, their
/// scripts (sections first) if asked for, and the batch if asked for.
struct CSectionsDiff: Equatable {
    var sections: ListDiff
    var items: [ListDiff]
    var scripts: [[ListScript.Step]?]
    var hasDuplicates: Bool
    var batch: ListSectionsBatch?
}

extension CSectionsDiff {
    typealias Section = ListSectionsTests.Section

    init(_ c: dfs_list_sections_diff, flags: UInt32) {
        let scriptOnly = flags & 4
        let sections = CListDiff(c.sections, flags: scriptOnly)
        let items = (0..<Int(c.item_diff_count)).map { CListDiff(c.items![$0], flags: scriptOnly) }
        self.sections = sections.diff
        self.items = items.map(\.diff)
        scripts = [sections.script] + items.map(\.script)
        hasDuplicates = c.has_duplicates != 0
        guard flags & 3 != 0 else { return }
        var b = ListSectionsBatch(ListSectionsDiff(sections: ListDiff(keys: [Int](), []), items: []))
        b.sectionDeletes = ints(c.batch_section_deletes, c.batch_section_delete_count)
        b.sectionInserts = ints(c.batch_section_inserts, c.batch_section_insert_count)
        b.sectionMoves = pairs(c.batch_section_moves, c.batch_section_move_count)
        b.sectionReloads = ints(c.batch_section_reloads, c.batch_section_reload_count)
        b.sectionReloadsAfterMoves = ints(c.batch_section_reloads_after_moves, c.batch_section_reload_after_move_count)
        b.itemDeletes = indexPaths(c.batch_item_deletes, c.batch_item_delete_count)
        b.itemInserts = indexPaths(c.batch_item_inserts, c.batch_item_insert_count)
        b.itemReloads = indexPaths(c.batch_item_reloads, c.batch_item_reload_count)
        b.itemReloadsAfterMoves = indexPaths(c.batch_item_reloads_after_moves, c.batch_item_reload_after_move_count)
        let m = c.batch_item_moves
        b.itemMoves = (0..<Int(c.batch_item_move_count)).map {
            ListSectionsBatch.ItemMove(old: ListIndexPath(section: Int(m![4 * $0]), item: Int(m![4 * $0 + 1])),
                                       new: ListIndexPath(section: Int(m![4 * $0 + 2]), item: Int(m![4 * $0 + 3])))
        }
        batch = b
    }

    /// `dfs_list_sections_diff_compute` of `old` -> `new`, contents by the callback or by
    /// fingerprints.
    static func compute(_ old: [Section], _ new: [Section], callback: Bool, flags: UInt32) throws -> CSectionsDiff {
        /// One side laid out flat: section keys, headers, item counts, item keys, item contents.
        func flat(_ l: [Section]) -> ([UInt64], [UInt64], [Int], [UInt64], [UInt64]) {
            (l.map { UInt64($0.key) }, l.map { UInt64($0.header) }, l.map { $0.items.count },
             l.flatMap { $0.items.map { UInt64($0.key) } }, l.flatMap { $0.items.map { UInt64($0.content) } })
        }
        let o = flat(old), n = flat(new)
        let lists = [SectionsBox(old), SectionsBox(new)]
        let same: dfs_list_sections_same_fn = { os, oi, ns, ni, ctx in
            let lists = ctx!.assumingMemoryBound(to: SectionsBox.self)
            let old = lists[0].sections[Int(os)], new = lists[1].sections[Int(ns)]
            if oi < 0 { return old.header == new.header ? 1 : 0 }
            return old.items[Int(oi)] == new.items[Int(ni)] ? 1 : 0
        }
        var out = dfs_list_sections_diff()
        let status = o.0.withUnsafeBufferPointer { ok in o.1.withUnsafeBufferPointer { oh in
            o.2.withUnsafeBufferPointer { oc in o.3.withUnsafeBufferPointer { oik in o.4.withUnsafeBufferPointer { oic in
            n.0.withUnsafeBufferPointer { nk in n.1.withUnsafeBufferPointer { nh in
            n.2.withUnsafeBufferPointer { nc in n.3.withUnsafeBufferPointer { nik in n.4.withUnsafeBufferPointer { nic in
            lists.withUnsafeBufferPointer { ctx in
                var oldSide = dfs_list_sections_side(
                    section_keys: ok.baseAddress, section_contents: callback ? nil : oh.baseAddress,
                    item_counts: oc.baseAddress, item_keys: oik.baseAddress,
                    item_contents: callback ? nil : oic.baseAddress, section_count: old.count)
                var newSide = dfs_list_sections_side(
                    section_keys: nk.baseAddress, section_contents: callback ? nil : nh.baseAddress,
                    item_counts: nc.baseAddress, item_keys: nik.baseAddress,
                    item_contents: callback ? nil : nic.baseAddress, section_count: new.count)
                return DiffuserC.dfs_list_sections_diff_compute(&oldSide, &newSide, callback ? same : nil,
                                                                UnsafeMutableRawPointer(mutating: ctx.baseAddress), flags, &out)
            }
            } } } } }
            } } } } }
        guard status == DFS_OK else { throw ListCheckFailure("dfs_list_sections_diff_compute: \(status)") }
        defer { DiffuserC.dfs_list_sections_diff_free(&out) }
        return CSectionsDiff(out, flags: flags)
    }

    /// A list of sections handed to the content callback.
    final class SectionsBox {
        let sections: [Section]
        init(_ sections: [Section]) { self.sections = sections }
    }
}

private func ints(_ p: UnsafePointer<Int32>?, _ count: Int32) -> [Int] { (0..<Int(count)).map { Int(p![$0]) } }

private func pairs(_ p: UnsafePointer<Int32>?, _ count: Int32) -> [ListDiff.Pair] {
    (0..<Int(count)).map { ListDiff.Pair(old: Int(p![2 * $0]), new: Int(p![2 * $0 + 1])) }
}

private func indexPaths(_ p: UnsafePointer<Int32>?, _ count: Int32) -> [ListIndexPath] {
    (0..<Int(count)).map { ListIndexPath(section: Int(p![2 * $0]), item: Int(p![2 * $0 + 1])) }
}
