import CDiffuserFFI
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The "Loops" section of include/diffuser.h: the core's Loop over C values. No
// semantics here: each export translates handles, values and callbacks; what runs when
// is the core's business (Sources/Diffuser/Loop).

// MARK: - Handles

/// The kinds of loop objects handed to C.
enum LoopHandleKind: UInt8, CustomStringConvertible {
    case loop, job, executor, work

    var description: String {
        switch self {
        case .loop: return "dfs_loop"
        case .job: return "dfs_job"
        case .executor: return "dfs_executor"
        case .work: return "dfs_work"
        }
    }
}

/// The loop objects handed to C, by index and generation, as `HandleTable` does for the
/// others. A table of its own, whose handles carry a tag bit in their low half, so that
/// a handle of one table is never a valid handle of the other: a loop handle passed to
/// `dfs_diffuser_run` is refused there, and a diffuser handle here. (The kinds could
/// join `HandleKind` instead; the tag keeps the two tables apart meanwhile.)
final class LoopHandleTable: @unchecked Sendable {
    private struct Slot {
        var generation: UInt32 = 1
        var kind: LoopHandleKind = .loop
        var object: AnyObject?
        var references = 0
    }

    private static let tag: UInt = 1 << 31
    private let lock = Lock()
    private var slots: [Slot] = []
    private var free: [Int] = []

    static let shared = LoopHandleTable()

    private static func encode(index: Int, generation: UInt32) -> OpaquePointer {
        OpaquePointer(bitPattern: UInt(generation) << 32 | tag | UInt(index + 1))!
    }

    /// The slot of `handle` if it is a live handle of `kind`. With `lock` held.
    private func liveSlot(_ handle: OpaquePointer, _ kind: LoopHandleKind) -> Int? {
        let bits = UInt(bitPattern: handle)
        guard bits & Self.tag != 0 else { return nil }
        let index = Int(bits & (Self.tag - 1)) - 1
        let generation = UInt32(truncatingIfNeeded: bits >> 32)
        guard index >= 0, index < slots.count, slots[index].generation == generation,
              slots[index].object != nil, slots[index].kind == kind else { return nil }
        return index
    }

    /// Empties a slot and returns what it held. With `lock` held.
    private func freeSlot(_ index: Int) -> AnyObject? {
        let object = slots[index].object
        slots[index].object = nil
        slots[index].generation &+= 1
        if slots[index].generation == 0 { slots[index].generation = 1 }
        free.append(index)
        return object
    }

    private func stale(_ handle: OpaquePointer?, _ kind: LoopHandleKind, _ name: String) -> CError {
        guard handle != nil else { return CError.null(name) }
        return CError(status: DFS_ERR_HANDLE,
                      message: "\(name) is not a valid \(kind) (released, never issued, or of another kind)")
    }

    /// Registers `object` with one reference and returns its handle.
    func insert(_ object: AnyObject, kind: LoopHandleKind) -> OpaquePointer {
        lock.withLock {
            let index: Int
            if let reused = free.popLast() {
                index = reused
            } else {
                slots.append(Slot())
                index = slots.count - 1
            }
            slots[index].kind = kind
            slots[index].object = object
            slots[index].references = 1
            return Self.encode(index: index, generation: slots[index].generation)
        }
    }

    func lookup<T: AnyObject>(_ handle: OpaquePointer?, _ kind: LoopHandleKind, as: T.Type, name: String) throws -> T {
        let object: AnyObject? = handle.flatMap { handle in
            lock.withLock { liveSlot(handle, kind).flatMap { slots[$0].object } }
        }
        guard let object else { throw stale(handle, kind, name) }
        return unsafeDowncast(object, to: T.self)
    }

    func retain(_ handle: OpaquePointer?, _ kind: LoopHandleKind, name: String) throws {
        let ok: Bool = handle.map { handle in
            lock.withLock {
                guard let index = liveSlot(handle, kind) else { return false }
                slots[index].references += 1
                return true
            }
        } ?? false
        if !ok { throw stale(handle, kind, name) }
    }

