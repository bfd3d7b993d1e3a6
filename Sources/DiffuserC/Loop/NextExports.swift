import CDiffuserFFI
import Synchronization
@_spi(Bindings) import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `dfs_next`: what an update written in C returns, built during the update call.

/// The `dfs_next` of the update in progress on each thread: `dfs_next_model` and
/// `dfs_next_effect` accept only it.
///
/// A `dfs_next` is a number, not the builder's address: each update call gets one never
/// handed out before, so that a `dfs_next` kept past its call (by mistake, or another
/// loop's) is refused even when a later builder lies at the same address.
final class NextBuilder {
    let modelType: ValueType
    let effectType: ValueType
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

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Runs `body` with this builder as the thread's current one, and its `dfs_next`.
    func current<R>(_ body: (OpaquePointer) -> R) -> R {
        let previous = pthread_getspecific(Self.key)
        // 0 is no dfs_next; the counter reaches it again only after 2^64 updates.
        token = max(1, Self.tokens.wrappingAdd(1, ordering: .relaxed).newValue)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer {
            token = 0
            pthread_setspecific(Self.key, previous)
        }
        return body(OpaquePointer(bitPattern: token)!)
    }

    /// The builder behind `next`, which must be the thread's current one.
    static func lookup(_ next: OpaquePointer?) throws -> NextBuilder {
        guard let next else { throw CError.null("next") }
        guard let current = pthread_getspecific(key),
              case let builder = Unmanaged<NextBuilder>.fromOpaque(current).takeUnretainedValue(),
              builder.token != 0, UInt(bitPattern: next) == builder.token
        else {
            throw CError(status: DFS_ERR_HANDLE,
                         message: "next is not the dfs_next of an update in progress on this thread")
        }
        return builder
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

