import CDiffuserFFI
import Synchronization
@_spi(Bindings) import Diffuser

// `dfs_next`: what an update written in C returns, built during the update call.

/// An update written in C, as the core calls it: `function` fills a `dfs_next` with the
/// next model and the effects. A loop's update and a journal's replay both use it.
func cUpdate(_ function: CFunction<dfs_update_fn>, model: ValueType, effect: ValueType) -> Update<CValue, CValue, CValue> {
    Update { current, event in
        var builder = NextBuilder(modelType: model, effectType: effect)
        let serial = dfsi_error_serial()
        let code = builder.current { next in function.fn(current.pointer, event.pointer, next, function.ctx) }
        if code != 0 { throw CError.callback("update", code: code, since: serial) }
        return Next(model: builder.model, effects: builder.effects)
    }
}

/// A restart written in C, as the core calls it: `function` fills a `dfs_next` with the
/// run's first model (the kept one if it gives none) and its start effects.
func cRestart(_ function: CFunction<dfs_restart_fn>, model: ValueType, effect: ValueType) -> (CValue) -> First<CValue, CValue> {
    { kept in
        var builder = NextBuilder(modelType: model, effectType: effect)
        builder.current { next in function.fn(kept.pointer, next, function.ctx) }
        return First(builder.model ?? kept, effects: builder.effects)
    }
}

/// What an update or restart call has put in its `dfs_next` so far. The call in progress
/// on a thread has the thread's current builder, the only one `dfs_next_model` and
/// `dfs_next_effect` accept.
///
/// A `dfs_next` is a number, not the builder's address: each update call gets one never
/// handed out before, so that a `dfs_next` kept past its call (by mistake, or another
/// loop's) is refused even when a later builder lies at the same address.
///
/// A value on the caller's stack, reached through a thread-local pointer
/// (`dfsi_next_builder`) while it is current: a step of a C loop makes one, and an
/// object would cost each step an allocation and the reference counts of it and of its
/// types.
struct NextBuilder {
    /// The update's value types (a loop's or a replay's), which outlive the update call.
    unowned(unsafe) let modelType: ValueType
    unowned(unsafe) let effectType: ValueType
    var model: CValue?
    var effects: [CValue] = []
    /// This builder's `dfs_next`, while it is the thread's current one.
    private var token: UInt = 0

    /// The last `dfs_next` handed out, by any thread.
    private static let tokens = Atomic<UInt>(0)

    init(modelType: ValueType, effectType: ValueType) {
        self.modelType = modelType
        self.effectType = effectType
    }

    /// Runs `body` with this builder as the thread's current one, and its `dfs_next`.
    mutating func current<R>(_ body: (OpaquePointer) -> R) -> R {
        let previous = dfsi_next_builder()
        // 0 is no dfs_next; the counter reaches it again only after 2^64 updates.
        token = max(1, Self.tokens.wrappingAdd(1, ordering: .relaxed).newValue)
        let next = OpaquePointer(bitPattern: token)!
        defer { token = 0 }
        return withUnsafeMutablePointer(to: &self) { me in
            dfsi_set_next_builder(me)
            defer { dfsi_set_next_builder(previous) }
            return body(next)
        }
    }

    /// The builder behind `next`, which must be the thread's current one.
    static func lookup(_ next: OpaquePointer?) throws -> UnsafeMutablePointer<NextBuilder> {
        guard let next else { throw CError.null("next") }
        guard let current = dfsi_next_builder()?.assumingMemoryBound(to: NextBuilder.self),
              current.pointee.token != 0, UInt(bitPattern: next) == current.pointee.token
        else {
            throw CError(status: DFS_ERR_HANDLE,
                         message: "next is not the dfs_next of an update or restart in progress on this thread")
        }
        return current
    }
}

@_cdecl("dfs_next_model")
public func dfs_next_model(_ next: OpaquePointer?, _ model: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let builder = try NextBuilder.lookup(next)
        builder.pointee.model = builder.pointee.modelType.adopt(model)
    }
}

@_cdecl("dfs_next_effect")
public func dfs_next_effect(_ next: OpaquePointer?, _ effect: UnsafeRawPointer?) -> dfs_status {
    guarded {
        let builder = try NextBuilder.lookup(next)
        builder.pointee.effects.append(builder.pointee.effectType.adopt(effect))
    }
}