    /// Drops a reference; the last one frees the slot. The object is dropped after the
    /// lock is released: its deinit may come back to this table (a loop disposing).
    func release(_ handle: OpaquePointer?, _ kind: LoopHandleKind, name: String) throws {
        guard let handle else { return }
        var dropped: AnyObject?
        let ok: Bool = lock.withLock {
            guard let index = liveSlot(handle, kind) else { return false }
            slots[index].references -= 1
            if slots[index].references == 0 { dropped = freeSlot(index) }
            return true
        }
        if !ok { throw stale(handle, kind, name) }
        _ = dropped
    }

    /// Frees the slot of `handle` whatever its references, and returns its object.
    func take(_ handle: OpaquePointer?, _ kind: LoopHandleKind, name: String) throws -> AnyObject {
        let object: AnyObject? = handle.flatMap { handle in
            lock.withLock { liveSlot(handle, kind).flatMap(freeSlot) }
        }
        guard let object else { throw stale(handle, kind, name) }
        return object
    }

    /// How many slots hold an object: for leak checks in tests.
    var liveCount: Int {
        lock.withLock { slots.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } }
    }
}

let loopHandles = LoopHandleTable.shared

// MARK: - Objects behind the handles

typealias CLoopCore = Loop<CValue, CValue, CValue>

/// What a `dfs_loop` handle refers to: the core loop and its three value types.
final class CLoop {
    let loop: CLoopCore
    let modelType: TypeReference
    let eventType: TypeReference
    let effectType: TypeReference

    init(_ loop: CLoopCore, model: ValueType, event: ValueType, effect: ValueType) throws {
        self.loop = loop
        self.modelType = try TypeReference(model)
        self.eventType = try TypeReference(event)
        self.effectType = try TypeReference(effect)
    }

    deinit {
        loop.dispose()
    }
}

/// What a `dfs_job` handle refers to.
final class CJob {
    let job: Job<CValue>
    let eventType: ValueType

    init(_ job: Job<CValue>, eventType: ValueType) {
        self.job = job
        self.eventType = eventType
    }
}

/// What a `dfs_executor` handle refers to; `manual` for a manual executor.
final class CExecutor {
    let executor: LoopExecutor
    let manual: ManualExecutor?

    init(_ executor: LoopExecutor, manual: ManualExecutor? = nil) {
        self.executor = executor
        self.manual = manual
    }
}

/// What a `dfs_work` handle refers to: one piece of work, run once.
final class CWork {
    let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }
}

/// An executor written in C (`dfs_executor_new`): each piece of work becomes a
/// `dfs_work` handle for the C function, which runs it with `dfs_work_run`.
struct CCallbackExecutor: LoopExecutor {
    let function: CFunction<dfs_execute_fn>
    let stepsPerRun: Int

    func execute(_ work: @escaping () -> Void) {
        let handle = loopHandles.insert(CWork(work), kind: .work)
        function.fn(handle, function.ctx)
    }
}

/// The `dfs_next` of the update in progress on each thread: `dfs_next_model` and
/// `dfs_next_effect` accept only it.
final class NextBuilder {
    let modelType: ValueType
    let effectType: ValueType
    var model: CValue?
    var effects: [CValue] = []

