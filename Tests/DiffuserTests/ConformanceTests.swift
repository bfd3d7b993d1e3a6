import Foundation
import XCTest
import Diffuser

/// Runs every vector of `conformance/` (see conformance/README.md) against the Swift API.
/// Fails on any mismatch, unknown operation or vector that could not be run.
final class ConformanceTests: XCTestCase {
    // MARK: JSON values with the vectors' equality

    enum JSON: Equatable, Decodable, CustomStringConvertible {
        case null, bool(Bool), int(Int), string(String), array([JSON]), object([String: JSON])

        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .bool(b) }
            else if let i = try? c.decode(Int.self) { self = .int(i) }
            else if let s = try? c.decode(String.self) { self = .string(s) }
            else if let a = try? c.decode([JSON].self) { self = .array(a) }
            else { self = .object(try c.decode([String: JSON].self)) }
        }

        subscript(key: String) -> JSON? {
            if case .object(let o) = self { return o[key] }
            return nil
        }

        var string: String? { if case .string(let s) = self { return s }; return nil }
        var array: [JSON]? { if case .array(let a) = self { return a }; return nil }

        var description: String {
            switch self {
            case .null: return "null"
            case .bool(let b): return "\(b)"
            case .int(let i): return "\(i)"
            case .string(let s): return "\"\(s)\""
            case .array(let a): return "[\(a.map(\.description).joined(separator: ","))]"
            case .object(let o): return "{\(o.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ","))}"
            }
        }
    }

    struct Unsupported: Error, CustomStringConvertible { let description: String }
    struct EffectFailure: Error { let label: String }

    /// What a step observes: its log and the labels that must fail.
    final class StepState {
        var log: [(String, JSON)] = []
        var failing: Set<String> = []

        func effect(_ label: String) -> (JSON) throws -> Void {
            { [unowned self] value in
                if failing.contains(label) { throw EffectFailure(label: label) }
                log.append((label, value))
            }
        }
    }

    // MARK: Semantics helpers of the format (section 3.2, 4.1)

    static func not(_ x: JSON) -> JSON { x == .null || x == .bool(false) ? .bool(true) : .bool(false) }

    static func select(_ selector: JSON, _ value: JSON) throws -> (JSON) -> JSON {
        if selector["identity"] != nil { return { $0 } }
        if let name = selector["field"]?.string { return { $0[name] ?? .null } }
        if let path = selector["path"]?.array {
            return { value in
                var x = value
                for step in path {
                    switch (step, x) {
                    case (.string(let k), .object(let o)): x = o[k] ?? .null
                    case (.int(let i), .array(let a)) where i >= 0 && i < a.count: x = a[i]
                    default: return .null
                    }
                }
                return x
            }
        }
        throw Unsupported(description: "unknown selector \(selector)")
    }

    static func predicate(_ name: String) throws -> DidChange<JSON> {
        switch name {
        case "changed": return { $0 != $1 }
        case "always": return { _, _ in true }
        case "never": return { _, _ in false }
        case "increased": return { if case .int(let a) = $0, case .int(let b) = $1 { return b > a }; return false }
        case "decreased": return { if case .int(let a) = $0, case .int(let b) = $1 { return b < a }; return false }
        default: throw Unsupported(description: "unknown predicate \(name)")
        }
    }

    static func transform(_ name: String) throws -> (JSON) -> JSON {
        if name.hasPrefix("field:") { let k = String(name.dropFirst(6)); return { $0[k] ?? .null } }
        if name.hasPrefix("wrap:") { let k = String(name.dropFirst(5)); return { .object([k: $0]) } }
        switch name {
        case "identity": return { $0 }
        case "double": return { if case .int(let i) = $0 { return .int(2 * i) }; return .null }
        case "negate": return { if case .int(let i) = $0 { return .int(-i) }; return .null }
        case "not": return not
        case "length":
            return {
                switch $0 {
                case .string(let s): return .int(s.count)
                case .array(let a): return .int(a.count)
                case .object(let o): return .int(o.count)
                default: return .null
                }
            }
        default: throw Unsupported(description: "unknown transform \(name)")
        }
    }

    // MARK: Building

    final class DiffuserBuilder {
        let named: [String: JSON]
        let state: StepState
        var built: [String: Diffuser<JSON>] = [:]

        init(named: [String: JSON], state: StepState) { self.named = named; self.state = state }

        func build(_ node: JSON) throws -> Diffuser<JSON> {
            guard let op = node["op"]?.string else { throw Unsupported(description: "node without op: \(node)") }
            func label() throws -> String {
                guard let l = node["effect"]?.string else { throw Unsupported(description: "\(op) without effect") }
                return l
            }
            func children() throws -> [Diffuser<JSON>] { try (node["children"]?.array ?? []).map(build) }
            func child() throws -> Diffuser<JSON> {
                guard let c = node["child"] else { throw Unsupported(description: "\(op) without child") }
                return try build(c)
            }
            switch op {
            case "ref":
                guard let name = node["ref"]?.string, let target = named[name] else { throw Unsupported(description: "bad ref \(node)") }
                if let done = built[name] { return done }
                let made = try build(target)
                built[name] = made
                return made
            case "intoAlways":
                if node["children"] != nil { return .intoAlways(try children()) }
                return .intoAlways(throwing: state.effect(try label()))
            case "into":
                return .into(throwing: state.effect(try label()))
            case "intoOnce":
                return .intoOnce(throwing: state.effect(try label()))
            case "intoAll":
                return .intoAll(try children())
            case "intoWhen":
                let p = try ConformanceTests.predicate(node["predicate"]?.string ?? "")
                if node["child"] != nil { return .intoWhen(p, try child()) }
                return .intoWhen(p, throwing: state.effect(try label()))
            case "map":
                return .map(try ConformanceTests.select(node["selector"] ?? .null, .null), try child())
            case "invert":
                let inner = try child()
                let toBool: (JSON) -> Bool = { ConformanceTests.not($0) == .bool(false) }
                return .map(toBool, Diffuser<Bool>.invert(.map({ JSON.bool($0) }, inner)))
            default:
                throw Unsupported(description: "unknown diffuser op \(op)")
            }
        }
    }

    /// A scripted source: logs connects and every dispose call, emits in connection order.
    final class ScriptedSource {
        let name: String
        let state: StepState
        var connections: [(id: Int, sink: (JSON) throws -> Void)] = []
        var nextID = 0

        init(_ name: String, _ state: StepState) { self.name = name; self.state = state }

        var fuser: Fuser<JSON> {
            Fuser(tryConnector: { [unowned self] sink in
                nextID += 1
                let id = nextID
                connections.append((id, sink))
                state.log.append(("connect", .string(name)))
                return Logged { [unowned self] in
                    connections.removeAll { $0.id == id }
                    state.log.append(("dispose", .string(name)))
                }
            })
        }

        /// Logs every call, deliberately not idempotent (format 4.2).
        final class Logged: Fuser<JSON>.Disposable {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
            func dispose() { body() }
        }
    }

    final class FuserBuilder {
        let named: [String: JSON]
        let sources: [String: ScriptedSource]
        var built: [String: Fuser<JSON>] = [:]

        init(named: [String: JSON], sources: [String: ScriptedSource]) { self.named = named; self.sources = sources }

        func build(_ node: JSON) throws -> Fuser<JSON> {
            guard let op = node["op"]?.string else { throw Unsupported(description: "node without op: \(node)") }
            func child() throws -> Fuser<JSON> {
                guard let c = node["child"] else { throw Unsupported(description: "\(op) without child") }
                return try build(c)
            }
            switch op {
            case "ref":
                guard let name = node["ref"]?.string, let target = named[name] else { throw Unsupported(description: "bad ref \(node)") }
                if let done = built[name] { return done }
                let made = try build(target)
                built[name] = made
                return made
            case "from":
                guard let name = node["source"]?.string, let source = sources[name] else { throw Unsupported(description: "unknown source in \(node)") }
                return source.fuser
            case "fromAll":
                return .fromAll(try (node["children"]?.array ?? []).map(build))
            case "extract":
                return .extract(try ConformanceTests.transform(node["transform"]?.string ?? ""), try child())
            case "extractConstant":
                return .extractConstant(node["constant"] ?? .null, try child())
            case "extractUnlessNull":
                let t = try ConformanceTests.transform(node["transform"]?.string ?? "")
                return .extractUnlessNil({ (x: JSON) -> JSON? in let y = t(x); return y == .null ? nil : y }, try child())
            default:
                throw Unsupported(description: "unknown fuser op \(op)")
            }
        }
    }

    // MARK: Running

    /// Runs one vector; returns a description of the first mismatch, or nil.
    func runVector(_ vector: JSON) throws -> String? {
        let state = StepState()
        var named: [String: JSON] = [:]
        if case .object(let o)? = vector["nodes"] { named = o }
        guard let root = vector["root"], let steps = vector["steps"]?.array else { throw Unsupported(description: "vector without root or steps") }

        func check(_ index: Int, _ step: JSON, _ error: String?) -> String? {
            guard let expect = step["expect"], let log = expect["log"]?.array else { return "step \(index): no expect.log" }
            let expected: [(String, JSON)] = log.compactMap { entry in
                guard let pair = entry.array, pair.count == 2, let l = pair[0].string else { return nil }
                return (l, pair[1])
            }
            let actualText = state.log.map { "[\($0.0), \($0.1)]" }.joined(separator: " ")
            let expectedText = expected.map { "[\($0.0), \($0.1)]" }.joined(separator: " ")
            if actualText != expectedText || state.log.count != expected.count
                || zip(state.log, expected).contains(where: { $0.0 != $1.0 || $0.1 != $1.1 }) {
                return "step \(index): log\n  got      \(actualText)\n  expected \(expectedText)"
            }
            let expectedError = expect["error"]?.string
            if expectedError != error { return "step \(index): error \(error ?? "null"), expected \(expectedError ?? "null")" }
            return nil
        }

        switch vector["kind"]?.string {
        case "diffuser":
            let diffuser = try DiffuserBuilder(named: named, state: state).build(root)
            for (index, step) in steps.enumerated() {
                guard let value = step["run"] else { throw Unsupported(description: "diffuser step without run") }
                state.log = []
                state.failing = Set((step["fail"]?.array ?? []).compactMap(\.string))
                var error: String?
                do { try diffuser.tryRun(value) } catch let failure as EffectFailure { error = failure.label }
                if let mismatch = check(index, step, error) { return mismatch }
            }
        case "fuser":
            var sources: [String: ScriptedSource] = [:]
            for name in (vector["sources"]?.array ?? []).compactMap(\.string) { sources[name] = ScriptedSource(name, state) }
            let fuser = try FuserBuilder(named: named, sources: sources).build(root)
            var connections: [String: Fuser<JSON>.Disposable] = [:]
            for (index, step) in steps.enumerated() {
                state.log = []
                state.failing = Set((step["fail"]?.array ?? []).compactMap(\.string))
                var error: String?
                if let label = step["connect"]?.string {
                    connections[label] = try fuser.tryConnect(state.effect(label))
                } else if let label = step["dispose"]?.string {
                    guard let connection = connections[label] else { throw Unsupported(description: "dispose of unknown \(label)") }
                    connection.dispose()
                } else if let name = step["emit"]?.string, let source = sources[name] {
                    let value = step["value"] ?? .null
                    for connection in source.connections {
                        do { try connection.sink(value) } catch let failure as EffectFailure { error = failure.label; break }
                    }
                } else {
                    throw Unsupported(description: "unknown fuser step \(step)")
                }
                if let mismatch = check(index, step, error) { return mismatch }
            }
        default:
            throw Unsupported(description: "unknown kind \(vector["kind"] ?? .null)")
        }
        return nil
    }

    func testEveryConformanceVector() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("conformance")
        var files: [URL] = []
        for sub in ["hand", "generated"] {
            let dir = folder.appendingPathComponent(sub)
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
            files += names.map { dir.appendingPathComponent($0) }
        }
        XCTAssertGreaterThanOrEqual(files.count, 600, "the corpus is incomplete")
        var passed = 0, failed = 0
        for file in files {
            do {
                let vector = try JSONDecoder().decode(JSON.self, from: Data(contentsOf: file))
                if let mismatch = try runVector(vector) {
                    failed += 1
                    XCTFail("\(file.lastPathComponent): \(mismatch)")
                } else {
                    passed += 1
                }
            } catch {
                failed += 1
                XCTFail("\(file.lastPathComponent): could not run: \(error)")
            }
        }
        print("Conformance (Swift): \(files.count) vectors executed, \(passed) passed, \(failed) failed")
        XCTAssertEqual(passed, files.count)
    }
}
