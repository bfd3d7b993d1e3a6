import CDiffuserFFI
@_spi(Bindings) import Diffuser

// Jobs: a piece of work a loop started, and its way back into the loop.

/// What a `dfs_job` handle refers to.
final class CJob {
    let job: Job<CValue>
    let eventType: ValueType

    init(_ job: Job<CValue>, eventType: ValueType) {
        self.job = job
        self.eventType = eventType
    }
}

/// Runs `body` with a job handle borrowed for the call (the C side retains it to keep
/// it). The call's reference is the library's, so a callback that releases the handle
/// without having retained it is refused, and the handle stays valid to the call's end.
func withJobHandle<R>(_ job: Job<CValue>, _ eventType: ValueType, _ body: (OpaquePointer) throws -> R) rethrows -> R {
    let handle = handles.insert(CJob(job, eventType: eventType), kind: .job, lent: true)
    defer { handles.releaseForLibrary(handle, .job) }
    return try body(handle)
}

func lookupJob(_ handle: OpaquePointer?) throws -> CJob {
    try handles.lookup(handle, .job, as: CJob.self, name: "job")
}

@_cdecl("dfs_job_send")
public func dfs_job_send(_ job: OpaquePointer?, _ event: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let target = try lookupJob(job)
        guard target.job.isRunning else {
            throw CError(status: DFS_ERR_DISPOSED, message: "the job ended: it sends no more events")
        }
        let kept = try target.eventType.kept(CValue(event))
        if !target.job.send(kept) {
            throw CError(status: DFS_ERR_DISPOSED, message: "the job ended, or its loop refuses events")
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
    guarded { try handles.retain(job, .job, name: "job") }
}

@_cdecl("dfs_job_release")
public func dfs_job_release(_ job: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(job, .job, name: "job") }
}

