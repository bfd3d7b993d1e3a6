import Foundation
import XCTest
import Diffuser

/// The runner of the loop vectors (conformance/README.md, section 11): it builds a
/// `Loop<JSON, JSON, JSON>` whose update, handlers, observers and feedbacks interpret the
/// vector's small vocabulary and log every call, runs the steps, and compares each step's
/// log, result, model and running state with its `expect`.
///
/// Every behaviour comes from the library: the runner only interprets the vocabulary
/// (what a scripted callback does when called) and records what it sees.
extension ConformanceTests {
    typealias JLoop = Loop<JSON, JSON, JSON>

    /// A failing update, handler or observer.
    struct ScriptedFailure: Error {}

    /// What one loop vector's run holds: the log of the current step, the loop, its
    /// executors, the registrations and the jobs held by name.
    final class LoopRun {
        var log: [JSON] = []
        weak var loop: JLoop?
        var executors: [String: ManualExecutor] = [:]
        var observers: [String: Loop<JSON, JSON, JSON>.Disposable] = [:]
        var feedbacks: [String: Loop<JSON, JSON, JSON>.Disposable] = [:]
        var jobs: [String: Job<JSON>] = [:]

        func record(_ parts: JSON...) { log.append(.array(parts)) }

        /// The update of README 11.2: logs the call, then fails, or gives a model and
        /// effects.
        func update(_ model: JSON, _ event: JSON) throws -> Next<JSON, JSON> {
            record(.string("update"), event, model)
            if event["fail"] == .bool(true) { throw ScriptedFailure() }
            let effects = event["emit"]?.array ?? []
            if let set = event["set"] { return Next(model: set, effects: effects) }
            if case .int(let add)? = event["add"], case .int(let value) = model { return Next(model: .int(value + add), effects: effects) }
            return Next(model: nil, effects: effects)
        }

        /// What a scripted callback does once called and logged (README 11.3): fail, send
        /// (through `job`, or dispatch without one), dispatch, hold or finish the job,
        /// cancel a held job, then stop, start or dispose the loop, in the order the action
        /// lists them.
        func act(_ label: String, _ action: JSON?, job: Job<JSON>?) throws {
            if action?["fail"] == .bool(true) { throw ScriptedFailure() }
            for event in action?["send"]?.array ?? [] {
                let accepted = job.map { $0.send(event) } ?? (loop?.dispatch(event) ?? false)
                if !accepted { record(.string("refused"), .string(label), event) }
            }
            for event in action?["dispatch"]?.array ?? [] where !(loop?.dispatch(event) ?? false) {
                record(.string("refused"), .string(label), event)
            }
            if let job {
                if let name = action?["hold"]?.string {
                    jobs[name] = job
                    job.onCancel { [unowned self] in record(.string("cancelled"), .string(name)) }
                } else {
                    job.finish()
                }
            }
            if let name = action?["cancel"]?.string { jobs[name]?.cancel() }
            let calls = action?["loop"].map { $0.array ?? [$0] } ?? []
            for call in calls {
                switch call.string {
                case "stop"?: loop?.stop()
                case "start"?: _ = loop?.start()
                case "dispose"?: loop?.dispose()
                default: break
                }
            }
        }

        /// The action of the first rule matching `model` (README 11.3).
        static func choose(_ rules: JSON?, _ model: JSON) -> JSON? {
            for rule in rules?.array ?? [] {
                guard let pair = rule.array, pair.count == 2 else { continue }
                if pair[0] == .null || pair[0] == model { return pair[1] }
            }
            return nil
        }

        func trace(_ trace: LoopTrace<JSON, JSON, JSON>) {
            let t = JSON.string("trace")
            switch trace {
            case .started(let first): record(t, "started", first.model, .array(first.effects))
            case let .stepped(event, model, next): record(t, "stepped", event, model, next.model ?? .null, .array(next.effects))
            case let .failed(event, model, _): record(t, "failed", event, model)
            case let .dropped(event, reason): record(t, "dropped", event, .string(Self.reasonName(reason)))
            case .effectFailed(let effect, _): record(t, "effectFailed", effect)
            case .observerFailed: record(t, "observerFailed")
            case .sourceFailed: record(t, "sourceFailed")
            case .feedbackFailed: record(t, "feedbackFailed")
            case .stopped(let model): record(t, "stopped", model)
            case .disposed(let model): record(t, "disposed", model)
            }
        }

