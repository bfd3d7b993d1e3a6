import CDiffuserFFI
#if !DIFFUSER_SINGLE_MODULE
// SwiftPM builds the core and the C ABI as two modules; CMake compiles them as one.
@_spi(Bindings) import Diffuser
#endif

/// What a `dfs_diffuser` handle refers to: a core diffuser over C values and the type
/// of the values it accepts.
final class CDiffuser {
    let diffuser: Diffuser<CValue>
    let type: TypeReference
    /// `diffuser.isSettled(on:)`, for `dfs_diffuser_run`'s settled path.
    let settled: SettledCheck<CValue>

    init(_ diffuser: Diffuser<CValue>, _ type: ValueType) throws {
        self.diffuser = diffuser
        self.type = try TypeReference(type)
        self.settled = diffuser.settledCheck
    }
}

func lookupDiffuser(_ handle: OpaquePointer?, _ name: @autoclosure () -> String = "diffuser") throws -> CDiffuser {
    try handles.lookup(handle, .diffuser, as: CDiffuser.self, name: name())
}

/// Registers a new diffuser and returns its handle.
func publish(_ diffuser: Diffuser<CValue>, _ type: ValueType) throws -> OpaquePointer {
    handles.insert(try CDiffuser(diffuser, type), kind: .diffuser)
}

// MARK: Callback adapters (no semantics: they only translate calls and errors)

/// A C callback: its function and context, and what runs its destroy when the core
/// drops its last reference (`keeper`). Made before anything else in an export, so that
/// the destroy runs exactly once whether or not the export fails.
///
/// The keeper exists only when there is a destroy to run: a callback with a static or
/// caller-owned context costs no allocation, neither while its export builds the node
/// nor in the node.
///
/// `Fn` is a C function pointer type. It is stored as a plain pointer: a stored property
/// of the generic type would make copies look up the metadata of `Optional<Fn>` (a
/// hash-table search), which was a tenth of the cost of building a C tree.
struct CCallback<Fn> {
    private let function: UnsafeRawPointer?
    let ctx: UnsafeMutableRawPointer?
    /// Runs the destroy when the last copy of this callback, or of a `CFunction` made
    /// from it, goes away; `nil` when there is no destroy.
    let keeper: CallbackContext?

    init(_ fn: Fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?) {
        self.function = unsafeBitCast(fn, to: UnsafeRawPointer?.self)
        self.ctx = ctx
        self.keeper = destroy.map { CallbackContext(ctx, $0) }
    }

    var fn: Fn? {
        unsafeBitCast(function, to: Fn?.self)
    }
}

/// A C callback as an adapter holds it: the function and its context inline, so a
/// specialized node calls the function directly, and what keeps the context alive
/// (see `CCallback.keeper`).
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

/// A C effect as the core calls it.
struct CEffect: EffectFunction {
    let function: CFunction<dfs_effect_fn>

    init(_ callback: CCallback<dfs_effect_fn>) throws {
        function = try CFunction(callback, "effect")
    }

    @inline(__always)
    func run(_ value: CValue) throws {
        let code = function.fn(value.pointer, function.ctx)
        if code != 0 { throw CError.callback("effect", code: code) }
    }
}

/// A C "did change" predicate as the core calls it.
struct CChange: ChangeFunction {
    let function: CFunction<dfs_did_change_fn>
    /// The type of the values compared, which retains the borrowed ones a gate caches.
    let type: ValueType

    init(_ callback: CCallback<dfs_did_change_fn>, type: ValueType) throws {
        function = try CFunction(callback, "did_change")
        self.type = type
    }

    @inline(__always)
    func keep(_ value: CValue) throws -> CValue {
        try type.kept(value)
    }

    @inline(__always)
    func didChange(_ old: CValue, _ new: CValue) throws -> Bool {
        let answer = function.fn(old.pointer, new.pointer, function.ctx)
        if answer < 0 { throw CError.callback("did_change", code: answer) }
        return answer != 0
    }
}

/// The value type's equality, for the gates of `into` and `into_all`.
struct CEquality: EqualityFunction {
    let type: ValueType

    @inline(__always)
    func equals(_ cached: CValue, _ new: CValue) throws -> Bool {
        try type.equal(cached.pointer, new.pointer)
    }

    /// Reads only the cached pointer: passing the cached `CValue` itself to the C
    /// callback would retain and release its owner around the call.
    @inline(__always)
    func equals(cachedAt cached: UnsafePointer<CValue>, _ new: CValue) throws -> Bool {
        try type.equal(cached.pointee.pointer, new.pointer)
    }

