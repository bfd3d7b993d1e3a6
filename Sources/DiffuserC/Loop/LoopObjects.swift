import CDiffuserFFI
@_spi(Bindings) import Diffuser

// The objects behind the handles of the "Loops" section of include/diffuser.h, and the
// lookups the exports share. Loops, jobs, executors and pieces of work live in the one
// handle table (HandleTable.swift), as kinds of their own.

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

func lookupLoop(_ handle: OpaquePointer?) throws -> CLoop {
    try handles.lookup(handle, .loop, as: CLoop.self, name: "loop")
}

/// The status of a refused event.
func refusal(_ error: LoopError) -> CError {
    CError(status: error == .disposed ? DFS_ERR_DISPOSED : DFS_ERR_STOPPED, message: error.description)
}
