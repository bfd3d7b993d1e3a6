import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The keyed list diff for C (include/diffuser.h, "Lists"): keys are 64-bit values,
// content is a fingerprint or a callback, and the result is flat int32_t arrays in one
// malloc'd block. The diff itself is the core's ListDiff, and dfs_diffuser_into_list is
// the core's intoList node (Diffuser.intoList(count:key:sameKey:sameContent:keep:counted:_:))
// over a dfs_list_reader and a sink; this file only converts.

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

// MARK: intoList

/// The functions of a `dfs_list_reader`, as the core's `intoList` node calls them: each
/// call translates one C call and its failure; when and in which order is the core's.
final class CListReader {
    let reader: dfs_list_reader
    let count: @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?) -> Int32
    let key: @convention(c) (UnsafeRawPointer?, Int32, UnsafeMutablePointer<UInt64>?, UnsafeMutableRawPointer?) -> Int32
    let ctx: UnsafeMutableRawPointer?
    /// Runs the reader's destroy once the node is gone.
    let keeper: CallbackContext?
    /// Who the reader is in error messages ("the list reader").
    let role: String

    /// `name`: the reader's parameter, for a NULL function (`reader`, `reader->sections`);
    /// `role`: what failing callbacks are called in messages.
    init(_ callback: CCallback<dfs_list_reader>, name: String = "reader", role: String = "the list reader") throws {
        let function = try CFunction(callback, name)
        guard let count = function.fn.count else { throw CError.null("\(name)->count") }
        guard let key = function.fn.key else { throw CError.null("\(name)->key") }
        reader = function.fn
        self.count = count
        self.key = key
        ctx = function.ctx
        keeper = function.keeper
        self.role = role
    }

    func count(of list: CValue) throws -> Int {
        var result = 0
        let serial = dfsi_error_serial()
        let code = count(list.pointer, &result, ctx)
        if code != 0 { throw CError.callback("\(role)'s count", code: code, since: serial) }
        // size_t read as Int: a count above PTRDIFF_MAX is negative here.
        guard result >= 0 && result <= maxListCount else {
            throw CError.argument("\(role)'s count \(UInt(bitPattern: result)) is too large (at most \(maxListCount))")
        }
        try reserveListMemory(items: result, "\(result) items (\(role)'s count)")
        return result
    }

    func key(of list: CValue, _ index: Int) throws -> UInt64 {
        var result: UInt64 = 0
        let serial = dfsi_error_serial()
        let code = key(list.pointer, Int32(truncatingIfNeeded: index), &result, ctx)
        if code != 0 { throw CError.callback("\(role)'s key", code: code, since: serial) }
        return result
    }

    func sameKey(_ a: CHashedListKey, _ b: CHashedListKey) throws -> Bool {
        // Only called when the reader has same_key (the other keys are compared by ==).
        let serial = dfsi_error_serial()
        let answer = reader.same_key!(a.list, a.index, b.list, b.index, ctx)
        if answer < 0 { throw CError.callback("\(role)'s same_key", code: answer, since: serial) }
        return answer != 0
    }

    func sameContent(_ old: CValue, _ i: Int, _ new: CValue, _ j: Int) throws -> Bool {
        let oldIndex = Int32(truncatingIfNeeded: i)
        let newIndex = Int32(truncatingIfNeeded: j)
        if let sameContent = reader.same_content {
            let serial = dfsi_error_serial()
            let answer = sameContent(old.pointer, oldIndex, new.pointer, newIndex, ctx)
            if answer < 0 { throw CError.callback("\(role)'s same_content", code: answer, since: serial) }
            return answer != 0
        }
        guard let content = reader.content else { return true }
        var a: UInt64 = 0
        var b: UInt64 = 0
        var serial = dfsi_error_serial()
        var code = content(old.pointer, oldIndex, &a, ctx)
        if code == 0 {
            serial = dfsi_error_serial()
            code = content(new.pointer, newIndex, &b, ctx)
        }
        if code != 0 { throw CError.callback("\(role)'s content", code: code, since: serial) }
        return a == b
    }
}

extension CListReader {
    /// The diff from `old` to `new`, asking the reader as the `intoList` node asks it on
    /// a later run: `count(old)`, `count(new)`, then keys, `same_key` and content in the
    /// order `ListDiff` asks for them. A nil `old` is the empty list, not asked.
    /// `ofSections`: the lists are those of a sections diff, each of whose new items (a
    /// section) gets an item diff.
    func diff(from old: CValue?, to new: CValue, ofSections: Bool = false) throws -> ListDiff {
        let oldCount = try old.map { try count(of: $0) } ?? 0
        // Without an old list there are no old items to ask about: `new` stands in, unread.
        let old = old ?? new
        let newCount = try count(of: new)
        try reserveListMemory(
            items: oldCount + newCount, newSections: ofSections ? newCount : 0,
            "\(oldCount) + \(newCount) \(ofSections ? "sections" : "items")")
        let sameContent: (Int, Int) throws -> Bool = { try self.sameContent(old, $0, new, $1) }
        if reader.same_key == nil {
            return try ListDiff(
                oldCount: oldCount, newCount: newCount,
                oldKey: { try self.key(of: old, $0) }, newKey: { try self.key(of: new, $0) },
                sameKey: { $0 == $1 }, sameContent: sameContent)
        }
        return try ListDiff(
            oldCount: oldCount, newCount: newCount,
            oldKey: { try self.hashedKey(of: old, $0) }, newKey: { try self.hashedKey(of: new, $0) },
            sameKey: { a, b in try a.hash == b.hash && self.sameKey(a, b) }, sameContent: sameContent)
    }

