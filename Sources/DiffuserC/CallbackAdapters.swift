import Synchronization
import CDiffuserFFI
@_spi(Bindings) import Diffuser

// The C callbacks as the core calls them. No semantics here: each adapter translates
// one call and its error; what runs when is the core's business.

/// A C callback: its function and context, and what runs its destroy when the core
/// drops its last reference (`keeper`). Made before anything else in an export, so that
/// the destroy runs exactly once whether or not the export fails.
///
/// `Fn` is a C function pointer type.
struct CCallback<Fn> {
    let fn: Fn?
    let ctx: UnsafeMutableRawPointer?
    /// Runs the destroy when the last copy of this callback, or of a `CFunction` made
    /// from it, goes away; `nil` when there is no destroy.
    let keeper: CallbackContext?

    init(_ fn: Fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?) {
        self.fn = fn
        self.ctx = ctx
        self.keeper = destroy.map { CallbackContext(ctx, $0) }
    }
}

/// A C callback that has a function: what the adapters hold.
struct CFunction<Fn> {
    let fn: Fn
    let ctx: UnsafeMutableRawPointer?
    let keeper: CallbackContext?

    /// Throws `DFS_ERR_NULL` naming `name` if the callback has no function.
    init(_ callback: CCallback<Fn>, _ name: String) throws {
        guard let fn = callback.fn else { throw CError.null(name) }
        self.fn = fn
        self.ctx = callback.ctx
        self.keeper = callback.keeper
    }
}

/// A C effect (`dfs_effect_fn`).
struct CEffect: EffectFunction {
    let function: CFunction<dfs_effect_fn>

    init(_ callback: CCallback<dfs_effect_fn>) throws {
        function = try CFunction(callback, "effect")
    }

    func run(_ value: CValue) throws {
        let serial = dfsi_error_serial()
        let code = function.fn(value.pointer, function.ctx)
        if code != 0 { throw CError.callback("effect", code: code, since: serial) }
    }
}

/// A C "did change" predicate (`dfs_did_change_fn`), called as (old, new).
struct CChange: ChangeFunction {
    let function: CFunction<dfs_did_change_fn>
    /// The type of the values compared, which retains the borrowed ones a gate keeps.
    let type: ValueType

    init(_ callback: CCallback<dfs_did_change_fn>, type: ValueType) throws {
        function = try CFunction(callback, "did_change")
        self.type = type
    }

    func keep(_ value: CValue) throws -> CValue {
        try type.kept(value)
    }

    /// Whether `keep` returns the value it is given and calls no user code: a type
    /// without `retain` keeps a value as it is (`ValueType.kept`).
    var keepsItself: Bool { type.retainFn == nil }

    func didChange(_ old: CValue, _ new: CValue) throws -> Bool {
        let serial = dfsi_error_serial()
        let answer = function.fn(old.pointer, new.pointer, function.ctx)
        if answer < 0 { throw CError.callback("did_change", code: answer, since: serial) }
        return answer != 0
    }
}

/// The value type's equality, for the gates of `into` and `into_all`, called as
/// (old, new).
///
/// An equality that answers DFS_EQUAL_SAME says that `new` is another reference to the
/// very value `old` holds (the Java binding: one object, as a local and a global
/// reference). A gate that finds its value equal keeps the new value right away (see
/// `GateNode.pass`: a comparison that answers "equal" for two different pointers is
/// always followed by the keep of the new one); here it keeps its cache, which is that
/// value, instead of retaining the new reference and releasing the old one. The
/// comparison leaves a note for that keep (`dfsi_same_value`, per thread), which the
/// keep takes if it is for the pointer compared, and drops otherwise. Types whose
/// equality never answered DFS_EQUAL_SAME skip the note (`ValueType.answersSame`).
struct CEquality: EqualityFunction {
    let type: ValueType

    @inline(__always)
    func equals(_ old: CValue, _ new: CValue) throws -> Bool {
        let answer = try type.compare(old.pointer, new.pointer)
        // Only a type that retains owns what its gates keep; a borrowed old value may be
        // freed by its owner once the gate has moved on to the new one.
        if answer == DFS_EQUAL_SAME, type.retainFn != nil, let pointer = new.pointer {
            Self.note(pointer, sameAs: old, of: type)
        }
        return answer != 0
    }

    @inline(__always)
    func keep(_ value: CValue) throws -> CValue {
        if type.answersSame.load(ordering: .relaxed), let cache = Self.take(for: value.pointer) {
            return cache
        }
        return try type.kept(value)
    }

    /// Notes that `pointer` is the value `cache` holds, for the keep that follows.
    @inline(never)
    private static func note(_ pointer: UnsafeRawPointer, sameAs cache: CValue, of type: ValueType) {
        type.answersSame.store(true, ordering: .relaxed)
        let note = dfsi_same_value()!
        if note.pointee.armed != 0 { drop(note) }
        note.pointee.pointer = pointer
        note.pointee.cached_pointer = cache.pointer
        note.pointee.cached_owner = cache.owner.map { Unmanaged.passRetained($0).toOpaque() }
        note.pointee.armed = 1
    }

