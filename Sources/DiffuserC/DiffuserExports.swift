import CDiffuserFFI
@_spi(Bindings) import Diffuser

/// What a `dfs_diffuser` handle refers to: a core diffuser over C values and the type
/// of the values it accepts.
final class CDiffuser {
    let diffuser: Diffuser<CValue>
    let type: TypeReference

    init(_ diffuser: Diffuser<CValue>, _ type: ValueType) throws {
        self.diffuser = diffuser
        self.type = try TypeReference(type)
    }
}

func lookupDiffuser(_ handle: OpaquePointer?, _ name: @autoclosure () -> String = "diffuser") throws -> CDiffuser {
    try handles.lookup(handle, .diffuser, as: CDiffuser.self, name: name())
}

/// Registers a new diffuser and returns its handle.
func publish(_ diffuser: Diffuser<CValue>, _ type: ValueType) throws -> OpaquePointer {
    handles.insert(try CDiffuser(diffuser, type), kind: .diffuser)
}

/// The effect as a closure, for the fuser side (connections take closures).
func effectClosure(_ callback: CCallback<dfs_effect_fn>) throws -> (CValue) throws -> Void {
    let effect = try CEffect(callback)
    return { try effect.run($0) }
}

/// The transform as a closure, for the fuser side (extracting fusers take closures).
func transformClosure(_ callback: CCallback<dfs_transform_fn>, output: ValueType) throws -> (CValue) throws -> CValue {
    let transform = try CTransform(callback, output: output, borrowed: false)
    return { try transform.select($0) }
}

/// The handles of a composite's children, looked up with `lookup` and checked against the
/// composite's type; shared by the diffuser composites and `dfs_fuser_from_all`. A child's
/// name ("children[3]") is built only for an error message.
func members<Member>(
    _ list: UnsafePointer<OpaquePointer?>?, _ count: Int, of type: ValueType,
    _ lookup: (OpaquePointer?, @autoclosure () -> String) throws -> (ValueType, Member)
) throws -> [Member] {
    // The count first, as for a loop's config: an absurd count is refused whatever the
    // array, which is then not read.
    let count = try checkedCount(count, "count", atMost: maxMembers)
    if count > 0 && list == nil { throw CError.null("children") }
    return try (0..<count).map { i in
        let (childType, member) = try lookup(list![i], "children[\(i)]")
        guard childType === type else {
            throw CError.type("children[\(i)] has type '\(childType.name)', expected '\(type.name)'\(childType.sameNameNote(type))")
        }
        return member
    }
}

/// The children of a diffuser composite, checked against the composite's type, and their
/// depth: a combinator over them must not nest deeper than the core allows.
func children(_ list: UnsafePointer<OpaquePointer?>?, _ count: Int, of type: ValueType) throws -> [Diffuser<CValue>] {
    let all = try members(list, count, of: type) { handle, name in
        let child = try lookupDiffuser(handle, name())
        return (child.type.type, child.diffuser)
    }
    var deepest = 0
    for child in all where child.depth > deepest { deepest = child.depth }
    try checkDepth(above: deepest)
    return all
}

/// Refuses a combinator over children whose deepest is `childDepth` deep if it would
/// nest more combinators than `DFS_MAX_DEPTH` (the core's `maximumDepth`; see
/// `Depth.swift`), where the Swift combinators would stop the program. `what` names the
/// kind of tree ("diffuser", "fuser") in the message.
@inline(__always)
func checkDepth(above childDepth: Int, of what: StaticString = "diffuser") throws {
    guard childDepth < Diffuser<CValue>.maximumDepth else { throw depthError(childDepth, what) }
}

private func depthError(_ childDepth: Int, _ what: StaticString) -> CError {
    CError.argument(
        "the \(what) would nest \(childDepth + 1) combinators; at most \(Diffuser<CValue>.maximumDepth) "
            + "(DFS_MAX_DEPTH) fit a thread's stack")
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
        .into(comparing: CEquality(type: type), calling: effect, keepsItself: type.retainFn == nil)
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
        try checkDepth(above: inner.diffuser.depth)
        return try publish(
            .intoWhen(calling: predicate, inner.diffuser, keepsItself: predicate.keepsItself), inner.type.type)
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
        return try publish(
            .intoWhen(calling: predicate, effect: CEffect(effectCallback), keepsItself: predicate.keepsItself),
            valueType)
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
        return try publish(
            .intoAll(comparing: CEquality(type: valueType), all, keepsItself: valueType.retainFn == nil), valueType)
    }
}

@_cdecl("dfs_diffuser_into_always_all")
public func dfs_diffuser_into_always_all(
    _ type: OpaquePointer?, _ list: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let valueType = try lookupType(type)
        return try publish(.intoAlways(try children(list, count, of: valueType)), valueType)
    }
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
        try checkDepth(above: inner.diffuser.depth)
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
        .map(calling: try CTransform(callback, output: output, borrowed: borrowed), inner)
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
        .map(calling: try CFieldTransform(offset: offset, size: size), inner)
    }
}

/// The truth value `invert` makes for false: any non-NULL pointer.
private var truePointer: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: 1) }

@_cdecl("dfs_diffuser_invert")
public func dfs_diffuser_invert(_ child: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let inner = try lookupDiffuser(child, "child")
        guard inner.type.type === ValueType.pointer else {
            throw CError.type("invert needs a child of type 'pointer' (truth values), not '\(inner.type.type.name)'"
                              + inner.type.type.sameNameNote(ValueType.pointer))
        }
        try checkDepth(above: inner.diffuser.depth)
        let negate: (CValue) -> CValue = { CValue($0.pointer == nil ? truePointer : nil) }
        return try publish(.map(negate, inner.diffuser), ValueType.pointer)
    }
}

@_cdecl("dfs_diffuser_run")
public func dfs_diffuser_run(_ diffuser: OpaquePointer?, _ value: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupDiffuser(diffuser)
        // The value is borrowed for this call: gates retain it only if they keep it, and
        // a run queued from inside an effect retains it when queued.
        try target.diffuser.tryRun(CValue(value), keepingQueued: { try target.type.type.kept($0) })
    }
}

@_cdecl("dfs_diffuser_run_or_queue")
public func dfs_diffuser_run_or_queue(
    _ diffuser: OpaquePointer?, _ value: UnsafeRawPointer?, _ queued: UnsafeMutablePointer<Int32>?
) -> dfs_status {
    queued?.pointee = 0
    return guarded {
        let target = try lookupDiffuser(diffuser)
        // `keepingQueued` is called exactly when the core queues the run.
        try target.diffuser.tryRun(CValue(value), keepingQueued: {
            queued?.pointee = 1
            return try target.type.type.kept($0)
        })
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
