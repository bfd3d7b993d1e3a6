import CDiffuserFFI
@_spi(Bindings) import Diffuser

// The "Journals" subsection of the Loops section of include/diffuser.h: the core's
// Journal over C values. No semantics here: recording is the core loop's
// (`Loop.record(into:)`), replay is `Journal.replay`; each export translates handles,
// values and callbacks.

/// What a `dfs_journal` handle refers to: the core journal and its two value types.
final class CJournal {
    let journal = Journal<CValue, CValue>()
    let modelType: TypeReference
    let eventType: TypeReference

    init(model: ValueType, event: ValueType) throws {
        modelType = try TypeReference(model)
        eventType = try TypeReference(event)
    }

    /// Throws `DFS_ERR_TYPE` unless the journal records models and events of these types.
    func check(model: ValueType, event: ValueType) throws {
        guard modelType.type === model, eventType.type === event else {
            let note = modelType.type === model ? eventType.type.sameNameNote(event) : modelType.type.sameNameNote(model)
            throw CError.type("the journal records '\(modelType.type.name)' models and '\(eventType.type.name)' events, "
                              + "the loop has '\(model.name)' and '\(event.name)'" + note)
        }
    }
}

func lookupJournal(_ handle: OpaquePointer?) throws -> CJournal {
    try handles.lookup(handle, .journal, as: CJournal.self, name: "journal")
}

@_cdecl("dfs_journal_new")
public func dfs_journal_new(
    _ modelType: OpaquePointer?, _ eventType: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> dfs_status {
    produce(out) {
        let model = try lookupType(modelType, "model_type")
        let event = try lookupType(eventType, "event_type")
        return handles.insert(try CJournal(model: model, event: event), kind: .journal)
    }
}

@_cdecl("dfs_loop_record")
public func dfs_loop_record(_ loop: OpaquePointer?, _ journal: OpaquePointer?) -> dfs_status {
    guarded {
        let target = try lookupLoop(loop)
        guard let journal else {
            target.loop.record(into: nil)
            return
        }
        let recorder = try lookupJournal(journal)
        try recorder.check(model: target.modelType.type, event: target.eventType.type)
        target.loop.record(into: recorder.journal)
    }
}

@_cdecl("dfs_journal_entries")
public func dfs_journal_entries(
    _ journal: OpaquePointer?, _ visit: dfs_journal_visit_fn?, _ ctx: UnsafeMutableRawPointer?
) -> dfs_status {
    guarded {
        let source = try lookupJournal(journal)
        guard let visit else { throw CError.null("visit") }
        // A copy: the values stay alive through it for the calls.
        let entries = source.journal.entries
        for entry in entries {
            let serial = dfsi_error_serial()
            let code: Int32
            switch entry {
            case .start(let model): code = visit(DFS_JOURNAL_START, model.pointer, ctx)
            case .event(let event): code = visit(DFS_JOURNAL_EVENT, event.pointer, ctx)
            }
            if code != 0 { throw CError.callback("visit", code: code, since: serial) }
        }
    }
}

@_cdecl("dfs_journal_clear")
public func dfs_journal_clear(_ journal: OpaquePointer?) -> dfs_status {
    guarded { try lookupJournal(journal).journal.clear() }
}

@_cdecl("dfs_journal_replay")
public func dfs_journal_replay(
    _ journal: OpaquePointer?, _ effectType: OpaquePointer?, _ update: dfs_update_fn?, _ updateCtx: UnsafeMutableRawPointer?,
    _ visit: dfs_effect_fn?, _ visitCtx: UnsafeMutableRawPointer?
) -> dfs_status {
    guarded {
        let source = try lookupJournal(journal)
        let effect = try lookupType(effectType, "effect_type")
        guard let visit else { throw CError.null("visit") }
        let function = try CFunction(CCallback(update, updateCtx, nil), "update")
        let models = source.journal.replay(cUpdate(function, model: source.modelType.type, effect: effect))
        for model in models {
            let serial = dfsi_error_serial()
            let code = visit(model.pointer, visitCtx)
            if code != 0 { throw CError.callback("visit", code: code, since: serial) }
        }
    }
}

@_cdecl("dfs_journal_retain")
public func dfs_journal_retain(_ journal: OpaquePointer?) -> dfs_status {
    guarded { try handles.retain(journal, .journal, name: "journal") }
}

@_cdecl("dfs_journal_release")
public func dfs_journal_release(_ journal: OpaquePointer?) -> dfs_status {
    guarded { try handles.release(journal, .journal, name: "journal") }
}
