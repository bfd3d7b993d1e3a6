import Synchronization

/// The receiving end of one `Fuser.connect`: it owns the user's effect and the
/// disposables of every source connection made for it.
///
/// It is the one place that enforces the connection promises:
/// - events are delivered one at a time (two threads emitting wait for each other);
/// - once `dispose()` has returned, no event reaches the effect, even if a source on
///   another thread is still emitting, because dispose waits for an event in flight;
/// - an effect may dispose its own connection, or cause a nested emission, on the
///   delivering thread without deadlocking.
final class Connection<A>: _Disposable, @unchecked Sendable {
    private let lock = Lock()
    private let owner = Atomic<UInt>(0)
    private let disposed = Atomic<Bool>(false)
    /// Guarded by `lock`; `nil` once disposed.
    private var effect: ((A) throws -> Void)?
    /// Guarded by `lock`; set once the sources are connected.
    private var upstream: _Disposable?

    init(_ effect: @escaping (A) throws -> Void) {
        self.effect = effect
    }

    /// Hands `event` to the effect unless the connection is disposed.
    func deliver(_ event: A) throws {
        let me = currentThreadID()
        if owner.load(ordering: .acquiring) == me {
            // Nested emission from inside our own effect: the lock is ours already.
            if let effect { try effect(event) }
            return
        }
        lock.lock()
        owner.store(me, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        guard let effect else { return }
        try effect(event)
    }

    /// Records the sources' disposable; disposes it at once if the connection was
    /// disposed while the sources were connecting.
    func attach(_ sources: _Disposable) {
        let lateDispose: Bool = withOwnedLock {
            if effect == nil { return true }
            upstream = sources
            return false
        }
        if lateDispose { sources.dispose() }
    }

    func dispose() {
        // Every caller clears the effect under the lock, so that none returns while an
        // event is still being delivered; only the first disposes the sources.
        let first = !disposed.exchange(true, ordering: .acquiringAndReleasing)
        let sources: _Disposable? = withOwnedLock {
            effect = nil
            guard first else { return nil }
            defer { upstream = nil }
            return upstream
        }
        sources?.dispose()
    }

    /// Runs `body` holding the lock, unless the calling thread holds it already.
    private func withOwnedLock<R>(_ body: () -> R) -> R {
        if owner.load(ordering: .acquiring) == currentThreadID() { return body() }
        return lock.withLock(body)
    }
}
