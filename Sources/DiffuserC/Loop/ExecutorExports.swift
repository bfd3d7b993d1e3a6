import CDiffuserFFI
@_spi(Bindings) import Diffuser

// The executors of the "Loops" section of include/diffuser.h: a C-written executor, the
// background one and the manual one, and the pieces of work C runs.

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

    func execute(_ work: @escaping @Sendable () -> Void) {
        let handle = handles.insert(CWork(work), kind: .work)
        function.fn(handle, function.ctx)
    }
}


func lookupExecutor(_ handle: OpaquePointer?, _ name: String = "executor") throws -> CExecutor? {
    guard let handle else { return nil }
    return try handles.lookup(handle, .executor, as: CExecutor.self, name: name)
}

@_cdecl("dfs_executor_new")
public func dfs_executor_new(
    _ execute: dfs_execute_fn?, _ ctx: UnsafeMutableRawPointer?, _ destroy: dfs_destroy_fn?, _ stepsPerRun: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    let callback = CCallback(execute, ctx, destroy)
    return produce(out) {
        let function = try CFunction(callback, "execute")
        // A size_t above Int.max (negative here) is as good as no limit.
        let executor = CCallbackExecutor(function: function, stepsPerRun: stepsPerRun <= 0 ? .max : stepsPerRun)
        return handles.insert(CExecutor(executor), kind: .executor)
    }
}

@_cdecl("dfs_executor_new_background")
public func dfs_executor_new_background(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let executor: BackgroundExecutor
        do {
            executor = try BackgroundExecutor.started()
        } catch {
            throw CError(status: DFS_ERR_MEMORY, message: "dfs_executor_new_background: \(error)")
        }
        return handles.insert(CExecutor(executor), kind: .executor)
    }
}

@_cdecl("dfs_executor_new_manual")
public func dfs_executor_new_manual(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> dfs_status {
    produce(out) {
        let manual = ManualExecutor()
        return handles.insert(CExecutor(manual, manual: manual), kind: .executor)
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
    case .success(let manual): return forgettingUntakenMessages { manual.runNext() } ? 1 : 0
    case .failure(let error): return -Int32(error.status.rawValue)
    }
}

@_cdecl("dfs_executor_run_all")
public func dfs_executor_run_all(_ executor: OpaquePointer?) -> Int32 {
    switch manualExecutor(executor) {
    case .success(let manual): return Int32(clamping: forgettingUntakenMessages { manual.runAll() })
    case .failure(let error): return -Int32(error.status.rawValue)
    }
}

@_cdecl("dfs_work_run")
public func dfs_work_run(_ work: OpaquePointer?) -> dfs_status {
    var body: (() -> Void)?
    let status = guarded {
        body = (try handles.take(work, .work, name: "work") as! CWork).body
    }
    if let body { forgettingUntakenMessages(body) }
    return status
}

@_cdecl("dfs_executor_release")
public func dfs_executor_release(_ executor: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(executor, .executor, name: "executor") }
}