    init(modelType: ValueType, effectType: ValueType) {
        self.modelType = modelType
        self.effectType = effectType
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Runs `body` with this builder as the thread's current one, and its address.
    func current<R>(_ body: (OpaquePointer) -> R) -> R {
        let previous = pthread_getspecific(Self.key)
        let address = Unmanaged.passUnretained(self).toOpaque()
        pthread_setspecific(Self.key, address)
        defer { pthread_setspecific(Self.key, previous) }
        return body(OpaquePointer(address))
    }

    /// The builder behind `next`, which must be the thread's current one.
    static func lookup(_ next: OpaquePointer?) throws -> NextBuilder {
        guard let next else { throw CError.null("next") }
        guard let current = pthread_getspecific(key), UnsafeMutableRawPointer(next) == current else {
            throw CError(status: DFS_ERR_HANDLE,
                         message: "next is not the dfs_next of an update in progress on this thread")
        }
        return Unmanaged<NextBuilder>.fromOpaque(current).takeUnretainedValue()
    }
}

// MARK: - Helpers

func lookupLoop(_ handle: OpaquePointer?) throws -> CLoop {
    try loopHandles.lookup(handle, .loop, as: CLoop.self, name: "loop")
}

func lookupExecutor(_ handle: OpaquePointer?, _ name: String = "executor") throws -> CExecutor? {
    guard let handle else { return nil }
    return try loopHandles.lookup(handle, .executor, as: CExecutor.self, name: name)
}

/// The status of a refused event.
func refusal(_ error: LoopError) -> CError {
    let code: Int32 = error == .disposed ? DFS_ERR_DISPOSED : DFS_ERR_STOPPED
    return CError(status: dfs_status(rawValue: UInt32(code)), message: error.description)
}

/// Runs `body` with a job handle borrowed for the call (the C side retains it to keep
/// it).
func withJobHandle<R>(_ job: Job<CValue>, _ eventType: ValueType, _ body: (OpaquePointer) throws -> R) rethrows -> R {
    let handle = loopHandles.insert(CJob(job, eventType: eventType), kind: .job)
    defer { try? loopHandles.release(handle, .job, name: "job") }
    return try body(handle)
}

/// The message of an error for the inspector.
func traceMessage(_ error: Error) -> String {
    (error as? CError)?.message ?? "\(error)"
}

/// A C inspector as the core's.
func inspectorClosure(_ function: CFunction<dfs_inspect_fn>) -> (LoopTrace<CValue, CValue, CValue>) -> Void {
    { trace in
        var c = dfs_trace()
        var effects: [UnsafeRawPointer?] = []
        var message: String?
        switch trace {
        case .started(let first):
            c.kind = DFS_TRACE_STARTED
            c.model = first.model.pointer
            effects = first.effects.map(\.pointer)
        case let .stepped(event, model, next):
            c.kind = DFS_TRACE_STEPPED
            c.event = event.pointer
            c.model = model.pointer
            c.has_next_model = next.model == nil ? 0 : 1
            c.next_model = next.model?.pointer
            effects = next.effects.map(\.pointer)
        case let .failed(event, model, error):
            c.kind = DFS_TRACE_FAILED
            c.event = event.pointer
            c.model = model.pointer
            message = traceMessage(error)
        case let .dropped(event, reason):
            c.kind = DFS_TRACE_DROPPED
            c.event = event.pointer
            switch reason {
            case .cancelledWork: c.reason = DFS_DROP_CANCELLED_WORK
            case .coalesced: c.reason = DFS_DROP_COALESCED
            case .stopped: c.reason = DFS_DROP_STOPPED
            case .disposed: c.reason = DFS_DROP_DISPOSED
            }
        case let .effectFailed(effect, error):
            c.kind = DFS_TRACE_EFFECT_FAILED
            c.effect = effect.pointer
            message = traceMessage(error)
        case .observerFailed(let error):
            c.kind = DFS_TRACE_OBSERVER_FAILED
            message = traceMessage(error)
        case .stopped(let model):
            c.kind = DFS_TRACE_STOPPED
            c.model = model.pointer
        case .disposed(let model):
            c.kind = DFS_TRACE_DISPOSED
            c.model = model.pointer
        }
        // The values stay alive through `trace` for the call.
        withExtendedLifetime(trace) {
            effects.withUnsafeBufferPointer { buffer in
                c.effect_count = buffer.count
                c.effects = buffer.count == 0 ? nil : buffer.baseAddress
                if let message {
                    message.withCString { text in
                        c.error = text
                        function.fn(&c, function.ctx)
                    }
                } else {
                    function.fn(&c, function.ctx)
                }
            }
        }
    }
}

// MARK: - Loops

@_cdecl("dfs_loop_new")
public func dfs_loop_new(_ config: UnsafePointer<dfs_loop_config>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    // Every callback first, so that each destroy runs once whether or not this fails.
    let update = config.map { CCallback($0.pointee.update, $0.pointee.update_ctx, $0.pointee.update_destroy) }
    let coalesce = config.map { CCallback($0.pointee.coalesce, $0.pointee.coalesce_ctx, $0.pointee.coalesce_destroy) }
    let inspect = config.map { CCallback($0.pointee.inspect, $0.pointee.inspect_ctx, $0.pointee.inspect_destroy) }
    var handlerCallbacks: [(CCallback<dfs_handler_fn>, OpaquePointer?)] = []
    if let config, let list = config.pointee.handlers, config.pointee.handler_count > 0,
       config.pointee.handler_count < 1 << 24 {
        for i in 0..<config.pointee.handler_count {
            let handler = list[i]
            handlerCallbacks.append((CCallback(handler.fn, handler.ctx, handler.destroy), handler.executor))
        }
    }
    return produce(out) {
        guard let config else { throw CError.null("config") }
        let c = config.pointee
        let modelType = try lookupType(c.model_type, "model_type")
        let eventType = try lookupType(c.event_type, "event_type")
        let effectType = try lookupType(c.effect_type, "effect_type")
        guard c.handler_count < 1 << 24 else { throw CError.argument("handler_count \(c.handler_count) is out of range") }
        if c.handler_count > 0 && c.handlers == nil { throw CError.null("handlers") }
        if c.start_effect_count > 0 && c.start_effects == nil { throw CError.null("start_effects") }
        guard c.start_effect_count < 1 << 24 else {
            throw CError.argument("start_effect_count \(c.start_effect_count) is out of range")
        }
        let updateFunction = try CFunction(update!, "update")
        let executor = try lookupExecutor(c.executor)

        let handlers: [EffectHandler<CValue, CValue>] = try handlerCallbacks.enumerated().map { index, entry in
            let function = try CFunction(entry.0, "handlers[\(index)].fn")
            let handlerExecutor = try lookupExecutor(entry.1, "handlers[\(index)].executor")
            return EffectHandler(on: handlerExecutor?.executor) { effect, job in
                let code = withJobHandle(job, eventType) { function.fn(effect.pointer, $0, function.ctx) }
                if code != 0 { throw CError.callback("effect handler", code: code) }
            }
        }
        var coalescing: ((CValue) -> AnyHashable?)?
        if coalesce!.fn != nil {
            let function = try CFunction(coalesce!, "coalesce")
            coalescing = { event in
                var key: UInt64 = 0
                return function.fn(event.pointer, &key, function.ctx) == 1 ? AnyHashable(key) : nil
            }
        }
        var inspector: ((LoopTrace<CValue, CValue, CValue>) -> Void)?
        if inspect!.fn != nil { inspector = inspectorClosure(try CFunction(inspect!, "inspect")) }

        let model = try modelType.keep(c.model)
        var startEffects: [CValue] = []
        for i in 0..<c.start_effect_count { startEffects.append(try effectType.keep(c.start_effects![i])) }

        let loopUpdate = Update<CValue, CValue, CValue> { model, event in
            let builder = NextBuilder(modelType: modelType, effectType: effectType)
            let code = builder.current { next in updateFunction.fn(model.pointer, event.pointer, next, updateFunction.ctx) }
            if code != 0 { throw CError.callback("update", code: code) }
            return Next(model: builder.model, effects: builder.effects)
        }
        let loop = CLoopCore(
            model: model,
            startEffects: startEffects,
            update: loopUpdate,
            handlers: handlers,
            executor: executor?.executor ?? CallerExecutor(),
            coalescing: coalescing,
            inspector: inspector,
            autostart: false
        )
        let made = try CLoop(loop, model: modelType, event: eventType, effect: effectType)
        let handle = loopHandles.insert(made, kind: .loop)
        if c.manual_start == 0 { loop.start() }
        return handle
    }
}

@_cdecl("dfs_next_model")
public func dfs_next_model(_ next: OpaquePointer?, _ model: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let builder = try NextBuilder.lookup(next)
        builder.model = builder.modelType.adopt(model)
    }
}