    /// The key of item `index` of `list` as a hash that `same_key` decides.
    func hashedKey(of list: CValue, _ index: Int) throws -> CHashedListKey {
        CHashedListKey(hash: try key(of: list, index), list: list.pointer, index: Int32(truncatingIfNeeded: index))
    }
}

@_cdecl("dfs_list_diff_read")
public func dfs_list_diff_read(
    _ reader: UnsafePointer<dfs_list_reader>?, _ readerCtx: UnsafeMutableRawPointer?,
    _ oldList: UnsafeRawPointer?, _ newList: UnsafeRawPointer?, _ flags: UInt32,
    _ out: UnsafeMutablePointer<dfs_list_diff>?
) -> dfs_status {
    produce(out, empty: dfs_list_diff()) {
        guard let reader else { throw CError.null("reader") }
        let lists = try CListReader(CCallback(reader.pointee, readerCtx, nil))
        try checkListFlags(flags)
        return try listDiffBlock(lists.diff(from: CValue(oldList), to: CValue(newList)), flags: flags)
    }
}

/// A key of a list whose reader has `same_key`: the 64-bit key is only a hash, and the
/// item it came from is what `same_key` compares. The core compares these keys only
/// through `CListReader.sameKey` (after their hashes); `==` here is the exact identity
/// that `Hashable` needs.
struct CHashedListKey: Hashable {
    let hash: UInt64
    let list: UnsafeRawPointer?
    let index: Int32

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    static func == (a: CHashedListKey, b: CHashedListKey) -> Bool {
        a.hash == b.hash && a.list == b.list && a.index == b.index
    }
}

/// A `dfs_list_sink_fn`: lays the core's diff out as a `dfs_list_diff` with the parts
/// the flags ask for, lends it to the sink for the call, and frees it.
struct CListSink {
    let function: CFunction<dfs_list_sink_fn>
    let flags: UInt32

    init(_ callback: CCallback<dfs_list_sink_fn>, flags: UInt32) throws {
        function = try CFunction(callback, "sink")
        self.flags = flags
    }

    /// `isFirst`: the node applied no list yet (its `old` is nil), as Swift's
    /// `ListChanges.isFirst`.
    func apply(_ diff: ListDiff, _ new: CValue, isFirst: Bool) throws {
        var changes = try listDiffBlock(diff, flags: flags)
        defer { free(changes.block) }
        let serial = dfsi_error_serial()
        let code = function.fn(&changes, new.pointer, isFirst ? 1 : 0, function.ctx)
        if code != 0 { throw CError.callback("the list sink", code: code, since: serial) }
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

@_cdecl("dfs_diffuser_into_list")
public func dfs_diffuser_into_list(
    _ type: OpaquePointer?, _ reader: UnsafePointer<dfs_list_reader>?, _ readerCtx: UnsafeMutableRawPointer?,
    _ readerDestroy: dfs_destroy_fn?, _ flags: UInt32, _ sink: dfs_list_sink_fn?,
    _ sinkCtx: UnsafeMutableRawPointer?, _ sinkDestroy: dfs_destroy_fn?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    // Both callbacks first, so that both destroys run once whatever fails below.
    let readerCallback = CCallback(reader?.pointee, readerCtx, readerDestroy)
    let sinkCallback = CCallback(sink, sinkCtx, sinkDestroy)
    return produce(out) {
        let valueType = try lookupType(type)
        let lists = try CListReader(readerCallback)
        let apply = try CListSink(sinkCallback, flags: flags)
        try checkListFlags(flags)
        let keep: (CValue) throws -> CValue = { try valueType.kept($0) }
        let sink: (CValue?, CValue, ListDiff) throws -> Void = { old, new, diff in
            try apply.apply(diff, new, isFirst: old == nil)
        }
        // What any diff of the two lists holds at once, as `CListReader.diff` asks.
        let reserveBoth: (Int, Int) throws -> Void = { old, new in
            try reserveListMemory(items: old + new, "\(old) + \(new) items")
        }
        let node: Diffuser<CValue>
        if lists.reader.same_key == nil {
            node = .intoList(
                count: { try lists.count(of: $0) },
                key: { try lists.key(of: $0, $1) },
                sameKey: { $0 == $1 },
                sameContent: { try lists.sameContent($0, $1, $2, $3) },
                keep: keep, counted: reserveBoth, sink)
        } else {
            node = .intoList(
                count: { try lists.count(of: $0) },
                key: { try lists.hashedKey(of: $0, $1) },
                sameKey: { a, b in try a.hash == b.hash && lists.sameKey(a, b) },
                sameContent: { try lists.sameContent($0, $1, $2, $3) },
                keep: keep, counted: reserveBoth, sink)
        }
        return try publish(node, valueType)
    }
}