    @inline(__always)
    func keep(_ value: CValue) throws -> CValue {
        try type.kept(value)
    }

    /// The pointer, a `CValue`'s first field: the same pointer is equal, since an
    /// equality must be reflexive (see `dfs_equal_fn`).
    static var identifyingBytes: Int { MemoryLayout<UnsafeRawPointer?>.size }

    /// True: `dfs_equal_fn` must be reflexive, so the same pointer is equal anywhere.
    static var identicalValuesAreEqual: Bool { true }

    /// Reads the owner's word in place: 0 is a value with no owner (lent, or of a type
    /// without `release`). Whatever the bytes of a `nil` cache, it holds nothing either.
    @inline(__always)
    static func holdsNothing(cachedAt cached: UnsafePointer<CValue?>) -> Bool {
        UnsafeRawPointer(cached).load(fromByteOffset: CValue.ownerOffset, as: UInt.self) == 0
    }
}

/// Whether a C transform's outputs are handed over with a reference the core drops
/// (`OwnedOutputs`) or hold none (`LentOutputs`: borrowed for the run, or of a type
/// without `release`). A type parameter of `CTransform`, so that the maps of the usual
/// case are compiled without the test for a reference, and run by their fan-out's loop
/// as their own form.
protocol OutputOwnership {
    static var owns: Bool { get }
}

/// Outputs that hold nothing for the core to release.
enum LentOutputs: OutputOwnership {
    static var owns: Bool { false }
}

/// Outputs handed over with a reference the core drops through their type.
enum OwnedOutputs: OutputOwnership {
    static var owns: Bool { true }
}

/// A C transform as the core calls it; its results are values of `output`, handed over
/// with a reference the core drops, or lent for the run (`dfs_diffuser_map_borrowed`):
/// which, `Outputs` says (`owns(_:borrowed:)` chooses).
struct CTransform<Outputs: OutputOwnership>: TransformFunction {
    let fn: dfs_transform_fn
    let ctx: UnsafeMutableRawPointer?
    /// What a transform rarely needs, in one optional reference: a map node is 8 bytes
    /// smaller than with two, which moves it to a smaller allocation size; the step tests
    /// only this when neither is there.
    let extras: Extras?

    /// The keeper of the transform's context (see `CCallback.keeper`), and the type
    /// through which the core releases the outputs it was handed.
    final class Extras {
        let keeper: CallbackContext?
        let owned: ValueType?

        init(keeper: CallbackContext?, owned: ValueType?) {
            self.keeper = keeper
            self.owned = owned
        }
    }

    /// Whether the outputs of a transform into `output` are owned: not `borrowed`, and
    /// of a type with a `release`.
    static func owns(_ output: ValueType, borrowed: Bool) -> Bool {
        !borrowed && output.releaseFn != nil
    }

    /// `Outputs` must be what `owns(output, borrowed:)` says.
    init(_ callback: CCallback<dfs_transform_fn>, output: ValueType, borrowed: Bool = false) throws {
        precondition(Outputs.owns == Self.owns(output, borrowed: borrowed), "CTransform made with the wrong ownership")
        let function = try CFunction(callback, "transform")
        fn = function.fn
        ctx = function.ctx
        let owned = Outputs.owns ? output : nil
        extras = owned == nil && function.keeper == nil ? nil : Extras(keeper: function.keeper, owned: owned)
    }

    /// The type through which the core releases the outputs it was handed; `nil` when there
    /// is nothing to release: the outputs are borrowed, or their type has no `release`.
    @inline(__always)
    var owned: ValueType? {
        guard Outputs.owns, let extras else { return nil }
        return extras.owned
    }

    @inline(__always)
    func select(_ value: CValue) throws -> CValue {
        let result = try output(of: value.pointer)
        guard let owned else { return CValue(result) }
        return owned.adopt(result)
    }

    /// A part with nothing to release is lent: see `select(_:into:)`.
    static var lendsParts: Bool { true }

    /// Makes a part with no owner when nothing is to be released (a borrowed part, a
    /// type without `release`, NULL): the node then forgets it instead of destroying it.
    ///
    /// The C function writes its pointer into the part's room (where the part's pointer
    /// goes), not into a local of this function's, so that no stack canary is needed.
    @inline(__always)
    func select(_ value: CValue, into part: UnsafeMutablePointer<CValue>) throws -> Bool {
        try withUnsafePointer(to: self) { try Self.select(checked: value, lentFrom: $0, into: part) }
    }

