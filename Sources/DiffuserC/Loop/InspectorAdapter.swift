import CDiffuserFFI
@_spi(Bindings) import Diffuser

// A C inspector (`dfs_inspect_fn`) as the core's: each LoopTrace as a `dfs_trace` whose
// pointers are borrowed for the call.

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
        case .sourceFailed(let error):
            c.kind = DFS_TRACE_SOURCE_FAILED
            message = traceMessage(error)
        case .feedbackFailed(let error):
            c.kind = DFS_TRACE_FEEDBACK_FAILED
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

