import CDiffuserFFI
@_spi(Bindings) import Diffuser

let handles = HandleTable.shared

/// Registers a type and records its handle in it.
@discardableResult
func register(_ type: ValueType, permanent: Bool = false) -> OpaquePointer {
    let handle = handles.insert(type, kind: .type, permanent: permanent)
    type.handle = handle
    return handle
}

// The built-in types' handles. `nonisolated(unsafe)`: a handle is an index and a
// generation in an opaque pointer's bits, never dereferenced, and these are set once.
nonisolated(unsafe) private let pointerTypeHandle = register(ValueType.pointer, permanent: true)
nonisolated(unsafe) private let cstringTypeHandle = register(ValueType.cstring, permanent: true)
nonisolated(unsafe) private let ffiEventTypeHandle = register(ValueType.ffiEvent, permanent: true)

/// Keeps a type's handle alive while an object built on it lives, so that
/// `dfs_diffuser_type` can return it.
///
/// A noncopyable struct rather than an object, so that it lives inside the object that
/// holds it: one allocation less for every diffuser and fuser a C program makes.
struct TypeReference: ~Copyable {
    let type: ValueType

    init(_ type: ValueType) throws {
        try handles.retainForLibrary(type.handle, .type, name: "type")
        self.type = type
    }

    deinit {
        if let handle = type.handle { handles.releaseForLibrary(handle, .type) }
    }
}

func lookupType(_ handle: OpaquePointer?, _ name: @autoclosure () -> String = "type") throws -> ValueType {
    try handles.lookup(handle, .type, as: ValueType.self, name: name())
}

@_cdecl("dfs_type_new")
public func dfs_type_new(
    _ name: UnsafePointer<CChar>?, _ equal: dfs_equal_fn?, _ retain: dfs_retain_fn?,
    _ release: dfs_release_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let context = CallbackContext(ctx, destroy)
    return produce(out) {
        let type = ValueType(name: name.map { String(cString: $0) } ?? "unnamed",
                             equal: equal, retain: retain, release: release, context: context)
        return register(type)
    }
}

@_cdecl("dfs_type_retain")
public func dfs_type_retain(_ type: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(type, .type, name: "type") }
}

@_cdecl("dfs_type_release")
public func dfs_type_release(_ type: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(type, .type, name: "type") }
}

@_cdecl("dfs_type_pointer")
public func dfs_type_pointer() -> OpaquePointer? { pointerTypeHandle }

@_cdecl("dfs_type_cstring")
public func dfs_type_cstring() -> OpaquePointer? { cstringTypeHandle }

@_cdecl("dfs_type_ffi_event")
public func dfs_type_ffi_event() -> OpaquePointer? { ffiEventTypeHandle }
