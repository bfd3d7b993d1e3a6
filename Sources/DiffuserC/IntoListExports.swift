import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `dfs_diffuser_into_list`: the core's intoList node
// (Diffuser.intoList(count:key:sameKey:sameContent:keep:counted:_:)) over a
// `dfs_list_reader` (ListReader.swift) and a sink that gets each diff laid out as a
// `dfs_list_diff` (ListExports.swift).

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
