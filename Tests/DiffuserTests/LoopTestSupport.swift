import Dispatch
import Foundation
@testable import Diffuser

/// A counter model for loop tests.
struct Counter: Equatable, Sendable, CustomStringConvertible {
    var count = 0
    var request: String?

    var description: String { "Counter(\(count)\(request.map { ", \($0)" } ?? ""))" }
}

enum CounterEvent: Equatable, Hashable, Sendable {
    case increment
    case add(Int)
    case request(String?)
    case fail
    case silent
    case effects([CounterEffect])
}

enum CounterEffect: Equatable, Hashable, Sendable {
    case note(String)
    case echo(CounterEvent)
}

struct UpdateError: Error, Equatable {}

/// The update of the counter loop: `.fail` throws, `.silent` makes no model and no
/// effect, `.effects` makes no model and the given effects; the others add and note.
let counterUpdate = Update<Counter, CounterEvent, CounterEffect> { model, event in
    var next = model
    switch event {
    case .increment:
        next.count += 1
        return .next(next, effects: [.note("inc->\(next.count)")])
    case .add(let amount):
        next.count += amount
        return .next(next)
    case .request(let request):
        next.request = request
        return .next(next)
    case .fail:
        throw UpdateError()
    case .silent:
        return .noChange
    case .effects(let effects):
        return .dispatch(effects)
    }
}

/// A thread-safe list of traces, in a comparable form.
final class TraceLog: @unchecked Sendable {
    let lines = Recorder<String>()

    func inspector(_ trace: LoopTrace<Counter, CounterEvent, CounterEffect>) {
        lines.append(Self.describe(trace))
    }

    static func describe<M, E, F>(_ trace: LoopTrace<M, E, F>) -> String {
        switch trace {
        case .started(let first): return "started \(first.model) \(first.effects)"
        case let .stepped(event, model, next): return "stepped \(event) on \(model) -> \(next)"
        case let .failed(event, model, _): return "failed \(event) on \(model)"
        case let .dropped(event, reason): return "dropped \(event) \(reason)"
        case let .effectFailed(effect, _): return "effectFailed \(effect)"
        case .observerFailed: return "observerFailed"
        case .sourceFailed(let error): return "sourceFailed \(error)"
        case .feedbackFailed(let error): return "feedbackFailed \(error)"
        case .stopped(let model): return "stopped \(model)"
        case .disposed(let model): return "disposed \(model)"
        }
    }
}

/// Runs `body` on `count` threads at once and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: count, execute: body)
}

/// Runs `body` on `count` threads of its own, all started at once, and waits for all:
/// unlike `onThreads`, which runs as many bodies at a time as there are cores, every
/// body runs alongside every other.
func onOwnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            body(index)
            done.leave()
        }.start()
    }
    done.wait()
}

/// Waits up to `seconds` for `condition`; returns whether it held.
@discardableResult
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

/// An object whose lifetime a test controls, for observations bound to an owner.
final class Owner {
    let name: String
    init(_ name: String) { self.name = name }
}

/// A flag readable and settable from any thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false
    func raise() { lock.lock(); raised = true; lock.unlock() }
    var isRaised: Bool { lock.lock(); defer { lock.unlock() }; return raised }
}