    /// `select(_:into:)` by the transform at `transform`, reading only its function and
    /// context, and its extras only for an owned output: a copy of the transform would
    /// retain its extras at every part.
    @inline(__always)
    static func select(checked value: CValue, lentFrom transform: UnsafePointer<CTransform>,
                       into part: UnsafeMutablePointer<CValue>) throws -> Bool {
        let owned = Outputs.owns ? transform.pointee.owned : nil
        let result = try part.withMemoryRebound(to: UnsafeRawPointer?.self, capacity: 1) { slot in
            slot.initialize(to: nil)
            return try output(transform.pointee.fn, transform.pointee.ctx, owned, of: value.pointer, into: slot)
        }
        guard let owned, result != nil else {
            part.initialize(to: CValue(result))
            return false
        }
        part.initialize(to: owned.adopt(result))
        return true
    }

    /// The transform's pointer for `value`, with the reference it was handed if any.
    @inline(__always)
    private func output(of value: UnsafeRawPointer?) throws -> UnsafeRawPointer? {
        var result: UnsafeRawPointer?
        return try Self.output(fn, ctx, owned, of: value, into: &result)
    }

    /// The pointer that `fn` with `ctx` writes to `slot` for `value`; when it fails, the
    /// output it made anyway is released through `owned`.
    @inline(__always)
    private static func output(
        _ fn: dfs_transform_fn, _ ctx: UnsafeMutableRawPointer?, _ owned: ValueType?,
        of value: UnsafeRawPointer?, into slot: UnsafeMutablePointer<UnsafeRawPointer?>
    ) throws -> UnsafeRawPointer? {
        let code = fn(value, slot, ctx)
        let result = slot.pointee
        if code != 0 {
            // A transform that failed after producing a value: do not leak it.
            if let owned, let result { owned.releaseFn?(result, owned.context.ctx) }
            throw CError.callback("transform", code: code)
        }
        return result
    }
}

/// Whether a field map reads a whole word: a type parameter of `CFieldTransform`, so
/// that the maps of pointers and longs are compiled without a test of the size.
protocol FieldWidth {
    static var isWord: Bool { get }
}

/// A field of a pointer's size.
enum WordField: FieldWidth {
    static var isWord: Bool { true }
}

/// A field narrower than a pointer.
enum NarrowField: FieldWidth {
    static var isWord: Bool { false }
}

/// A field read in place as a transform (`dfs_diffuser_map_field`): the part is the
/// unsigned integer of `size` bytes at `offset` bytes into the value, as a pointer. The
/// part is lent: it lives in the value and holds nothing the core releases.
///
/// No C call: a fan-out of field maps compares each field with its gate's cache in its
/// own loop, which for a struct's members is about what hand-written code does.
///
/// `Width` says whether the field is a pointer's size (`WordField`, the usual member: a
/// pointer or a long, read without testing the size) or narrower (`NarrowField`).
struct CFieldTransform<Width: FieldWidth>: TransformFunction {
    let offset: Int
    let size: Int

    /// Sizes a part can have: those of the unsigned integers that fit in a pointer.
    static var sizes: [Int] { [1, 2, 4, 8].filter { $0 <= MemoryLayout<UInt>.size } }

    /// Whether a field of `size` bytes is a word (a `CFieldTransform<WordField>`).
    static func isWord(_ size: Int) -> Bool { size == MemoryLayout<UInt>.size }

    /// `Width` must be what `isWord(size)` says, for a size among `sizes`.
    init(offset: Int, size: Int) throws {
        guard offset >= 0 else {
            // A size_t above PTRDIFF_MAX, read as an Int.
            throw CError.argument("offset \(UInt(bitPattern: offset)) is larger than PTRDIFF_MAX")
        }
        guard Self.sizes.contains(size) else {
            throw CError.argument("size \(size) is not one of \(Self.sizes.map(String.init).joined(separator: ", "))")
        }
        precondition(Width.isWord == Self.isWord(size), "CFieldTransform made with the wrong width")
        self.offset = offset
        self.size = size
    }

    @inline(__always)
    func select(_ value: CValue) throws -> CValue {
        CValue(try field(of: value.pointer))
    }

    static var lendsParts: Bool { true }

    @inline(__always)
    func select(_ value: CValue, into part: UnsafeMutablePointer<CValue>) throws -> Bool {
        part.initialize(to: CValue(try field(of: value.pointer)))
        return false
    }

    /// A field map reads its value: it refuses NULL, as every field map does.
    @inline(__always)
    func check(_ value: CValue) throws {
        if value.pointer == nil { throw nullValue() }
    }

    @inline(__always)
    func select(checked value: CValue, into part: UnsafeMutablePointer<CValue>) -> Bool {
        part.initialize(to: CValue(member(of: value.pointer.unsafelyUnwrapped)))
        return false
    }

