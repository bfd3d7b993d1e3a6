import Foundation
import XCTest
@testable import Diffuser

/// A thread-safe log of what effects saw.
final class Recorder<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T] = []

    func append(_ value: T) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [T] { lock.lock(); defer { lock.unlock() }; return storage }
    var count: Int { values.count }
    func clear() { lock.lock(); storage.removeAll(); lock.unlock() }
}

/// A user value whose deinit runs `onFree`: what it frees may call back into the
/// library, which must then not hold a lock of its own (tests of where values are
/// released).
final class FreeHook: @unchecked Sendable {
    let onFree: () -> Void
    init(_ onFree: @escaping () -> Void) { self.onFree = onFree }
    deinit { onFree() }
}

/// Runs `body` on another thread and waits up to 10 s for it to return: true if it did.
/// Otherwise fails with `failure` and keeps `holding` alive for good, since a call that
/// does not return may hold its lock forever and its release would wait for that lock.
func returnsInTime(
    _ failure: String, holding: AnyObject, file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        body()
        done.signal()
    }
    if done.wait(timeout: .now() + 10) == .success { return true }
    XCTFail(failure, file: file, line: line)
    _ = Unmanaged.passRetained(holding)
    return false
}

/// A counter that is deliberately not thread-safe and slow to update, so that two
/// threads inside `increment` at once lose increments: what the locking tests detect.
final class RacyCounter: @unchecked Sendable {
    var value = 0
    func increment() {
        let read = value
        for _ in 0..<50 { _ = UInt64.random(in: 0...1) }
        value = read + 1
    }
}

/// A deterministic pseudo-random generator (SplitMix64), so property tests replay.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct TestFailure: Error, Equatable {
    let tag: String
}

/// A source whose emissions the test drives by hand; counts connections.
final class ManualSource<T>: Source, @unchecked Sendable {
    typealias A = T
    private let lock = NSLock()
    private var effects: [(UInt64, Effect<T>)] = []
    private var next: UInt64 = 0
    private(set) var connects = 0
    private(set) var disposes = 0

    func connect(_ effect: @escaping Effect<T>) -> Fuser<T>.Disposable {
        lock.lock()
        next += 1
        let id = next
        effects.append((id, effect))
        connects += 1
        lock.unlock()
        return AnonymousDisposable { [weak self] in
            guard let self else { return }
            self.lock.lock()
            self.effects.removeAll { $0.0 == id }
            self.disposes += 1
            self.lock.unlock()
        }
    }

    func emit(_ value: T) {
        lock.lock()
        let snapshot = effects
        lock.unlock()
        for (_, effect) in snapshot { effect(value) }
    }

    var activeConnections: Int {
        lock.lock(); defer { lock.unlock() }
        return effects.count
    }
}

/// An effect on integers that logs "name:value", and fails on `failOn`.
struct LogEffect: EffectFunction {
    let name: String
    let log: Recorder<String>
    var failOn: Int?

    func run(_ value: Int) throws {
        if value == failOn { throw TestFailure(tag: name) }
        log.append("\(name):\(value)")
    }
}