@_cdecl("dfs_next_effect")
public func dfs_next_effect(_ next: OpaquePointer?, _ effect: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let builder = try NextBuilder.lookup(next)
        builder.effects.append(builder.effectType.adopt(effect))
    }
}

@_cdecl("dfs_loop_dispatch")
public func dfs_loop_dispatch(_ loop: OpaquePointer?, _ event: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupLoop(loop)
        let kept = try target.eventType.type.kept(CValue(event))
        do {
            try target.loop.tryDispatch(kept)
        } catch let error as LoopError {
            throw refusal(error)
        }
    }
}

@_cdecl("dfs_loop_model")
public func dfs_loop_model(_ loop: OpaquePointer?, _ reader: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupLoop(loop)
        guard let reader else { throw CError.null("reader") }
        let model = target.loop.model
        let code = withExtendedLifetime(model) { reader(model.pointer, ctx) }
        if code != 0 { throw CError.callback("reader", code: code) }
    }
}

@_cdecl("dfs_loop_observe")
public func dfs_loop_observe(
    _ loop: OpaquePointer?, _ observer: dfs_effect_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(observer, ctx, destroy)
    return produce(out) {
        let target = try lookupLoop(loop)
        let function = try CFunction(callback, "observer")
        let subscription = target.loop.subscribe { model in
            let code = function.fn(model.pointer, function.ctx)
            if code != 0 { throw CError.callback("observer", code: code) }
        }
        return handles.insert(CDisposable(subscription), kind: .disposable)
    }
}