    @inline(__always)
    private func field(of value: UnsafeRawPointer?) throws -> UnsafeRawPointer? {
        guard let value else { throw nullValue() }
        return member(of: value)
    }

    @inline(__always)
    private func member(of value: UnsafeRawPointer) -> UnsafeRawPointer? {
        let bytes = value + offset
        if Width.isWord { return bytes.loadUnaligned(as: UnsafeRawPointer?.self) }
        return narrow(bytes)
    }

    /// A member narrower than a pointer, widened.
    @inline(never)
    private func narrow(_ bytes: UnsafeRawPointer) -> UnsafeRawPointer? {
        let bits: UInt
        switch size {
        case 4: bits = UInt(bytes.loadUnaligned(as: UInt32.self))
        case 2: bits = UInt(bytes.loadUnaligned(as: UInt16.self))
        default: bits = UInt(bytes.load(as: UInt8.self))
        }
        return UnsafeRawPointer(bitPattern: bits)
    }

    @inline(never)
    private func nullValue() -> CError {
        CError(status: DFS_ERR_NULL, message: "a field map (offset \(offset), size \(size)) was run on a NULL value")
    }
}

/// A C selection of many parts (`dfs_select_all_fn`) as the core calls it; its parts are
/// values of the output type, handed over with a reference the core drops, or lent.
struct CSelection: SelectionFunction {
    let function: CFunction<dfs_select_all_fn>
    /// The type through which the core releases the parts it was handed; `nil` when they
    /// are borrowed for the run (`dfs_diffuser_map_all_borrowed`), as for `CTransform`.
    let owned: ValueType?

    init(_ callback: CCallback<dfs_select_all_fn>, output: ValueType, borrowed: Bool) throws {
        function = try CFunction(callback, "select")
        owned = borrowed ? nil : output
    }

    /// Lent parts hold no reference of the core's: there is nothing to destroy.
    var makesTrivialParts: Bool { owned == nil }

    @inline(__always)
    func selectAll(_ value: CValue, into parts: inout SelectedParts<CValue>) throws {
        let count = parts.capacity
        try withUnsafeTemporaryAllocation(of: UnsafeRawPointer?.self, capacity: count) { out in
            for i in 0..<count { out.initializeElement(at: i, to: nil) }
            var produced = 0
            let code = function.fn(value.pointer, count, out.baseAddress, &produced, function.ctx)
            try adoptParts(out, code, produced, into: &parts, adoptedBy: owned)
        }
    }
}

/// A C selection that judges its parts (`dfs_select_judged_fn`) as the core calls it; its
/// parts are borrowed, as those of `dfs_diffuser_map_all_borrowed`.
struct CJudgedSelection: SelectionFunction {
    let function: CFunction<dfs_select_judged_fn>
    /// What the selection is told of each child's cache, kept from pass to pass; `nil`
    /// for a fan-out of fewer than `JudgedRoom.minimumChildren`, whose views are made
    /// afresh for each call.
    let room: JudgedRoom?

    /// A selection for `count` children.
    init(_ callback: CCallback<dfs_select_judged_fn>, children count: Int) throws {
        function = try CFunction(callback, "select")
        room = count >= JudgedRoom.minimumChildren ? JudgedRoom(capacity: count) : nil
    }

    static var judgesParts: Bool { true }

    /// Its parts are lent: there is nothing to destroy.
    var makesTrivialParts: Bool { true }

    /// Without children to judge: every child is reported as not judged.
    func selectAll(_ value: CValue, into parts: inout SelectedParts<CValue>) throws {
        try withUnsafeTemporaryAllocation(of: PartVerdict.self, capacity: parts.capacity) { verdicts in
            verdicts.initialize(repeating: .unknown)
            try call(value, into: &parts, verdicts: verdicts) { _ in
                dfs_cached_part(generation: 0, present: 0, value: nil)
            }
        }
    }

    func selectAll(
        _ value: CValue, judging children: JudgedChildren<CValue>,
        into parts: inout SelectedParts<CValue>, verdicts: UnsafeMutableBufferPointer<PartVerdict>
    ) throws {
        guard let room, room.capacity == parts.capacity, room.capacity == children.count else {
            return try call(value, into: &parts, verdicts: verdicts) { i in Self.view(of: i, in: children) }
        }
        // A child's view changes only when its cache does: most passes read one
        // generation per child and write nothing.
        let views = room.views
        for i in 0..<room.capacity where views[i].generation != children.generation(of: i) {
            views[i] = Self.view(of: i, in: children)
        }
        try call(value, views: views, out: room.parts, into: &parts, verdicts: verdicts)
    }

