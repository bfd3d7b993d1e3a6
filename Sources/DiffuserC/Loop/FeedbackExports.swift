import CDiffuserFFI
@_spi(Bindings) import Diffuser

// Feedbacks (the "Feedbacks" part of the Loops section of include/diffuser.h): a
// dfs_feedback is the core's Feedback, a description a loop registers at its creation
// (dfs_loop_config.feedbacks, the core's `Loop(feedbacks:)`) or later (dfs_loop_add,
// the core's `Loop.add`). dfs_loop_add_feedback and dfs_loop_add_request_feedback make
// one and add it. Gear feedbacks are in GearExports.swift.

/// What a `dfs_feedback` handle refers to: a feedback for loops of any types. The core's
/// `Feedback` is made for each loop the handle is registered with, once that loop's
/// event type (of the events its jobs and gears send) is known.
final class CFeedback {
    let make: (_ eventType: ValueType) -> Feedback<CValue, CValue>

    init(_ make: @escaping (_ eventType: ValueType) -> Feedback<CValue, CValue>) {
        self.make = make
    }
}

func lookupFeedback(_ handle: OpaquePointer?, _ name: @autoclosure () -> String = "feedback") throws -> CFeedback {
    try handles.lookup(handle, .feedback, as: CFeedback.self, name: name())
}

func overlapOf(_ overlap: dfs_overlap) throws -> Overlap {
    switch overlap {
    case DFS_OVERLAP_CANCEL_PREVIOUS: return .cancelPrevious
    case DFS_OVERLAP_KEEP_PREVIOUS: return .keepPrevious
    case DFS_OVERLAP_CONCURRENT: return .concurrent
    default: throw CError.argument("overlap \(overlap.rawValue) is not a dfs_overlap")
    }
}

/// `Feedback.work` over a `dfs_feedback_fn`.
func workFeedback(
    _ overlap: dfs_overlap, _ executor: OpaquePointer?, _ callback: CCallback<dfs_feedback_fn>
) throws -> CFeedback {
    let function = try CFunction(callback, "fn")
    let strategy = try overlapOf(overlap)
    let runOn = try lookupExecutor(executor)?.executor
    return CFeedback { eventType in
        .work(on: runOn, overlap: strategy) { model, job in
            withJobHandle(job, eventType) { function.fn(model.pointer, $0, function.ctx) }
        }
    }
}

/// `Feedback.request` over a `dfs_transform_fn` selecting requests of `requestType`
/// (NULL for none, compared with the type's equality) and a `dfs_feedback_fn`. A model
/// whose selection or comparison fails leaves the request as it was; the failure goes to
/// the inspector.
func requestFeedback(
    _ requestType: OpaquePointer?, _ selectCallback: CCallback<dfs_transform_fn>, _ overlap: dfs_overlap,
    _ executor: OpaquePointer?, _ callback: CCallback<dfs_feedback_fn>
) throws -> CFeedback {
    let type = try lookupType(requestType, "request_type")
    let select = try CTransform(selectCallback, output: type, borrowed: false, role: "request")
    let function = try CFunction(callback, "fn")
    let strategy = try overlapOf(overlap)
    let runOn = try lookupExecutor(executor)?.executor
    let typeReference = try TypeReferenceBox(type)
    return CFeedback { eventType in
        .request(
            { model in
                let value = try select.select(model, role: "request")
                return value.pointer == nil ? nil : value
            },
            isSame: { a, b in try withExtendedLifetime(typeReference) { try type.equal(a.pointer, b.pointer) } },
            on: runOn,
            overlap: strategy
        ) { request, job in
            withJobHandle(job, eventType) { function.fn(request.pointer, $0, function.ctx) }
        }
    }
}

/// The feedbacks of a loop's config, made for its event type, in order.
func configFeedbacks(
    _ list: UnsafePointer<OpaquePointer?>?, _ count: Int, eventType: ValueType
) throws -> [Feedback<CValue, CValue>] {
    guard try checkedCount(count, "feedback_count", atMost: maxMembers) > 0 else { return [] }
    guard let list else { throw CError.null("feedbacks") }
    return try (0..<count).map { try lookupFeedback(list[$0], "feedbacks[\($0)]").make(eventType) }
}

/// Keeps a type's handle alive while a feedback compares requests of that type.
final class TypeReferenceBox {
    let reference: TypeReference

    init(_ type: ValueType) throws {
        reference = try TypeReference(type)
    }
}

@_cdecl("dfs_feedback_work")
public func dfs_feedback_work(
    _ overlap: dfs_overlap, _ executor: OpaquePointer?, _ fn: dfs_feedback_fn?, _ ctx: UnsafeMutableRawPointer?,
    _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(fn, ctx, destroy)
    return produce(out) { handles.insert(try workFeedback(overlap, executor, callback), kind: .feedback) }
}

@_cdecl("dfs_feedback_request")
public func dfs_feedback_request(
    _ requestType: OpaquePointer?, _ request: dfs_transform_fn?, _ requestCtx: UnsafeMutableRawPointer?,
    _ requestDestroy: dfs_destroy_fn?, _ overlap: dfs_overlap, _ executor: OpaquePointer?, _ fn: dfs_feedback_fn?,
    _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let selectCallback = CCallback(request, requestCtx, requestDestroy)
    let callback = CCallback(fn, ctx, destroy)
    return produce(out) {
        handles.insert(try requestFeedback(requestType, selectCallback, overlap, executor, callback), kind: .feedback)
    }
}

@_cdecl("dfs_loop_add")
public func dfs_loop_add(
    _ loop: OpaquePointer?, _ feedback: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let target = try lookupLoop(loop)
        let description = try lookupFeedback(feedback)
        return handles.insert(CDisposable(target.loop.add(description.make(target.eventType.type))), kind: .disposable)
    }
}

@_cdecl("dfs_loop_add_feedback")
public func dfs_loop_add_feedback(
    _ loop: OpaquePointer?, _ overlap: dfs_overlap, _ executor: OpaquePointer?, _ fn: dfs_feedback_fn?,
    _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(fn, ctx, destroy)
    return produce(out) {
        let target = try lookupLoop(loop)
        let feedback = try workFeedback(overlap, executor, callback).make(target.eventType.type)
        return handles.insert(CDisposable(target.loop.add(feedback)), kind: .disposable)
    }
}

@_cdecl("dfs_loop_add_request_feedback")
public func dfs_loop_add_request_feedback(
    _ loop: OpaquePointer?, _ requestType: OpaquePointer?, _ request: dfs_transform_fn?,
    _ requestCtx: UnsafeMutableRawPointer?, _ requestDestroy: dfs_destroy_fn?, _ overlap: dfs_overlap,
    _ executor: OpaquePointer?, _ fn: dfs_feedback_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let selectCallback = CCallback(request, requestCtx, requestDestroy)
    let callback = CCallback(fn, ctx, destroy)
    return produce(out) {
        let target = try lookupLoop(loop)
        let feedback = try requestFeedback(requestType, selectCallback, overlap, executor, callback)
            .make(target.eventType.type)
        return handles.insert(CDisposable(target.loop.add(feedback)), kind: .disposable)
    }
}

@_cdecl("dfs_feedback_retain")
public func dfs_feedback_retain(_ feedback: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(feedback, .feedback, name: "feedback") }
}

@_cdecl("dfs_feedback_release")
public func dfs_feedback_release(_ feedback: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(feedback, .feedback, name: "feedback") }
}
