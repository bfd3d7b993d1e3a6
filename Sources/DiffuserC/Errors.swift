import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error of the C ABI: a status code and the message `dfs_last_error` will give.
struct CError: Error {
    let status: dfs_status
    let message: String

    static func null(_ what: String) -> CError {
        CError(status: DFS_ERR_NULL, message: "\(what) is NULL")
    }

    static func argument(_ message: String) -> CError {
        CError(status: DFS_ERR_ARGUMENT, message: message)
    }

    static func type(_ message: String) -> CError {
        CError(status: DFS_ERR_TYPE, message: message)
    }

    /// A user callback returned `code`: the message it set with `dfs_set_error` while it
    /// ran, or a description of the callback. `serial` is `dfsi_error_serial()` read right
    /// before the call: a message set before it (by a callback that then succeeded) is
    /// not this callback's.
    @inline(never)
    static func callback(_ role: String, code: Int32, since serial: UInt64) -> CError {
        let message = ThreadError.takePending(since: serial) ?? "\(role) returned \(code)"
        return CError(status: DFS_ERR_CALLBACK, message: message)
    }
}

/// A count the caller passed as a `size_t` (which Swift reads as an `Int`), if it is at
/// most `limit`; otherwise a `DFS_ERR_ARGUMENT` naming `name`, the count as given and the
/// limit. A `size_t` above `Int.max` reads as negative and is refused too.
func checkedCount(_ count: Int, _ name: @autoclosure () -> String, atMost limit: Int) throws -> Int {
    guard count >= 0 && count <= limit else {
        throw CError.argument("\(name()) \(UInt(bitPattern: count)) is out of range (at most \(limit))")
    }
    return count
}

/// The most children, feedbacks, handlers or start effects one call takes.
let maxMembers = (1 << 24) - 1

/// Per-thread error state: the last error's message, and the message a callback set
/// with `dfs_set_error` before failing.
enum ThreadError {
    private final class Slot {
        var last: UnsafeMutablePointer<CChar>?
        var pending: String?
        deinit { free(last) }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            #if canImport(Darwin)
            Unmanaged<Slot>.fromOpaque(raw).release()
            #else
            if let raw { Unmanaged<Slot>.fromOpaque(raw).release() }
            #endif
        }
        return key
    }()

    private static var slot: Slot {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Slot>.fromOpaque(raw).takeUnretainedValue()
        }
        let fresh = Slot()
        pthread_setspecific(key, Unmanaged.passRetained(fresh).toOpaque())
        return fresh
    }

    static func setLast(_ message: String) {
        let s = slot
        free(s.last)
        s.last = strdup(message)
    }

    static var last: UnsafePointer<CChar>? {
        UnsafePointer(slot.last)
    }

    static func setPending(_ message: String?) {
        let s = slot
        s.pending = message
        if let message {
            setLast(message)
        } else {
            // dfs_set_error(NULL) clears the message (include/diffuser.h).
            free(s.last)
            s.last = nil
        }
    }

    /// Forgets the pending message.
    static func discardPending() {
        slot.pending = nil
    }

    /// The message `dfs_set_error` set since the thread's error serial was `serial`, if
    /// any; the pending message is cleared either way (a message set earlier belongs to a
    /// callback that returned without failing).
    static func takePending(since serial: UInt64) -> String? {
        let s = slot
        defer { s.pending = nil }
        return dfsi_error_serial() != serial ? s.pending : nil
    }
}

/// Runs the body of an exported function that may call callbacks, then forgets a
/// `dfs_set_error` message set during it and still pending: a failing callback takes its
/// own message, so one left was set by callbacks that returned 0, and is for no failure,
/// not even that of the callback that made this call (a nested run, an emission) if it
/// fails after it.
@inline(__always)
func forgettingUntakenMessages<R>(_ body: () throws -> R) rethrows -> R {
    let serial = dfsi_error_serial()
    defer { if dfsi_error_serial() != serial { ThreadError.discardPending() } }
    return try body()
}

/// Runs the body of an exported function: turns a thrown `CError` into its status and
/// records its message; any other error (which the core would only throw if a callback
/// layer were missing) becomes DFS_ERR_CALLBACK.
@inline(__always)
func guarded(_ body: () throws -> Void) -> dfs_status {
    do {
        try forgettingUntakenMessages(body)
        return DFS_OK
    } catch let error as CError {
        ThreadError.setLast(error.message)
        return error.status
    } catch {
        ThreadError.setLast("unexpected error: \(error)")
        return DFS_ERR_CALLBACK
    }
}

/// Stores the value `body` makes through an out pointer, which holds `empty` from the
/// start (so a failure leaves it so): for the functions that fill a struct the caller
/// owns.
@inline(__always)
func produce<T>(_ out: UnsafeMutablePointer<T>?, empty: T, _ body: () throws -> T) -> dfs_status {
    out?.pointee = empty
    return guarded {
        guard let out else { throw CError.null("out") }
        out.pointee = try body()
    }
}

/// Stores `value` through an out pointer after `body` succeeded; clears it on failure.
@inline(__always)
func produce(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ body: () throws -> OpaquePointer) -> dfs_status {
    out?.pointee = nil
    return guarded {
        guard let out else { throw CError.null("out") }
        out.pointee = try body()
    }
}