    /// What the C selection is told of child `i`'s cache.
    @inline(__always)
    private static func view(of i: Int, in children: JudgedChildren<CValue>) -> dfs_cached_part {
        children.withCache(of: i) { generation, cached in
            dfs_cached_part(generation: generation, present: cached == nil ? 0 : 1, value: cached?.pointee.pointer)
        }
    }

    /// Calls the C selection with what `cached` says of each child, then adopts the
    /// parts it made. The arrays it is given live on the stack for the call (on the heap
    /// beyond a few dozen children, as the standard library decides).
    @inline(__always)
    private func call(
        _ value: CValue, into parts: inout SelectedParts<CValue>,
        verdicts: UnsafeMutableBufferPointer<PartVerdict>, cached: (Int) -> dfs_cached_part
    ) throws {
        let count = parts.capacity
        if count < JudgedRoom.minimumChildren {
            // A size known here makes a fixed stack frame, with no check of the size.
            try withUnsafeTemporaryAllocation(of: Slot.self, capacity: JudgedRoom.minimumChildren) { slots in
                try call(value, slots: slots.baseAddress!, into: &parts, verdicts: verdicts, cached: cached)
            }
        } else {
            try withUnsafeTemporaryAllocation(of: Slot.self, capacity: count) { slots in
                try call(value, slots: slots.baseAddress!, into: &parts, verdicts: verdicts, cached: cached)
            }
        }
    }

    /// A child's view and its part's slot, side by side in one temporary allocation.
    private typealias Slot = (view: dfs_cached_part, part: UnsafeRawPointer?)

    @inline(__always)
    private func call(
        _ value: CValue, slots: UnsafeMutablePointer<Slot>, into parts: inout SelectedParts<CValue>,
        verdicts: UnsafeMutableBufferPointer<PartVerdict>, cached: (Int) -> dfs_cached_part
    ) throws {
        let count = parts.capacity
        // The views first, then the parts' slots, in the room for `count` of each.
        let views = UnsafeMutableRawPointer(slots).bindMemory(to: dfs_cached_part.self, capacity: count)
        for i in 0..<count { (views + i).initialize(to: cached(i)) }
        let out = (UnsafeMutableRawPointer(slots) + count * MemoryLayout<dfs_cached_part>.stride)
            .bindMemory(to: UnsafeRawPointer?.self, capacity: count)
        try call(value, views: views, out: out, into: &parts, verdicts: verdicts)
    }

    /// Calls the C selection with `views` of the children's caches, then adopts the
    /// parts it made in `out`, room for one per child.
    @inline(__always)
    private func call(
        _ value: CValue, views: UnsafeMutablePointer<dfs_cached_part>, out: UnsafeMutablePointer<UnsafeRawPointer?>,
        into parts: inout SelectedParts<CValue>, verdicts: UnsafeMutableBufferPointer<PartVerdict>
    ) throws {
        let count = parts.capacity
        for i in 0..<count { out[i] = nil }
        var produced = 0
        let code = verdicts.withMemoryRebound(to: Int8.self) { verdict in
            function.fn(value.pointer, count, views, out, verdict.baseAddress, &produced, function.ctx)
        }
        try adoptParts(UnsafeMutableBufferPointer(start: out, count: count), code, produced, into: &parts,
                       adoptedBy: nil)
    }
}

/// Room a judging C selection keeps from pass to pass (a fan-out's passes never overlap):
/// what it tells the C selection of each child's cache, refreshed only when that cache
/// changed, and one slot per part.
///
/// It costs 32 bytes per child and saves rewriting every child's view on every call,
/// a dozen instructions per child; only a large fan-out, where a call changes few
/// caches among many children, has one.
final class JudgedRoom {
    /// The fewest children a fan-out has for its selection to keep a room.
    static let minimumChildren = 16

    let capacity: Int
    let views: UnsafeMutablePointer<dfs_cached_part>
    let parts: UnsafeMutablePointer<UnsafeRawPointer?>

    init(capacity: Int) {
        self.capacity = capacity
        // Generation 0 is what a child that is not judged reports, and no judged one
        // does: every judged child's view is filled on the first pass.
        views = .allocate(capacity: capacity)
        views.initialize(repeating: dfs_cached_part(generation: 0, present: 0, value: nil), count: capacity)
        parts = .allocate(capacity: capacity)
        parts.initialize(repeating: nil, count: capacity)
    }

    deinit {
        views.deallocate()
        parts.deallocate()
    }
}

