import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The keyed list diff for C (include/diffuser.h, "Lists"): keys are 64-bit values,
// content is a fingerprint or a callback, and the result is flat int32_t arrays in one
// malloc'd block. The diff itself is the core's ListDiff; this file only converts. Lists
// read through a dfs_list_reader (dfs_list_diff_read) are ListReader.swift, and
// dfs_diffuser_into_list is IntoListExports.swift.

/// The largest list the C API takes: indices are int32_t.
let maxListCount = Int(Int32.max) - 1

/// Refuses with `DFS_ERR_MEMORY` a diff whose memory could not be had, before any item is
/// read: the core is Swift, which stops the process when an allocation of its own fails.
/// What every diff holds at once is asked of malloc and given back: 12 bytes an item of
/// either list (the core's index maps, 8, and the result's, 4) and, for a sections diff,
/// each new section's item diff in the core and in the result. A lower bound, so that
/// no diff that fits is refused: one that fits it but not the diff's whole peak still
/// stops the process (include/diffuser.h, "Lists").
func reserveListMemory(items: Int, newSections: Int = 0, _ what: @autoclosure () -> String) throws {
    let perSection = MemoryLayout<ListDiff>.stride + MemoryLayout<dfs_list_diff>.stride
    let (itemBytes, itemsOverflow) = items.multipliedReportingOverflow(by: 12)
    let (sectionBytes, sectionsOverflow) = newSections.multipliedReportingOverflow(by: perSection)
    let (bytes, sumOverflow) = itemBytes.addingReportingOverflow(sectionBytes)
    guard !itemsOverflow, !sectionsOverflow, !sumOverflow, dfsi_can_allocate(bytes) != 0 else {
        throw CError(status: DFS_ERR_MEMORY, message: "out of memory for a list diff of \(what())")
    }
}

/// One side of a diff, read from a `dfs_list_side`.
private struct CListSide {
    let keys: UnsafePointer<UInt64>?
    let contents: UnsafePointer<UInt64>?
    let count: Int

    init(_ side: UnsafePointer<dfs_list_side>?, _ name: String) throws {
        guard let side else { throw CError.null(name) }
        let value = side.pointee
        count = try checkedCount(value.count, "\(name)->count", atMost: maxListCount)
        if count > 0 && value.keys == nil { throw CError.null("\(name)->keys") }
        keys = value.keys
        contents = value.contents
    }
}

@_cdecl("dfs_list_diff_compute")
public func dfs_list_diff_compute(
    _ oldList: UnsafePointer<dfs_list_side>?, _ newList: UnsafePointer<dfs_list_side>?,
    _ sameContent: dfs_list_same_fn?, _ ctx: UnsafeMutableRawPointer?, _ flags: UInt32,
    _ out: UnsafeMutablePointer<dfs_list_diff>?
) -> dfs_status {
    produce(out, empty: dfs_list_diff()) {
        try checkListFlags(flags)
        let old = try CListSide(oldList, "old_list")
        let new = try CListSide(newList, "new_list")
        try reserveListMemory(items: old.count + new.count, "\(old.count) + \(new.count) items")
        let diff: ListDiff
        if let sameContent {
            diff = try ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { old.keys![$0] }, newKey: { new.keys![$0] },
                sameContent: { i, j in
                    let serial = dfsi_error_serial()
                    let result = sameContent(Int32(truncatingIfNeeded: i), Int32(truncatingIfNeeded: j), ctx)
                    if result < 0 { throw CError.callback("same_content", code: result, since: serial) }
                    return result != 0
                })
        } else if old.contents != nil || new.contents != nil {
            if old.count > 0 && old.contents == nil { throw CError.null("old_list->contents (new_list has contents)") }
            if new.count > 0 && new.contents == nil { throw CError.null("new_list->contents (old_list has contents)") }
            diff = ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { old.keys![$0] }, newKey: { new.keys![$0] },
                sameContent: { old.contents![$0] == new.contents![$1] })
        } else {
            diff = ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { old.keys![$0] }, newKey: { new.keys![$0] },
                sameContent: { _, _ in true })
        }
        return try listDiffBlock(diff, flags: flags)
    }
}

@_cdecl("dfs_list_diff_free")
public func dfs_list_diff_free(_ diff: UnsafeMutablePointer<dfs_list_diff>?) {
    guard let diff else { return }
    free(diff.pointee.block)
    diff.pointee = dfs_list_diff()
}

/// Lays a diff out as `dfs_list_diff`: every array in one block of int32_t. The sections
/// diff (ListSectionsExports.swift) lays several diffs out in one block of its own, with
/// `valueCount` and `fill`.
enum CListDiffBlock {
    static func make(_ diff: ListDiff, _ batch: ListBatch?, _ script: ListScript?) throws -> dfs_list_diff {
        let total = valueCount(diff, batch, script)
        guard let raw = malloc(max(total, 1) * MemoryLayout<Int32>.stride) else {
            throw CError(status: DFS_ERR_MEMORY, message: "out of memory for a list diff of \(total) values")
        }
        var cursor = CInt32Cursor(raw.bindMemory(to: Int32.self, capacity: max(total, 1)))
        var result = fill(diff, batch, script, &cursor)
        precondition(cursor.written == total, "list diff block size")
        result.block = raw
        return result
    }

