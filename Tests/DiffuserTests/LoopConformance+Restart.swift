import Diffuser

/// The restart of a loop vector (conformance/README.md, 11.1): the start of every run
/// after the first, made from the kept model by the first matching rule's result.
extension ConformanceTests {
    /// The loop's `restart:`, or nil when the vector has none (`restart` absent or null).
    /// Each call logs `["restart", kept]`, then makes the result's `loop` call (a stop or
    /// dispose from inside the restart, after which nothing of the start happens), and
    /// returns the result's `set` (else the kept model) with its `emit` as start effects.
    static func scriptedRestart(_ rules: JSON?, _ run: LoopRun) throws -> ((JSON) -> First<JSON, JSON>)? {
        func isIntegerOrNull(_ value: JSON) -> Bool {
            switch value {
            case .null, .int: return true
            default: return false
            }
        }
        guard let rules, rules != .null else { return nil }
        guard let list = rules.array else { throw Unsupported(description: "restart \(rules)") }
        for rule in list {
            guard let pair = rule.array, pair.count == 2 else { throw Unsupported(description: "restart rule \(rule)") }
            guard isIntegerOrNull(pair[0]) else { throw Unsupported(description: "restart match \(pair[0])") }
            try expectKeys(pair[1], ["set", "emit", "loop"], "restart result")
            if let set = pair[1]["set"], set == .null || !isIntegerOrNull(set) {
                throw Unsupported(description: "restart set \(set)")
            }
            if let emit = pair[1]["emit"], emit.array == nil { throw Unsupported(description: "restart emit \(emit)") }
            if let call = pair[1]["loop"], call != "stop", call != "dispose" {
                throw Unsupported(description: "restart loop call \(call)")
            }
        }
        return { [unowned run] kept in
            run.record("restart", kept)
            let result = LoopRun.choose(rules, kept)
            switch result?["loop"]?.string {
            case "stop"?: run.loop?.stop()
            case "dispose"?: run.loop?.dispose()
            default: break
            }
            return First(result?["set"] ?? kept, effects: result?["emit"]?.array ?? [])
        }
    }
}