/// Appends the parts a C selection reported made in `out` to `parts`: all of them, or
/// the first `produced` when it failed (`code` not 0), which then throws. Parts are
/// adopted through `owner` (they come with a reference the core drops), or borrowed when
/// it is `nil`.
@inline(__always)
private func adoptParts(
    _ out: UnsafeMutableBufferPointer<UnsafeRawPointer?>, _ code: Int32, _ produced: Int,
    into parts: inout SelectedParts<CValue>, adoptedBy owner: ValueType?
) throws {
    let count = out.count
    let made = code == 0 ? count : max(0, min(produced, count))
    if let owner {
        parts.append(count: made) { owner.adopt(out[$0]) }
    } else {
        parts.append(count: made) { CValue(out[$0]) }
    }
    if code != 0 {
        throw CError.callback("select (part \(made) of \(count))", code: code)
    }
}

/// The effect as a closure, for the fuser side (connections take closures).
func effectClosure(_ callback: CCallback<dfs_effect_fn>) throws -> (CValue) throws -> Void {
    let effect = try CEffect(callback)
    return { try effect.run($0) }
}

/// The transform as a closure, for the fuser side (extracting fusers take closures).
func transformClosure(_ callback: CCallback<dfs_transform_fn>, output: ValueType) throws -> (CValue) throws -> CValue {
    if CTransform<OwnedOutputs>.owns(output, borrowed: false) {
        let transform = try CTransform<OwnedOutputs>(callback, output: output)
        return { try transform.select($0) }
    }
    let transform = try CTransform<LentOutputs>(callback, output: output)
    return { try transform.select($0) }
}

/// The handles of a composite's children, looked up with `lookup` and checked against the
/// composite's type; shared by the diffuser composites and `dfs_fuser_from_all`. A child's
/// name ("children[3]") is built only for an error message.
func members<Member>(
    _ list: UnsafePointer<OpaquePointer?>?, _ count: Int, of type: ValueType,
    _ lookup: (OpaquePointer?, @autoclosure () -> String) throws -> (ValueType, Member)
) throws -> [Member] {
    if count > 0 && list == nil { throw CError.null("children") }
    guard count >= 0 && count < 1 << 24 else { throw CError.argument("count \(count) is out of range") }
    return try (0..<count).map { i in
        let (childType, member) = try lookup(list![i], "children[\(i)]")
        guard childType === type else {
            throw CError.type("children[\(i)] has type '\(childType.name)', expected '\(type.name)'")
        }
        return member
    }
}

/// The children of a diffuser composite, checked against the composite's type.
func children(_ list: UnsafePointer<OpaquePointer?>?, _ count: Int, of type: ValueType) throws -> [Diffuser<CValue>] {
    try members(list, count, of: type) { handle, name in
        let child = try lookupDiffuser(handle, name())
        return (child.type.type, child.diffuser)
    }
}

// MARK: Exports

/// The exports that make a diffuser of one C effect: they differ only in the combinator.
private func effectDiffuser(
    _ type: OpaquePointer?, _ effect: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ make: (ValueType, CEffect) -> Diffuser<CValue>
) -> dfs_status {
    let callback = CCallback(effect, ctx, destroy)
    return produce(out) {
        let valueType = try lookupType(type)
        return try publish(make(valueType, try CEffect(callback)), valueType)
    }
}

@_cdecl("dfs_diffuser_into_always")
public func dfs_diffuser_into_always(
    _ type: OpaquePointer?, _ effect: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    effectDiffuser(type, effect, ctx, destroy, out) { _, effect in .intoAlways(calling: effect) }
}

@_cdecl("dfs_diffuser_into")
public func dfs_diffuser_into(
    _ type: OpaquePointer?, _ effect: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    effectDiffuser(type, effect, ctx, destroy, out) { type, effect in
        .into(comparing: CEquality(type: type), calling: effect)
    }
}

@_cdecl("dfs_diffuser_into_once")
public func dfs_diffuser_into_once(
    _ type: OpaquePointer?, _ effect: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    effectDiffuser(type, effect, ctx, destroy, out) { _, effect in .intoOnce(calling: effect) }
}

@_cdecl("dfs_diffuser_into_when")
public func dfs_diffuser_into_when(
    _ didChange: dfs_did_change_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?,
    _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(didChange, ctx, destroy)
    return produce(out) {
        let inner = try lookupDiffuser(child, "child")
        let predicate = try CChange(callback, type: inner.type.type)
        return try publish(.intoWhen(calling: predicate, inner.diffuser), inner.type.type)
    }
}