        static func reasonName(_ reason: LoopDropReason) -> String {
            switch reason {
            case .cancelledWork: return "cancelledWork"
            case .coalesced: return "coalesced"
            case .stopped: return "stopped"
            case .disposed: return "disposed"
            }
        }

        func executor(_ name: JSON?) throws -> ManualExecutor? {
            guard let name, name != .null else { return nil }
            guard let executor = name.string.flatMap({ executors[$0] }) else {
                throw Unsupported(description: "unknown executor \(name)")
            }
            return executor
        }
    }

    static let loopVectorKeys: Set<String> = [
        "format", "name", "kind", "description", "model", "startEffects", "executor", "executors", "coalesce",
        "journal", "handlers", "feedbacks", "steps", "restart",
    ]

    /// The work feedback of a `feedback` step or of a `feedbacks` entry (README 11.3):
    /// logs its work's model, then takes the first matching rule's action with its job.
    static func scriptedFeedback(_ label: String, _ spec: JSON, _ run: LoopRun) throws -> Feedback<JSON, JSON> {
        let rules = spec["rules"]
        let overlap: Overlap
        switch spec["overlap"]?.string {
        case "cancelPrevious"?: overlap = .cancelPrevious
        case "keepPrevious"?: overlap = .keepPrevious
        case "concurrent"?: overlap = .concurrent
        default: throw Unsupported(description: "overlap \(spec["overlap"] ?? .null)")
        }
        return Feedback<JSON, JSON>.work(on: try run.executor(spec["executor"]), overlap: overlap) { [unowned run] model, job in
            run.record("feedback", .string(label), model)
            try? run.act(label, LoopRun.choose(rules, model), job: job)
        }
    }

    /// Runs one loop vector; the first mismatch, or nil.
    static func runLoop(_ vector: JSON) throws -> String? {
        try expectKeys(vector, loopVectorKeys, "loop vector")
        let run = LoopRun()
        for name in vector["executors"]?.array ?? [] {
            guard let name = name.string else { throw Unsupported(description: "executor name \(name)") }
            run.executors[name] = ManualExecutor()
        }
        let handlers: [EffectHandler<JSON, JSON>] = try (vector["handlers"]?.array ?? []).map { handler in
            try expectKeys(handler, ["label", "executor"], "handler")
            guard let label = handler["label"]?.string else { throw Unsupported(description: "handler label") }
            return EffectHandler(on: try run.executor(handler["executor"])) { [unowned run] effect, job in
                run.record("handle", .string(label), effect)
                try run.act(label, effect["do"]?[label], job: job)
            }
        }
        // Feedbacks given at creation: in the loop's initializer, not added after it.
        let feedbacks: [Feedback<JSON, JSON>] = try (vector["feedbacks"]?.array ?? []).map { spec in
            try expectKeys(spec, ["label", "overlap", "executor", "rules"], "feedback")
            guard let label = spec["label"]?.string else { throw Unsupported(description: "feedback label") }
            return try scriptedFeedback(label, spec, run)
        }
        let update = Update<JSON, JSON, JSON> { [unowned run] model, event in try run.update(model, event) }
        let journal = vector["journal"] == .bool(true) ? Journal<JSON, JSON>() : nil
        let coalesce = vector["coalesce"] == .bool(true)
        let loop = JLoop(
            model: vector["model"] ?? .null,
            startEffects: vector["startEffects"]?.array ?? [],
            update: update,
            handlers: handlers,
            feedbacks: feedbacks,
            executor: try run.executor(vector["executor"]) ?? CallerExecutor(),
            coalescing: coalesce ? { event in event["key"]?.string.map { AnyHashable($0) } } : nil,
            journal: journal,
            restart: try scriptedRestart(vector["restart"], run),
            inspector: { [unowned run] trace in run.trace(trace) },
            autostart: false
        )
        run.loop = loop
        defer {
            // Nothing of the vector outlives it: the loop ends, and its executors' work runs
            // (none of it calls back once the loop is disposed).
            loop.dispose()
            for executor in run.executors.values { executor.runAll() }
            run.jobs.removeAll()
        }
        for (index, step) in (vector["steps"]?.array ?? []).enumerated() {
            run.log = []
            let (result, extra) = try runLoopStep(step, loop, run, journal, update)
            if let mismatch = compareLoopStep(index, step, run.log, result, loop, extra) { return mismatch }
        }
        return nil
    }

