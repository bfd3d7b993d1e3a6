import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// Receives every call of a closure made by `dfs_closure_new`: finds the dispatch by
/// handle (a disposed one is gone: the event is dropped) and emits the packed event.
private let closureHandler: dfsi_ffi_handler = { userdata, event in
    guard let handle = OpaquePointer(bitPattern: userdata) else { return DFS_ERR_NULL.rawValue.asInt32 }
    guard let dispatch = try? handles.lookup(handle, .dispatch, as: Dispatch.self, name: "dispatch") else {
        return DFS_OK.rawValue.asInt32
    }
    return guarded { try dispatch.sink(CValue(UnsafeRawPointer(event))) }.rawValue.asInt32
}

extension UInt32 {
    var asInt32: Int32 { Int32(bitPattern: self) }
}

@_cdecl("dfs_closure_new")
public func dfs_closure_new(
    _ dispatch: OpaquePointer?, _ ret: dfs_ffi_type, _ args: UnsafePointer<dfs_ffi_type>?, _ count: Int,
    _ fn: UnsafeMutablePointer<(@convention(c) () -> Void)?>?
) -> dfs_status {
    fn?.pointee = nil
    return guarded {
        guard let fn else { throw CError.null("fn") }
        let target = try handles.lookup(dispatch, .dispatch, as: Dispatch.self, name: "dispatch")
        guard target.type === ValueType.ffiEvent else {
            throw CError.type("the dispatch carries '\(target.type.name)' events, closures emit 'ffi_event'"
                              + target.type.sameNameNote(ValueType.ffiEvent))
        }
        try checkSignature(ret, args, count)
        var made: (@convention(c) () -> Void)?
        var closure: UnsafeMutableRawPointer?
        let status = dfsi_ffi_closure_make(ret, args, count, UInt(bitPattern: dispatch), closureHandler, &made, &closure)
        guard status == DFS_OK.rawValue.asInt32, let closure else {
            throw CError(status: dfs_status(UInt32(bitPattern: status)),
                         message: status == DFS_ERR_MEMORY.rawValue.asInt32
                            ? "libffi could not allocate a closure"
                            : "libffi refused the closure's signature")
        }
        guard target.adopt(closure: closure) else {
            dfsi_ffi_closure_free(closure)
            throw CError(status: DFS_ERR_HANDLE, message: "dispatch: its connection was disposed")
        }
        fn.pointee = made
    }
}

/// The most arguments a closure takes.
private let maxClosureArguments = 32

/// Refuses a signature `dfs_closure_new` cannot make, naming what is wrong: a return
/// type other than void or int, too many arguments, no argument list, or an argument
/// type that is not a value (DFS_FFI_INT8 to DFS_FFI_STRING).
private func checkSignature(_ ret: dfs_ffi_type, _ args: UnsafePointer<dfs_ffi_type>?, _ count: Int) throws {
    guard ret == DFS_FFI_VOID || ret == DFS_FFI_INT else {
        throw CError.argument("the return type (\(Int32(bitPattern: ret.rawValue))) must be DFS_FFI_VOID or DFS_FFI_INT")
    }
    let count = try checkedCount(count, "count", atMost: maxClosureArguments)
    if count > 0 && args == nil { throw CError.null("args") }
    let valid = DFS_FFI_INT8.rawValue...DFS_FFI_STRING.rawValue
    for i in 0..<count where !valid.contains(args![i].rawValue) {
        throw CError.argument("args[\(i)] (\(Int32(bitPattern: args![i].rawValue))) is not an argument type (DFS_FFI_INT8 to DFS_FFI_STRING)")
    }
}