@_cdecl("dfs_loop_render")
public func dfs_loop_render(
    _ loop: OpaquePointer?, _ diffuser: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let target = try lookupLoop(loop)
        let render = try lookupDiffuser(diffuser)
        guard render.type.type === target.modelType.type else {
            throw CError.type("diffuser has type '\(render.type.type.name)', the loop's models '\(target.modelType.type.name)'")
        }
        let subscription = target.loop.render(render.diffuser)
        return handles.insert(CDisposable(subscription), kind: .disposable)
    }
}

@_cdecl("dfs_loop_connect")
public func dfs_loop_connect(
    _ loop: OpaquePointer?, _ sources: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let target = try lookupLoop(loop)
        let fuser = try lookupFuser(sources, "sources")
        let eventType = target.eventType.type
        guard fuser.type.type === eventType else {
            throw CError.type("sources have type '\(fuser.type.type.name)', the loop's events '\(eventType.name)'")
        }
        // Sources lend their events for the emission; the loop queues them.
        let kept = Fuser<CValue>.extract(throwing: { try eventType.kept($0) }, fuser.fuser)
        return handles.insert(CDisposable(target.loop.connect(kept)), kind: .disposable)
    }
}

func overlapOf(_ overlap: dfs_overlap) throws -> Overlap {
    switch overlap {
    case DFS_OVERLAP_CANCEL_PREVIOUS: return .cancelPrevious
    case DFS_OVERLAP_KEEP_PREVIOUS: return .keepPrevious
    case DFS_OVERLAP_CONCURRENT: return .concurrent
    default: throw CError.argument("overlap \(overlap.rawValue) is not a dfs_overlap")
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
        let function = try CFunction(callback, "fn")
        let strategy = try overlapOf(overlap)
        let runOn = try lookupExecutor(executor)
        let eventType = target.eventType.type
        let feedback = Feedback<CValue, CValue>.work(on: runOn?.executor, overlap: strategy) { model, job in
            withJobHandle(job, eventType) { function.fn(model.pointer, $0, function.ctx) }
        }
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
        let type = try lookupType(requestType, "request_type")
        let select = try CTransform(selectCallback, output: type, borrowed: false)
        let function = try CFunction(callback, "fn")
        let strategy = try overlapOf(overlap)
        let runOn = try lookupExecutor(executor)
        let eventType = target.eventType.type
        let typeReference = try TypeReferenceBox(type)
        let feedback = Feedback<CValue, CValue>.request(
            { model in
                let value = try select.select(model)
                return value.pointer == nil ? nil : value
            },
            isSame: { a, b in withExtendedLifetime(typeReference) { (try? type.equal(a.pointer, b.pointer)) ?? false } },
            on: runOn?.executor,
            overlap: strategy
        ) { request, job in
            withJobHandle(job, eventType) { function.fn(request.pointer, $0, function.ctx) }
        }
        return handles.insert(CDisposable(target.loop.add(feedback)), kind: .disposable)
    }
}

