import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// What a `dfs_fuser` handle refers to: a core fuser over C values and its event type.
final class CFuser {
    let fuser: Fuser<CValue>
    let type: TypeReference

    init(_ fuser: Fuser<CValue>, _ type: ValueType) throws {
        self.fuser = fuser
        self.type = try TypeReference(type)
    }
}

/// What a `dfs_dispatch` handle refers to: the sink of one source connection, and the
/// closures made for it, which die with it.
final class Dispatch: @unchecked Sendable {
    let sink: (CValue) throws -> Void
    let type: ValueType
    private let lock = Lock()
    private var closures: [UnsafeMutableRawPointer] = []
    private var ended = false

    init(sink: @escaping (CValue) throws -> Void, type: ValueType) {
        self.sink = sink
        self.type = type
    }

    /// Keeps `closure` until the connection ends; false (and the closure not kept) once
    /// the connection's dispose has begun: a closure made then, on another thread, could
    /// never be unregistered by the source's disconnect.
    func adopt(closure: UnsafeMutableRawPointer) -> Bool {
        lock.withLock {
            if ended { return false }
            closures.append(closure)
            return true
        }
    }

    /// Refuses new closures: called before the source's disconnect.
    func close() {
        lock.withLock { ended = true }
    }

    /// Frees the closures: called once the source has disconnected.
    func end() {
        let dead = lock.withLock { () -> [UnsafeMutableRawPointer] in
            ended = true
            defer { closures.removeAll() }
            return closures
        }
        for closure in dead { dfsi_ffi_closure_free(closure) }
    }

    deinit { end() }
}

/// What a `dfs_disposable` handle refers to.
final class CDisposable {
    let disposable: _Disposable

    init(_ disposable: _Disposable) {
        self.disposable = disposable
    }
}

func lookupFuser(_ handle: OpaquePointer?, _ name: @autoclosure () -> String = "fuser") throws -> CFuser {
    try handles.lookup(handle, .fuser, as: CFuser.self, name: name())
}

func publish(_ fuser: Fuser<CValue>, _ type: ValueType) throws -> OpaquePointer {
    handles.insert(try CFuser(fuser, type), kind: .fuser)
}

@_cdecl("dfs_dispatch_emit")
public func dfs_dispatch_emit(_ dispatch: OpaquePointer?, _ event: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try handles.lookup(dispatch, .dispatch, as: Dispatch.self, name: "dispatch")
        try target.sink(CValue(event))
    }
}

@_cdecl("dfs_fuser_from")
public func dfs_fuser_from(
    _ type: OpaquePointer?, _ connect: dfs_source_connect_fn?, _ disconnect: dfs_source_disconnect_fn?,
    _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let context = CallbackContext(ctx, destroy)
    return produce(out) {
        let valueType = try lookupType(type)
        guard let connect else { throw CError.null("connect") }
        let source = Fuser<CValue>(tryConnector: { sink in
            let dispatch = Dispatch(sink: sink, type: valueType)
            let handle = handles.insert(dispatch, kind: .dispatch)
            var connection: UnsafeMutableRawPointer?
            let serial = dfsi_error_serial()
            let code = connect(handle, context.ctx, &connection)
            if code != 0 {
                handles.invalidate(handle)
                dispatch.end()
                throw CError.callback("source connect", code: code, since: serial)
            }
            let token = connection
            return AnonymousDisposable {
                dispatch.close()
                disconnect?(token, context.ctx)
                handles.invalidate(handle)
                dispatch.end()
            }
        })
        return try publish(source, valueType)
    }
}

@_cdecl("dfs_fuser_from_all")
public func dfs_fuser_from_all(
    _ type: OpaquePointer?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        let fusers = try members(list, count, of: valueType) { handle, name in
            let child = try lookupFuser(handle, name())
            return (child.type.type, child.fuser)
        }
        try checkDepth(above: fusers.lazy.map(\.depth).max() ?? 0, of: "fuser")
        return try publish(.fromAll(fusers), valueType)
    }
}

/// Builds an extracting fuser over `child` whose events `make` derives from the C
/// transform: shared by `extract` and `extractUnlessNull`.
private func extracting(
    _ type: OpaquePointer?, _ callback: CCallback<dfs_transform_fn>, _ child: OpaquePointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ make: (@escaping (CValue) throws -> CValue, Fuser<CValue>) -> Fuser<CValue>
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        let inner = try lookupFuser(child, "child")
        let convert = try transformClosure(callback, output: valueType)
        try checkDepth(above: inner.fuser.depth, of: "fuser")
        return try publish(make(convert, inner.fuser), valueType)
    }
}

@_cdecl("dfs_fuser_extract")
public func dfs_fuser_extract(
    _ type: OpaquePointer?, _ transform: dfs_transform_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    extracting(type, CCallback(transform, ctx, destroy), child, out) { convert, inner in
        .extract(throwing: convert, inner)
    }
}

@_cdecl("dfs_fuser_extract_constant")
public func dfs_fuser_extract_constant(
    _ type: OpaquePointer?, _ constant: UnsafeRawPointer?, _ child: OpaquePointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        let inner = try lookupFuser(child, "child")
        try checkDepth(above: inner.fuser.depth, of: "fuser")
        return try publish(.extractConstant(try valueType.keep(constant), inner.fuser), valueType)
    }
}

@_cdecl("dfs_fuser_extract_unless_null")
public func dfs_fuser_extract_unless_null(
    _ type: OpaquePointer?, _ transform: dfs_transform_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    extracting(type, CCallback(transform, ctx, destroy), child, out) { convert, inner in
        .extractUnlessNil(throwing: { event in
            let value = try convert(event)
            return value.pointer == nil ? nil : value
        }, inner)
    }
}

@_cdecl("dfs_fuser_connect")
public func dfs_fuser_connect(
    _ fuser: OpaquePointer?, _ effect: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(effect, ctx, destroy)
    return produce(out) {
        let target = try lookupFuser(fuser)
        let connection = try target.fuser.tryConnect(effectClosure(callback))
        return handles.insert(CDisposable(connection), kind: .disposable)
    }
}

@_cdecl("dfs_fuser_type")
public func dfs_fuser_type(_ fuser: OpaquePointer?) -> OpaquePointer? {
    var result: OpaquePointer?
    _ = guarded { result = try lookupFuser(fuser).type.type.handle }
    return result
}

@_cdecl("dfs_fuser_retain")
public func dfs_fuser_retain(_ fuser: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(fuser, .fuser, name: "fuser") }
}

@_cdecl("dfs_fuser_release")
public func dfs_fuser_release(_ fuser: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(fuser, .fuser, name: "fuser") }
}

@_cdecl("dfs_disposable_dispose")
public func dfs_disposable_dispose(_ disposable: OpaquePointer?) -> dfs_status {
    guarded { try handles.lookup(disposable, .disposable, as: CDisposable.self, name: "disposable").disposable.dispose() }
}

@_cdecl("dfs_disposable_release")
public func dfs_disposable_release(_ disposable: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(disposable, .disposable, name: "disposable") }
}
