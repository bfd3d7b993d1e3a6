import CDiffuserFFI
@_spi(Bindings) import Diffuser

// The "Loops" section of include/diffuser.h: the core's Loop over C values. No
// semantics here: each export translates handles, values and callbacks; what runs when
// is the core's business (Sources/Diffuser/Loop).

@_cdecl("dfs_loop_new")
public func dfs_loop_new(_ config: UnsafePointer<dfs_loop_config>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    // Every callback first, so that each destroy runs once whether or not this fails.
    let update = config.map { CCallback($0.pointee.update, $0.pointee.update_ctx, $0.pointee.update_destroy) }
    let coalesce = config.map { CCallback($0.pointee.coalesce, $0.pointee.coalesce_ctx, $0.pointee.coalesce_destroy) }
    let inspect = config.map { CCallback($0.pointee.inspect, $0.pointee.inspect_ctx, $0.pointee.inspect_destroy) }
    let restart = config.map { CCallback($0.pointee.restart, $0.pointee.restart_ctx, $0.pointee.restart_destroy) }
    var handlerCallbacks: [(CCallback<dfs_handler_fn>, OpaquePointer?)] = []
    if let config, let list = config.pointee.handlers, config.pointee.handler_count > 0,
       config.pointee.handler_count <= maxMembers {
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
        if try checkedCount(c.handler_count, "handler_count", atMost: maxMembers) > 0 && c.handlers == nil {
            throw CError.null("handlers")
        }
        if try checkedCount(c.start_effect_count, "start_effect_count", atMost: maxMembers) > 0 && c.start_effects == nil {
            throw CError.null("start_effects")
        }
        let updateFunction = try CFunction(update!, "update")
        let executor = try lookupExecutor(c.executor)
        let feedbacks = try configFeedbacks(c.feedbacks, c.feedback_count, eventType: eventType)

        let handlers: [EffectHandler<CValue, CValue>] = try handlerCallbacks.enumerated().map { index, entry in
            let function = try CFunction(entry.0, "handlers[\(index)].fn")
            let handlerExecutor = try lookupExecutor(entry.1, "handlers[\(index)].executor")
            return EffectHandler(on: handlerExecutor?.executor) { effect, job in
                let serial = dfsi_error_serial()
                let code = withJobHandle(job, eventType) { function.fn(effect.pointer, $0, function.ctx) }
                if code != 0 { throw CError.callback("effect handler", code: code, since: serial) }
            }
        }
        var coalescing: ((CValue) -> AnyHashable?)?
        if coalesce!.fn != nil {
            coalescing = cCoalescing(try CFunction(coalesce!, "coalesce"), done: c.coalesce_done)
        }
        var inspector: ((LoopTrace<CValue, CValue, CValue>) -> Void)?
        if inspect!.fn != nil { inspector = inspectorClosure(try CFunction(inspect!, "inspect")) }
        var loopRestart: ((CValue) -> First<CValue, CValue>)?
        if restart!.fn != nil {
            loopRestart = cRestart(try CFunction(restart!, "restart"), model: modelType, effect: effectType)
        }

        let journal = try c.journal.map { try lookupJournal($0) }
        if let journal {
            try journal.check(model: modelType, event: eventType)
        }
        let model = try modelType.keep(c.model)
        var startEffects: [CValue] = []
        for i in 0..<c.start_effect_count { startEffects.append(try effectType.keep(c.start_effects![i])) }

        let loopUpdate = cUpdate(updateFunction, model: modelType, effect: effectType)
        let loop = CLoopCore(
            model: model,
            startEffects: startEffects,
            update: loopUpdate,
            handlers: handlers,
            feedbacks: feedbacks,
            executor: executor?.executor ?? CallerExecutor(),
            coalescing: coalescing,
            journal: journal?.journal,
            restart: loopRestart,
            inspector: inspector,
            autostart: false
        )
        let made = try CLoop(loop, model: modelType, event: eventType, effect: effectType)
        let handle = handles.insert(made, kind: .loop)
        if c.manual_start == 0 { loop.start() }
        return handle
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
        let serial = dfsi_error_serial()
        let code = withExtendedLifetime(model) { reader(model.pointer, ctx) }
        if code != 0 { throw CError.callback("reader", code: code, since: serial) }
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
            let serial = dfsi_error_serial()
            let code = function.fn(model.pointer, function.ctx)
            if code != 0 { throw CError.callback("observer", code: code, since: serial) }
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
            throw CError.type("diffuser has type '\(render.type.type.name)', the loop's models '\(target.modelType.type.name)'"
                              + render.type.type.sameNameNote(target.modelType.type))
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
            throw CError.type("sources have type '\(fuser.type.type.name)', the loop's events '\(eventType.name)'"
                              + fuser.type.type.sameNameNote(eventType))
        }
        // Sources lend their events for the emission; the loop queues a kept copy.
        let connection = target.loop.connect(fuser.fuser, keeping: { try eventType.kept($0) })
        return handles.insert(CDisposable(connection), kind: .disposable)
    }
}

@_cdecl("dfs_loop_start")
public func dfs_loop_start(_ loop: OpaquePointer?) -> dfs_status {
    guarded {
        let target = try lookupLoop(loop)
        do { try target.loop.tryStart() } catch let error as LoopError { throw refusal(error) }
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
    guarded { try handles.retain(loop, .loop, name: "loop") }
}

@_cdecl("dfs_loop_release")
public func dfs_loop_release(_ loop: OpaquePointer?) -> dfs_status {
    // The last reference disposes the loop now: also from inside one of its callbacks,
    // where the call that drives the loop still holds the object (its deinit would
    // dispose it only once that call returns, after the rest of the queue).
    guarded { (try handles.release(loop, .loop, name: "loop") as? CLoop)?.loop.dispose() }
}