@_cdecl("dfs_diffuser_into_when_effect")
public func dfs_diffuser_into_when_effect(
    _ type: OpaquePointer?,
    _ didChange: dfs_did_change_fn?, _ didChangeCtx: UnsafeMutableRawPointer?, _ didChangeDestroy: dfs_destroy_fn?,
    _ effect: dfs_effect_fn?, _ effectCtx: UnsafeMutableRawPointer?, _ effectDestroy: dfs_destroy_fn?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let predicateCallback = CCallback(didChange, didChangeCtx, didChangeDestroy)
    let effectCallback = CCallback(effect, effectCtx, effectDestroy)
    return produce(out) {
        let valueType = try lookupType(type)
        let predicate = try CChange(predicateCallback, type: valueType)
        return try publish(.intoWhen(calling: predicate, effect: CEffect(effectCallback)), valueType)
    }
}

@_cdecl("dfs_diffuser_into_all")
public func dfs_diffuser_into_all(
    _ type: OpaquePointer?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        let all = try children(list, count, of: valueType)
        return try publish(.intoAll(comparing: CEquality(type: valueType), all, mapsCalling: transformForms, or: fieldForms), valueType)
    }
}

@_cdecl("dfs_diffuser_into_always_all")
public func dfs_diffuser_into_always_all(
    _ type: OpaquePointer?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        return try publish(.intoAlways(try children(list, count, of: valueType), mapsCalling: transformForms, or: fieldForms), valueType)
    }
}


/// The forms of a map's transform that these exports make, in the pairs a fan-out is
/// told of, so that it runs its maps in one loop: a C transform, whose outputs are lent
/// or owned, and a field, a word or narrower.
private var transformForms: (CTransform<LentOutputs>.Type, CTransform<OwnedOutputs>.Type) {
    (CTransform<LentOutputs>.self, CTransform<OwnedOutputs>.self)
}
private var fieldForms: (CFieldTransform<WordField>.Type, CFieldTransform<NarrowField>.Type) {
    (CFieldTransform<WordField>.self, CFieldTransform<NarrowField>.self)
}

/// The exports that make a map: they differ only in the form of the transform, with
/// which `map` makes the map over the child, given the child's type.
private func mapDiffuser(
    _ type: OpaquePointer?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ map: (ValueType, Diffuser<CValue>) throws -> Diffuser<CValue>
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        let inner = try lookupDiffuser(child, "child")
        return try publish(try map(inner.type.type, inner.diffuser), valueType)
    }
}

/// `dfs_diffuser_map` and `dfs_diffuser_map_borrowed`: they differ only in who owns
/// the transform's outputs.
private func mapDiffuser(
    _ type: OpaquePointer?, _ transform: dfs_transform_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    borrowed: Bool
) -> dfs_status {
    let callback = CCallback(transform, ctx, destroy)
    return mapDiffuser(type, child, out) { output, inner in
        CTransform<OwnedOutputs>.owns(output, borrowed: borrowed)
            ? .map(calling: try CTransform<OwnedOutputs>(callback, output: output, borrowed: borrowed), inner)
            : .map(calling: try CTransform<LentOutputs>(callback, output: output, borrowed: borrowed), inner)
    }
}

@_cdecl("dfs_diffuser_map")
public func dfs_diffuser_map(
    _ type: OpaquePointer?, _ transform: dfs_transform_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    mapDiffuser(type, transform, ctx, destroy, child, out, borrowed: false)
}

@_cdecl("dfs_diffuser_map_borrowed")
public func dfs_diffuser_map_borrowed(
    _ type: OpaquePointer?, _ transform: dfs_transform_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    mapDiffuser(type, transform, ctx, destroy, child, out, borrowed: true)
}

@_cdecl("dfs_diffuser_map_field")
public func dfs_diffuser_map_field(
    _ type: OpaquePointer?, _ offset: Int, _ size: Int, _ child: OpaquePointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    mapDiffuser(type, child, out) { _, inner in
        CFieldTransform<WordField>.isWord(size)
            ? .map(calling: try CFieldTransform<WordField>(offset: offset, size: size), inner)
            : .map(calling: try CFieldTransform<NarrowField>(offset: offset, size: size), inner)
    }
}

/// The exports that make a fan-out of maps: they differ only in the form of the
/// selection, which `selection` makes for the parts' type, the type of the first child
/// (`children` checks the others).
private func mapAllDiffuser<Selection: SelectionFunction>(
    _ type: OpaquePointer?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?, _ selection: (ValueType) throws -> Selection
) -> dfs_status where Selection.Input == CValue, Selection.Output == CValue {
    produce(out) {
        let valueType = try lookupType(type)
        if count > 0 && list == nil { throw CError.null("children") }
        let partType = count > 0 ? try lookupDiffuser(list![0], "children[0]").type.type : ValueType.pointer
        let members = try children(list, count, of: partType)
        return try publish(.mapAll(calling: try selection(partType), members), valueType)
    }
}

