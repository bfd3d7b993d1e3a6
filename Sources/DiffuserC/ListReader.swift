import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// How the C API reads list values (`dfs_list_reader`): counts, 64-bit keys, and the
// reader's `same_key` and `same_content`, for `dfs_list_diff_read` (defined here), the
// sections diff and `dfs_diffuser_into_list`.

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