    /// The number of int32_t values `fill` writes.
    static func valueCount(_ diff: ListDiff, _ batch: ListBatch?, _ script: ListScript?) -> Int {
        var total = diff.deletes.count + diff.inserts.count + 2 * diff.moves.count + 2 * diff.updates.count
            + diff.oldCount + diff.newCount
        if let batch {
            total += batch.deletes.count + batch.inserts.count + 2 * batch.moves.count + batch.reloads.count
                + batch.reloadsAfterMoves.count
        }
        if let script { total += 3 * script.steps.count }
        return total
    }

    /// The diff with its arrays written at `cursor` (which it advances); `block` is NULL.
    static func fill(
        _ diff: ListDiff, _ batch: ListBatch?, _ script: ListScript?, _ cursor: inout CInt32Cursor
    ) -> dfs_list_diff {
        var result = dfs_list_diff()
        result.old_count = Int32(diff.oldCount)
        result.new_count = Int32(diff.newCount)
        result.has_duplicates = diff.hasDuplicates ? 1 : 0
        result.delete_count = Int32(diff.deletes.count)
        result.insert_count = Int32(diff.inserts.count)
        result.move_count = Int32(diff.moves.count)
        result.update_count = Int32(diff.updates.count)
        result.deletes = cursor.put(diff.deletes)
        result.inserts = cursor.put(diff.inserts)
        result.moves = cursor.put(diff.moves)
        result.updates = cursor.put(diff.updates)
        result.old_to_new = cursor.put(diff.oldToNew)
        result.new_to_old = cursor.put(diff.newToOld)
        if let batch {
            result.batch_delete_count = Int32(batch.deletes.count)
            result.batch_insert_count = Int32(batch.inserts.count)
            result.batch_move_count = Int32(batch.moves.count)
            result.batch_reload_count = Int32(batch.reloads.count)
            result.batch_reload_after_move_count = Int32(batch.reloadsAfterMoves.count)
            result.batch_deletes = cursor.put(batch.deletes)
            result.batch_inserts = cursor.put(batch.inserts)
            result.batch_moves = cursor.put(batch.moves)
            result.batch_reloads = cursor.put(batch.reloads)
            result.batch_reloads_after_moves = cursor.put(batch.reloadsAfterMoves)
        }
        if let script {
            result.script_count = Int32(script.steps.count)
            result.script = cursor.put(script.steps, width: 3) { step, at in
                let (kind, a, b): (dfs_list_step, Int, Int)
                switch step {
                case let .remove(index, count): (kind, a, b) = (DFS_LIST_REMOVE, index, count)
                case let .move(from, to): (kind, a, b) = (DFS_LIST_MOVE, from, to)
                case let .insert(index, count): (kind, a, b) = (DFS_LIST_INSERT, index, count)
                case let .change(index, count): (kind, a, b) = (DFS_LIST_CHANGE, index, count)
                }
                at[0] = Int32(bitPattern: kind.rawValue)
                at[1] = Int32(truncatingIfNeeded: a)
                at[2] = Int32(truncatingIfNeeded: b)
            }
        }
        return result
    }
}

/// Writes int32_t values one after the other into a block sized beforehand.
struct CInt32Cursor {
    private(set) var at: UnsafeMutablePointer<Int32>
    private let start: UnsafeMutablePointer<Int32>

    init(_ start: UnsafeMutablePointer<Int32>) {
        self.start = start
        at = start
    }

    /// How many values were written.
    var written: Int { at - start }

    /// Copies `values` and returns where they start (NULL if none).
    mutating func put(_ values: [Int]) -> UnsafePointer<Int32>? {
        put(values, width: 1) { value, to in to[0] = Int32(truncatingIfNeeded: value) }
    }

    /// Copies `pairs` as old, new, old, new... (NULL if none).
    mutating func put(_ pairs: [ListDiff.Pair]) -> UnsafePointer<Int32>? {
        put(pairs, width: 2) { pair, to in
            to[0] = Int32(truncatingIfNeeded: pair.old)
            to[1] = Int32(truncatingIfNeeded: pair.new)
        }
    }

    /// Writes each of `values` as `width` int32_t with `write` (NULL if none).
    mutating func put<T>(
        _ values: [T], width: Int, _ write: (T, UnsafeMutablePointer<Int32>) -> Void
    ) -> UnsafePointer<Int32>? {
        if values.isEmpty { return nil }
        let first = at
        for value in values {
            write(value, at)
            at += width
        }
        return UnsafePointer(first)
    }
}

/// Checks the flags of a list diff: only those of `dfs_list_flags`.
func checkListFlags(_ flags: UInt32) throws {
    let known = DFS_LIST_BATCH.rawValue | DFS_LIST_BATCH_MOVE_THEN_RELOAD.rawValue | DFS_LIST_SCRIPT.rawValue
    guard flags & ~known == 0 else { throw CError.argument("unknown flags \(flags & ~known)") }
}

/// `diff` with the parts `flags` asks for, as one `dfs_list_diff` block.
func listDiffBlock(_ diff: ListDiff, flags: UInt32) throws -> dfs_list_diff {
    let moveThenReload = flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD.rawValue != 0
    let batch = moveThenReload || flags & DFS_LIST_BATCH.rawValue != 0
        ? diff.batch(movedAndChanged: moveThenReload ? .moveThenReload : .deleteAndInsert)
        : nil
    let script = flags & DFS_LIST_SCRIPT.rawValue != 0 ? diff.script() : nil
    return try CListDiffBlock.make(diff, batch, script)
}
