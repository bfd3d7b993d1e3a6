import CDiffuserFFI
@_spi(Bindings) import Diffuser

// Gears (the "Gears" part of the Loops section of include/diffuser.h): the core's Gear
// over C values. A feedback of one loop pushes gear events made from its models; a
// feedback of another loop turns gear events into its own events.

/// What a `dfs_gear` handle refers to: the core's gear and the type of its events.
final class CGear {
    let gear = Gear<CValue>()
    let eventType: TypeReference

    init(eventType: ValueType) throws {
        self.eventType = try TypeReference(eventType)
    }
}

func lookupGear(_ handle: OpaquePointer?) throws -> CGear {
    try handles.lookup(handle, .gear, as: CGear.self, name: "gear")
}

/// A `dfs_propagate_fn` as the core's `(Value) -> Output?`: 1 gives a value the core
/// owns, anything else none (and a value stored with it is released, as a failing
/// transform's is).
func propagation(_ function: CFunction<dfs_propagate_fn>, output: ValueType) -> (CValue) -> CValue? {
    { value in
        var out: UnsafeRawPointer?
        guard function.fn(value.pointer, &out, function.ctx) == 1 else {
            if let out { output.releaseFn?(out, output.context.ctx) }
            return nil
        }
        return output.adopt(out)
    }
}

@_cdecl("dfs_gear_new")
public func dfs_gear_new(_ eventType: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let type = try lookupType(eventType, "event_type")
        return handles.insert(try CGear(eventType: type), kind: .gear)
    }
}

@_cdecl("dfs_gear_send")
public func dfs_gear_send(_ gear: OpaquePointer?, _ event: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupGear(gear)
        target.gear.send(try target.eventType.type.kept(CValue(event)))
    }
}

/// `Feedback.pushing(to:)` (`pushing`) or `Feedback.attached(to:)` over a
/// `dfs_propagate_fn`, whose output has the gear's event type when it pushes and the
/// loop's when it is attached.
private func gearFeedback(
    _ gear: OpaquePointer?, _ callback: CCallback<dfs_propagate_fn>, pushing: Bool
) throws -> CFeedback {
    let bus = try lookupGear(gear)
    let function = try CFunction(callback, "propagate")
    return CFeedback { eventType in
        pushing
            ? .pushing(to: bus.gear, propagation(function, output: bus.eventType.type))
            : .attached(to: bus.gear, propagation(function, output: eventType))
    }
}

/// Adds to `loop` the gear feedback over `gear` and `callback`.
private func addGearFeedback(
    _ loop: OpaquePointer?, _ gear: OpaquePointer?, _ callback: CCallback<dfs_propagate_fn>, pushing: Bool,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let target = try lookupLoop(loop)
        let feedback = try gearFeedback(gear, callback, pushing: pushing).make(target.eventType.type)
        return handles.insert(CDisposable(target.loop.add(feedback)), kind: .disposable)
    }
}

@_cdecl("dfs_loop_push_to_gear")
public func dfs_loop_push_to_gear(
    _ loop: OpaquePointer?, _ gear: OpaquePointer?, _ propagate: dfs_propagate_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    addGearFeedback(loop, gear, CCallback(propagate, ctx, destroy), pushing: true, out)
}

@_cdecl("dfs_loop_attach_to_gear")
public func dfs_loop_attach_to_gear(
    _ loop: OpaquePointer?, _ gear: OpaquePointer?, _ propagate: dfs_propagate_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    addGearFeedback(loop, gear, CCallback(propagate, ctx, destroy), pushing: false, out)
}

@_cdecl("dfs_feedback_pushing")
public func dfs_feedback_pushing(
    _ gear: OpaquePointer?, _ propagate: dfs_propagate_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(propagate, ctx, destroy)
    return produce(out) { handles.insert(try gearFeedback(gear, callback, pushing: true), kind: .feedback) }
}

@_cdecl("dfs_feedback_attached")
public func dfs_feedback_attached(
    _ gear: OpaquePointer?, _ propagate: dfs_propagate_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(propagate, ctx, destroy)
    return produce(out) { handles.insert(try gearFeedback(gear, callback, pushing: false), kind: .feedback) }
}

@_cdecl("dfs_gear_retain")
public func dfs_gear_retain(_ gear: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(gear, .gear, name: "gear") }
}

@_cdecl("dfs_gear_release")
public func dfs_gear_release(_ gear: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(gear, .gear, name: "gear") }
}