/// Keeps a type's handle alive while a feedback compares requests of that type.
final class TypeReferenceBox {
    let reference: TypeReference

    init(_ type: ValueType) throws {
        reference = try TypeReference(type)
    }
}

@_cdecl("dfs_loop_start")
public func dfs_loop_start(_ loop: OpaquePointer?) -> dfs_status {
    guarded {
        let target = try lookupLoop(loop)
        if !target.loop.start() { throw refusal(.disposed) }
    }
}

@_cdecl("dfs_loop_stop")
public func dfs_loop_stop(_ loop: OpaquePointer?) -> dfs_status {
    guarded { try lookupLoop(loop).loop.stop() }
}

@_cdecl("dfs_loop_dispose")
public func dfs_loop_dispose(_ loop: OpaquePointer?) -> dfs_status {
    guarded { try lookupLoop(loop).loop.dispose() }
}

@_cdecl("dfs_loop_is_running")
public func dfs_loop_is_running(_ loop: OpaquePointer?) -> Int32 {
    var running: Int32 = 0
    let status = guarded { running = try lookupLoop(loop).loop.isRunning ? 1 : 0 }
    return status == DFS_OK ? running : -Int32(status.rawValue)
}

@_cdecl("dfs_loop_retain")
public func dfs_loop_retain(_ loop: OpaquePointer?) -> dfs_status {
    guarded { try loopHandles.retain(loop, .loop, name: "loop") }
}

@_cdecl("dfs_loop_release")
public func dfs_loop_release(_ loop: OpaquePointer?) -> dfs_status {
    guarded { try loopHandles.release(loop, .loop, name: "loop") }
}

// MARK: - Jobs

func lookupJob(_ handle: OpaquePointer?) throws -> CJob {
    try loopHandles.lookup(handle, .job, as: CJob.self, name: "job")
}

@_cdecl("dfs_job_send")
public func dfs_job_send(_ job: OpaquePointer?, _ event: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupJob(job)
        guard target.job.isRunning else {
            throw CError(status: dfs_status(rawValue: UInt32(DFS_ERR_DISPOSED)), message: "the job ended: it sends no more events")
        }
        let kept = try target.eventType.kept(CValue(event))
        if !target.job.send(kept) {
            throw CError(status: dfs_status(rawValue: UInt32(DFS_ERR_DISPOSED)), message: "the job ended, or its loop refuses events")
        }
    }
}

@_cdecl("dfs_job_finish")
public func dfs_job_finish(_ job: OpaquePointer?) -> dfs_status {
    guarded { try lookupJob(job).job.finish() }
}

@_cdecl("dfs_job_cancel")
public func dfs_job_cancel(_ job: OpaquePointer?) -> dfs_status {
    guarded { try lookupJob(job).job.cancel() }
}