    /// Does one step; its result (README 11.4) and, for a replay, the journal and models.
    static func runLoopStep(
        _ step: JSON, _ loop: JLoop, _ run: LoopRun, _ journal: Journal<JSON, JSON>?, _ update: Update<JSON, JSON, JSON>
    ) throws -> (JSON, [String: JSON]) {
        guard case .object(let keys) = step else { throw Unsupported(description: "a step is not an object") }
        let kinds = ["dispatch", "observe", "unobserve", "feedback", "remove", "send", "cancel", "finish", "run",
                     "runAll", "start", "stop", "dispose", "replay"].filter { keys[$0] != nil }
        guard kinds.count == 1, let kind = kinds.first else { throw Unsupported(description: "step \(step)") }
        try expectKeys(step, [kind, "expect", "comment", "event", "rules", "overlap", "executor"], "step")
        let label = step[kind]?.string ?? ""
        switch kind {
        case "dispatch":
            do {
                try loop.tryDispatch(step["event"] ?? .null)
                return ("ok", [:])
            } catch let refusal as LoopError {
                return (refusal == .disposed ? "disposed" : "stopped", [:])
            }
        case "observe":
            let rules = step["rules"]
            run.observers[label] = loop.subscribe { [unowned run] model in
                run.record("observe", .string(label), model)
                try run.act(label, LoopRun.choose(rules, model), job: nil)
            }
        case "unobserve":
            guard let observer = run.observers[label] else { throw Unsupported(description: "no observer \(label)") }
            observer.dispose()
        case "feedback":
            run.feedbacks[label] = loop.add(try scriptedFeedback(label, step, run))
        case "remove":
            guard let feedback = run.feedbacks[label] else { throw Unsupported(description: "no feedback \(label)") }
            feedback.dispose()
        case "send", "cancel", "finish":
            guard let job = run.jobs[label] else { throw Unsupported(description: "no job held as \(label)") }
            if kind == "send" { return (.bool(job.send(step["event"] ?? .null)), [:]) }
            if kind == "cancel" { job.cancel() } else { job.finish() }
        case "run":
            return (.bool(try run.executor(step["run"])!.runNext()), [:])
        case "runAll":
            return (.int(try run.executor(step["runAll"])!.runAll()), [:])
        case "start":
            return (.bool(loop.start()), [:])
        case "stop":
            loop.stop()
        case "dispose":
            loop.dispose()
        case "replay":
            guard let journal else { throw Unsupported(description: "replay without a journal") }
            let entries: [JSON] = journal.entries.map { entry in
                switch entry {
                case .start(let model): return ["start", model]
                case .event(let event): return ["event", event]
                }
            }
            return (.null, ["journal": .array(entries), "models": .array(journal.replay(update))])
        default:
            throw Unsupported(description: "step kind \(kind)")
        }
        return (.null, [:])
    }

    /// Compares step `index` with its `expect`; a description of the first mismatch, or nil.
    static func compareLoopStep(
        _ index: Int, _ step: JSON, _ log: [JSON], _ result: JSON, _ loop: JLoop, _ extra: [String: JSON]
    ) -> String? {
        guard let expect = step["expect"] else { return "step \(index): no expect" }
        var actual: [String: JSON] = ["log": .array(log), "result": result, "model": loop.model, "running": .bool(loop.isRunning)]
        actual.merge(extra) { a, _ in a }
        guard case .object(let expected) = expect, Set(expected.keys) == Set(actual.keys) else {
            return "step \(index): expect has keys \(expect), the runner checks \(actual.keys.sorted())"
        }
        for key in actual.keys.sorted() where actual[key] != expected[key] {
            return "step \(index): \(key)\n  got      \(actual[key]!)\n  expected \(expected[key]!)"
        }
        return nil
    }
}

extension ConformanceTests.JSON: ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(arrayLiteral elements: ConformanceTests.JSON...) { self = .array(elements) }
}
