import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// The version of the library, as `dfs_version` returns it.
let libraryVersion: StaticString = "0.1.0"

@_cdecl("dfs_version")
public func dfs_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(libraryVersion.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("dfs_abi_version")
public func dfs_abi_version() -> Int32 {
    DFS_ABI_VERSION
}

private let emptyMessage: StaticString = ""

@_cdecl("dfs_last_error")
public func dfs_last_error() -> UnsafePointer<CChar> {
    ThreadError.last ?? UnsafeRawPointer(emptyMessage.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("dfs_set_error")
public func dfs_set_error(_ message: UnsafePointer<CChar>?) {
    dfsi_error_serial_advance()
    ThreadError.setPending(message.map { String(cString: $0) })
}

private let statusNames: [StaticString] = [
    "DFS_OK", "DFS_ERR_NULL", "DFS_ERR_HANDLE", "DFS_ERR_ARGUMENT", "DFS_ERR_TYPE",
    "DFS_ERR_CALLBACK", "DFS_ERR_MEMORY", "DFS_ERR_STOPPED", "DFS_ERR_DISPOSED",
]
private let unknownStatus: StaticString = "DFS_UNKNOWN"

@_cdecl("dfs_status_name")
public func dfs_status_name(_ status: Int32) -> UnsafePointer<CChar> {
    let name = status >= 0 && Int(status) < statusNames.count ? statusNames[Int(status)] : unknownStatus
    return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}
