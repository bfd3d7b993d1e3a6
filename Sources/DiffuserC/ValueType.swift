import Synchronization
import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// A user context with its destroy function: `destroy(ctx)` runs when the last
/// holder of this box (a type, a closure, a callback's copies) goes away.
final class CallbackContext: @unchecked Sendable {
    let ctx: UnsafeMutableRawPointer?
    private let destroy: dfs_destroy_fn?

    init(_ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?) {
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit {
        destroy?(ctx)
    }
}

/// A value type of the C ABI: how to compare values and how to keep them.
final class ValueType: @unchecked Sendable {
    let name: String
    let equalFn: dfs_equal_fn?
    let retainFn: dfs_retain_fn?
    let releaseFn: dfs_release_fn?
    let context: CallbackContext
    /// This type's handle; set once, right after the type is registered.
    var handle: OpaquePointer?
    /// Whether the equality ever answered DFS_EQUAL_SAME to a gate; until it does, the
    /// gates' keeps do not look for the note it leaves (`CEquality`).
    let answersSame = Atomic<Bool>(false)

    init(name: String, equal: dfs_equal_fn?, retain: dfs_retain_fn?, release: dfs_release_fn?,
         context: CallbackContext) {
        self.name = name
        self.equalFn = equal
        self.retainFn = retain
        self.releaseFn = release
        self.context = context
    }

    /// Whether two values are equal; throws if the equality callback reported an error.
    ///
    /// The same pointer is equal without a call: an equality must be reflexive (see
    /// `dfs_equal_fn`), and most parts of an unchanged model are the very pointers the
    /// gates hold.
    @inline(__always)
    func equal(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?) throws -> Bool {
        if a == b { return true }
        guard let equalFn else { return false }
        let serial = dfsi_error_serial()
        let result = equalFn(a, b, context.ctx)
        if result < 0 { throw equalityFailure(result, since: serial) }
        return result != 0
    }

    /// `equal`, with the callback's answer as it gave it: 0 (not equal), 1 (equal) or
    /// DFS_EQUAL_SAME (two references to one value). The same pointer answers 1 without
    /// a call, as in `equal`.
    @inline(__always)
    func compare(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?) throws -> Int32 {
        if a == b { return 1 }
        guard let equalFn else { return 0 }
        let serial = dfsi_error_serial()
        let result = equalFn(a, b, context.ctx)
        if result < 0 { throw equalityFailure(result, since: serial) }
        return result
    }

    /// What an error message about this type and `other`, a different type, adds when
    /// the two have the same name, so that it does not read as a type refused for
    /// itself; nothing otherwise.
    func sameNameNote(_ other: ValueType) -> String {
        name == other.name ? " (two different types named '\(name)')" : ""
    }

    /// The error of an equality callback that returned `code`; kept out of line, so that
    /// the comparison a gate inlines stays small.
    @inline(never)
    private func equalityFailure(_ code: Int32, since serial: UInt64) -> CError {
        CError.callback("equality of type '\(name)'", code: code, since: serial)
    }

    /// A value the core keeps beyond the current call: retained through the type.
    /// NULL stays NULL without a call.
    @inline(__always)
    func keep(_ pointer: UnsafeRawPointer?) throws -> CValue {
        guard let retainFn, let pointer else { return CValue(pointer) }
        guard let kept = retainFn(pointer, context.ctx) else {
            throw CError(status: DFS_ERR_MEMORY, message: "retain of type '\(name)' returned NULL")
        }
        return releaseFn == nil ? CValue(kept) : CValue(kept, owner: ValueOwner(kept, self))
    }

    /// `value` as a cache or a queued run keeps it: a value the core owns stays as it
    /// is; a borrowed one (a run's value, a borrowed part) is retained through the type.
    @inline(__always)
    func kept(_ value: CValue) throws -> CValue {
        // The common case, a value with no owner of a type that retains nothing, made
        // anew: a copy would call swift_retain on the absent owner.
        if value.owner == nil, retainFn == nil { return CValue(value.pointer) }
        return try keptWithOwner(value)
    }

    /// `kept(_:)` for a value with an owner or of a type that retains: out of line.
    @inline(never)
    func keptWithOwner(_ value: CValue) throws -> CValue {
        guard value.owner == nil, retainFn != nil else { return value }
        return try keep(value.pointer)
    }

    /// A value the core received with a reference it must drop (a transform's output).
    @inline(__always)
    func adopt(_ pointer: UnsafeRawPointer?) -> CValue {
        guard releaseFn != nil, let pointer else { return CValue(pointer) }
        return CValue(pointer, owner: ValueOwner(pointer, self))
    }
}

/// Drops a value through its type's release when the last copy of a `CValue` holding it
/// goes away: after the run for a transient value, on replacement for a cached one.
final class ValueOwner {
    let pointer: UnsafeRawPointer
    let type: ValueType

    init(_ pointer: UnsafeRawPointer, _ type: ValueType) {
        self.pointer = pointer
        self.type = type
    }

    deinit {
        type.releaseFn?(pointer, type.context.ctx)
    }
}

/// A value crossing the C ABI: a pointer, and the owner that releases it if the core
/// holds a reference to it. Borrowed values (types without release) have no owner and
/// cost no allocation.
struct CValue {
    /// First, so that a gate finds it in a cached value's leading bytes
    /// (`CEquality.identifyingBytes`).
    let pointer: UnsafeRawPointer?
    let owner: ValueOwner?

    /// Where `owner` lies in a `CValue`, and in a `CValue?`, whose payload comes first:
    /// right after the pointer (a constant, where `MemoryLayout.offset(of:)` would be
    /// computed at run time; `init` checks the two agree in debug builds).
    @inline(__always)
    static var ownerOffset: Int { MemoryLayout<UnsafeRawPointer?>.stride }

    @inline(__always)
    init(_ pointer: UnsafeRawPointer?, owner: ValueOwner? = nil) {
        self.pointer = pointer
        self.owner = owner
        assert(MemoryLayout<CValue>.offset(of: \.owner) == Self.ownerOffset)
    }
}

extension ValueType {
    static let pointer = ValueType(name: "pointer", equal: nil, retain: nil, release: nil,
                                   context: CallbackContext(nil, nil))
    static let cstring = ValueType(name: "cstring", equal: dfsi_cstring_equal, retain: dfsi_cstring_retain,
                                   release: dfsi_cstring_release, context: CallbackContext(nil, nil))
    static let ffiEvent = ValueType(name: "ffi_event", equal: dfsi_ffi_event_equal, retain: dfsi_ffi_event_retain,
                                    release: dfsi_ffi_event_release, context: CallbackContext(nil, nil))
}