    /// The cache noted for `pointer`, if the note is for it; any other note is dropped.
    @inline(__always)
    private static func take(for pointer: UnsafeRawPointer?) -> CValue? {
        let note = dfsi_same_value()!
        guard note.pointee.armed != 0 else { return nil }
        guard note.pointee.pointer == pointer else {
            drop(note)
            return nil
        }
        note.pointee.armed = 0
        let owner = note.pointee.cached_owner.map { Unmanaged<ValueOwner>.fromOpaque($0).takeRetainedValue() }
        return CValue(note.pointee.cached_pointer, owner: owner)
    }

    /// Forgets a note that no keep took, with the reference it held.
    @inline(never)
    private static func drop(_ note: UnsafeMutablePointer<dfsi_same_value_note>) {
        note.pointee.armed = 0
        if let owner = note.pointee.cached_owner {
            Unmanaged<ValueOwner>.fromOpaque(owner).release()
        }
    }
}

/// A C transform (`dfs_transform_fn`); its results are values of `output`, handed over
/// with a reference the core drops after the child ran (`dfs_diffuser_map`), or borrowed
/// for the run (`dfs_diffuser_map_borrowed`).
struct CTransform: TransformFunction {
    let function: CFunction<dfs_transform_fn>
    /// The type through which the core releases the outputs it was handed; `nil` when
    /// they are borrowed or their type has no `release`.
    let owned: ValueType?

    /// `role` names the callback in the message of a NULL one (and should be given
    /// to `select(_:role:)` too).
    init(_ callback: CCallback<dfs_transform_fn>, output: ValueType, borrowed: Bool, role: String = "transform") throws {
        function = try CFunction(callback, role)
        owned = !borrowed && output.releaseFn != nil ? output : nil
    }

    /// The part, with an owner that releases it when the last copy goes (a gate that
    /// keeps it shares that owner).
    func select(_ value: CValue) throws -> CValue {
        try select(value, role: "transform")
    }

    /// `select(_:)`, with `role` naming the callback in the message of a failure.
    func select(_ value: CValue, role: String) throws -> CValue {
        var result: UnsafeRawPointer?
        let serial = dfsi_error_serial()
        let code = function.fn(value.pointer, &result, function.ctx)
        if code != 0 {
            // A transform that failed after producing a value: do not leak it.
            if let owned, let result { owned.releaseFn?(result, owned.context.ctx) }
            throw CError.callback(role, code: code, since: serial)
        }
        guard let owned else { return CValue(result) }
        return owned.adopt(result)
    }

    /// `select`, lent to `body`: a part with nothing to release (borrowed, or of a type
    /// without `release`) is lent as it came, with no owner to drop after the call.
    func withSelected(_ value: CValue, _ body: (CValue) throws -> Void) throws {
        guard owned == nil else { return try body(select(value)) }
        var result: UnsafeRawPointer?
        let serial = dfsi_error_serial()
        let code = function.fn(value.pointer, &result, function.ctx)
        if code != 0 { throw CError.callback("transform", code: code, since: serial) }
        try body(CValue(result))
    }
}

/// A member of the value read in place as a transform (`dfs_diffuser_map_field`): the
/// part is the unsigned integer of `size` bytes at `offset` bytes into the value, widened
/// to a pointer. The part lives in the value: the core holds no reference to it.
struct CFieldTransform: TransformFunction {
    let offset: Int
    let size: Int

    /// Sizes a part can have: those of the unsigned integers that fit in a pointer
    /// (powers of two up to a pointer's size).
    static func isSize(_ size: Int) -> Bool {
        size > 0 && size <= MemoryLayout<UInt>.size && size & (size - 1) == 0
    }

    /// The sizes `isSize` accepts, for an error message.
    static var sizes: [Int] { [1, 2, 4, 8].filter(isSize) }

    init(offset: Int, size: Int) throws {
        guard offset >= 0 else {
            // A size_t above PTRDIFF_MAX, read as an Int.
            throw CError.argument("offset \(UInt(bitPattern: offset)) is larger than PTRDIFF_MAX")
        }
        guard Self.isSize(size) else {
            throw CError.argument("size \(UInt(bitPattern: size)) is not one of \(Self.sizes.map(String.init).joined(separator: ", "))")
        }
        self.offset = offset
        self.size = size
    }

    func select(_ value: CValue) throws -> CValue {
        CValue(try member(of: value))
    }

    /// `select`, lent to `body`: the part has no owner to drop after the call.
    func withSelected(_ value: CValue, _ body: (CValue) throws -> Void) throws {
        try body(CValue(try member(of: value)))
    }

    /// The member's bits, as a pointer.
    private func member(of value: CValue) throws -> UnsafeRawPointer? {
        guard let base = value.pointer else {
            throw CError(status: DFS_ERR_NULL, message: "a field map (offset \(offset), size \(size)) was run on a NULL value")
        }
        let bytes = base + offset
        let bits: UInt
        switch size {
        case 1: bits = UInt(bytes.load(as: UInt8.self))
        case 2: bits = UInt(bytes.loadUnaligned(as: UInt16.self))
        case 4: bits = UInt(bytes.loadUnaligned(as: UInt32.self))
        default: bits = bytes.loadUnaligned(as: UInt.self)
        }
        return UnsafeRawPointer(bitPattern: bits)
    }
}