@_cdecl("dfs_job_is_cancelled")
public func dfs_job_is_cancelled(_ job: OpaquePointer?) -> Int32 {
    var cancelled: Int32 = 0
    let status = guarded { cancelled = try lookupJob(job).job.isCancelled ? 1 : 0 }
    return status == DFS_OK ? cancelled : -Int32(status.rawValue)
}

@_cdecl("dfs_job_on_cancel")
public func dfs_job_on_cancel(
    _ job: OpaquePointer?, _ action: dfs_action_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?
) -> dfs_status {
    let callback = CCallback(action, ctx, destroy)
    return guarded {
        let target = try lookupJob(job)
        let function = try CFunction(callback, "action")
        target.job.onCancel { function.fn(function.ctx) }
    }
}

@_cdecl("dfs_job_retain")
public func dfs_job_retain(_ job: OpaquePointer?) -> dfs_status {
    guarded { try loopHandles.retain(job, .job, name: "job") }
}

@_cdecl("dfs_job_release")
public func dfs_job_release(_ job: OpaquePointer?) -> dfs_status {
    guarded { try loopHandles.release(job, .job, name: "job") }
}

// MARK: - Executors

@_cdecl("dfs_executor_new")
public func dfs_executor_new(
    _ execute: dfs_execute_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?, _ stepsPerRun: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(execute, ctx, destroy)
    return produce(out) {
        let function = try CFunction(callback, "execute")
        guard stepsPerRun >= 0 else { throw CError.argument("steps_per_run \(stepsPerRun) is out of range") }
        let executor = CCallbackExecutor(function: function, stepsPerRun: stepsPerRun == 0 ? .max : stepsPerRun)
        return loopHandles.insert(CExecutor(executor), kind: .executor)
    }
}

@_cdecl("dfs_executor_new_background")
public func dfs_executor_new_background(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) { loopHandles.insert(CExecutor(BackgroundExecutor()), kind: .executor) }
}

@_cdecl("dfs_executor_new_manual")
public func dfs_executor_new_manual(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let manual = ManualExecutor()
        return loopHandles.insert(CExecutor(manual, manual: manual), kind: .executor)
    }
}

/// The manual executor behind `handle`, or the status to return, negated.
private func manualExecutor(_ handle: OpaquePointer?) -> Result<ManualExecutor, CError> {
    do {
        guard let executor = try lookupExecutor(handle) else { throw CError.null("executor") }
        guard let manual = executor.manual else { throw CError.argument("executor is not a manual executor") }
        return .success(manual)
    } catch let error as CError {
        ThreadError.setLast(error.message)
        return .failure(error)
    } catch {
        return .failure(CError.argument("\(error)"))
    }
}

@_cdecl("dfs_executor_run_next")
public func dfs_executor_run_next(_ executor: OpaquePointer?) -> Int32 {
    switch manualExecutor(executor) {
    case .success(let manual): return manual.runNext() ? 1 : 0
    case .failure(let error): return -Int32(error.status.rawValue)
    }
}

@_cdecl("dfs_executor_run_all")
public func dfs_executor_run_all(_ executor: OpaquePointer?) -> Int32 {
    switch manualExecutor(executor) {
    case .success(let manual): return Int32(clamping: manual.runAll())
    case .failure(let error): return -Int32(error.status.rawValue)
    }
}

@_cdecl("dfs_work_run")
public func dfs_work_run(_ work: OpaquePointer?) -> dfs_status {
    var body: (() -> Void)?
    let status = guarded {
        body = (try loopHandles.take(work, .work, name: "work") as! CWork).body
    }
    body?()
    return status
}

@_cdecl("dfs_executor_release")
public func dfs_executor_release(_ executor: OpaquePointer?) -> dfs_status {
    guarded { try loopHandles.release(executor, .executor, name: "executor") }
}
