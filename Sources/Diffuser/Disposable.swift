import Synchronization

/// Something that can be stopped: a connection to a source or to a fuser.
///
/// `dispose()` must be idempotent: calling it again does nothing.
public protocol _Disposable {
    /// Stops the connection and releases what it holds. Idempotent.
    func dispose()
}

/// A disposable that runs a closure the first time it is disposed, or when it is
/// deallocated without having been disposed.
///
/// Safe to dispose from several threads at once: the closure runs exactly once, on the
/// thread that disposes it first (or drops its last reference). Not `Sendable`, since
/// the compiler cannot check that the closure may run there; a connection disposes the
/// disposables its sources returned on the thread that disposes the connection.
public class AnonymousDisposable: _Disposable {
    private let disposed = Atomic<Bool>(false)
    private let disposeFn: () -> Void

    /// Creates a disposable that calls `disposeFn` when disposed.
    public init(disposeFn: @escaping () -> Void) {
        self.disposeFn = disposeFn
    }

    deinit {
        dispose()
    }

    /// Runs the dispose closure unless it already ran.
    public func dispose() {
        if disposed.exchange(true, ordering: .acquiringAndReleasing) { return }
        disposeFn()
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool {
        disposed.load(ordering: .acquiring)
    }
}

/// Disposes several disposables, in order, once.
final class CompositeDisposable: _Disposable, @unchecked Sendable {
    private let disposed = Atomic<Bool>(false)
    private let parts: [_Disposable]

    init(_ parts: [_Disposable]) {
        self.parts = parts
    }

    func dispose() {
        if disposed.exchange(true, ordering: .acquiringAndReleasing) { return }
        for part in parts { part.dispose() }
    }
}