@_cdecl("dfs_diffuser_map_all_judged")
public func dfs_diffuser_map_all_judged(
    _ type: OpaquePointer?, _ select: dfs_select_judged_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(select, ctx, destroy)
    return mapAllDiffuser(type, list, count, out) { _ in try CJudgedSelection(callback, children: count) }
}

@_cdecl("dfs_diffuser_map_all")
public func dfs_diffuser_map_all(
    _ type: OpaquePointer?, _ select: dfs_select_all_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(select, ctx, destroy)
    return mapAllDiffuser(type, list, count, out) { try CSelection(callback, output: $0, borrowed: false) }
}

@_cdecl("dfs_diffuser_map_all_borrowed")
public func dfs_diffuser_map_all_borrowed(
    _ type: OpaquePointer?, _ select: dfs_select_all_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(select, ctx, destroy)
    return mapAllDiffuser(type, list, count, out) { try CSelection(callback, output: $0, borrowed: true) }
}

private let truePointer = UnsafeRawPointer(bitPattern: 1)

@_cdecl("dfs_diffuser_invert")
public func dfs_diffuser_invert(_ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let inner = try lookupDiffuser(child, "child")
        guard inner.type.type === ValueType.pointer else {
            throw CError.type("invert needs a child of type 'pointer' (truth values), not '\(inner.type.type.name)'")
        }
        let negate: (CValue) -> CValue = { CValue($0.pointer == nil ? truePointer : nil) }
        return try publish(.map(negate, inner.diffuser), ValueType.pointer)
    }
}

@_cdecl("dfs_diffuser_run")
public func dfs_diffuser_run(_ diffuser: OpaquePointer?, _ value: UnsafeRawPointer?) -> dfs_status {
    // The value the root gate holds, with no run in progress: nothing to do. Checked
    // without the handle table's lock: the settled path (`settled_run.c`) keeps the
    // diffuser alive with a hazard record while the check reads it.
    let handle = UInt(bitPattern: diffuser)
    guard let hazard = dfsi_settled_enter(handle) else {
        return runLocked(diffuser, value, checked: false, claiming: true)
    }
    guard let gate = dfsi_settled_gate(handle) else {
        dfsi_settled_leave(hazard)
        return runLocked(diffuser, value, checked: false)
    }
    // Published gates identify a `CValue` by its pointer (`lookupForRun`).
    let settled = SettledCheck<CValue>(gateAddress: gate).isSettled(identifiedBy: UInt(bitPattern: value))
    dfsi_settled_leave(hazard)
    if settled { return DFS_OK }
    return runLocked(diffuser, value, checked: true)
}

/// `dfs_diffuser_run` when the settled path did not answer: the run under the handle
/// table's lock, which also reports a NULL or stale handle. `checked`: the settled path
/// found the run not settled (a pass that follows anyway does nothing more than the
/// check would have saved: the root gate compares and stops). `claiming`: the thread
/// has no hazard record yet; it gets one (once the handle is published, there is a
/// settled path), so that its next runs may be settled without the lock.
@inline(never)
private func runLocked(_ diffuser: OpaquePointer?, _ value: UnsafeRawPointer?, checked: Bool,
                       claiming: Bool = false) -> dfs_status {
    guarded {
        let target = try handles.lookupForRun(diffuser)
        if claiming { dfsi_settled_claim() }
        // Not checked yet (the handle's first run, the settled path off, or this thread
        // without a hazard record): `target` keeps the diffuser alive for the check.
        if !checked, target.settled.isSettled(on: CValue(value)) { return }
        // The value is borrowed for this call: gates retain it only if they cache it, and
        // a run queued from inside an effect retains it when queued. (The type is read
        // through `target` only then, so that a run does not retain it.)
        try target.diffuser.tryRun(CValue(value), keepingQueued: { try target.type.type.kept($0) })
    }
}

@_cdecl("dfs_diffuser_type")
public func dfs_diffuser_type(_ diffuser: OpaquePointer?) -> OpaquePointer? {
    var result: OpaquePointer?
    _ = guarded { result = try lookupDiffuser(diffuser).type.type.handle }
    return result
}

@_cdecl("dfs_diffuser_retain")
public func dfs_diffuser_retain(_ diffuser: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(diffuser, .diffuser, name: "diffuser") }
}

@_cdecl("dfs_diffuser_release")
public func dfs_diffuser_release(_ diffuser: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(diffuser, .diffuser, name: "diffuser") }
}
