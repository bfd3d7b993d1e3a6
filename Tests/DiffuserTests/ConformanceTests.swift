import Foundation
import XCTest
import Diffuser

/// Runs every vector of `conformance/` (see conformance/README.md) against the Swift API,
/// in every form the API offers for building a diffuser:
///
/// - closures: `into`, `intoAll`, `intoOnce`, `intoWhen` and `map` with closures (the
///   `throwing:` variants where a call may fail, the plain ones elsewhere), equality by
///   the value type's `==`;
/// - key paths: the same with `throwing:` effects, except that every `map` (and
///   `invert`'s conversions) is a key path, a labelled map's key path going through a
///   subscript that logs, and `intoAll` is `Diffuser(children)`;
/// - calling: `intoAlways(calling:)`, `into(comparing:calling:)`, `intoAll(comparing:_:)`,
///   `intoWhen(calling:…)`, `intoOnce(calling:)` and `map(calling:)` with values of the
///   callback protocols; the equality is an `EqualityFunction` that can fail.
///
/// List vectors (README section 10) run in the list forms (`ListForm`): every way the
/// Swift API computes a list diff, and `Diffuser.intoList`; each form compares the diff,
/// both batches and the script with the vector's `expect`.
///
/// A vector's equality (`json`, `near`, `nan`) is the `==` of the value type the vector
/// is run with: `StrictValue`, `NearValue` or `NaNValue`. A pair (vector, form) that the
/// form cannot express is counted as not applicable, with its reason: Swift's `==`
/// cannot throw (a vector in which an equality fails), a key path cannot throw (a vector
/// in which a labelled transform fails), a fuser is built in one form only. Any other
/// pair must run and pass; the suite fails on any mismatch, unknown operation, vector that
/// could not be run, or pair that was neither run nor counted.
///
/// One file because one test walks the corpus once and must account for every
/// (vector, form) pair; the JSON values, the `Unsupported` reporting and the failure
/// accounting it needs are shared by the diffuser, fuser and list vectors, so they stay
/// beside it. Loop vectors, which share only the walk, run in LoopConformance.swift.
final class ConformanceTests: XCTestCase {
    // MARK: JSON values

    /// A JSON value; its `==` is the strict equality of README section 2, used to compare
    /// logs whatever a vector's equality.
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

        /// The same structure compared by `leaf` at every leaf (README 2 otherwise).
        static func deepEqual(_ a: JSON, _ b: JSON, leaf: (JSON, JSON) -> Bool) -> Bool {
            switch (a, b) {
            case (.array(let x), .array(let y)):
                return x.count == y.count && zip(x, y).allSatisfy { deepEqual($0, $1, leaf: leaf) }
            case (.object(let x), .object(let y)):
                return x.count == y.count && x.allSatisfy { key, value in y[key].map { deepEqual(value, $0, leaf: leaf) } ?? false }
            default:
                return leaf(a, b)
            }
        }

        /// "near" (spec 1): integers within 1 of each other are equal, at any depth.
        static func near(_ a: JSON, _ b: JSON) -> Bool {
            deepEqual(a, b) { a, b in
                if case .int(let x) = a, case .int(let y) = b { return abs(x - y) <= 1 }
                return a == b
            }
        }

        /// "nan" (spec 1): the string "NaN" is equal to nothing, itself included, at any depth.
        static func nan(_ a: JSON, _ b: JSON) -> Bool {
            deepEqual(a, b) { a, b in a != .string("NaN") && a == b }
        }
    }

    // MARK: Value types: one per equality

    /// The value a diffuser vector is run with: a JSON value whose `==` is the vector's
    /// equality (section 1 of the exactness extension).
    protocol VectorValue: Equatable {
        var json: JSON { get }
        init(json: JSON)
        /// `invert`'s conversion back from `Bool`, as a key path.
        static var fromBool: KeyPath<Bool, Self> { get }
    }

    struct StrictValue: VectorValue {
        let json: JSON
        static func == (a: StrictValue, b: StrictValue) -> Bool { a.json == b.json }
        static var fromBool: KeyPath<Bool, StrictValue> { \.strictValue }
    }

    struct NearValue: VectorValue {
        let json: JSON
        static func == (a: NearValue, b: NearValue) -> Bool { JSON.near(a.json, b.json) }
        static var fromBool: KeyPath<Bool, NearValue> { \.nearValue }
    }

    struct NaNValue: VectorValue {
        let json: JSON
        static func == (a: NaNValue, b: NaNValue) -> Bool { JSON.nan(a.json, b.json) }
        static var fromBool: KeyPath<Bool, NaNValue> { \.nanValue }
    }

    // MARK: Selectors, predicates, transforms (README 3.2, 4.1)

    enum PathStep: Hashable {
        case key(String), index(Int)
    }

    /// A selector of a `map`; `Hashable`, so that it can be a key path's subscript argument.
    enum Selector: Hashable {
        case identity, field(String), path([PathStep])

        init(_ json: JSON) throws {
            if json["identity"] != nil { self = .identity; return }
            if let name = json["field"]?.string { self = .field(name); return }
            if let path = json["path"]?.array {
                self = .path(try path.map { step in
                    switch step {
                    case .string(let k): return .key(k)
                    case .int(let i): return .index(i)
                    default: throw Unsupported(description: "bad path step \(step)")
                    }
                })
                return
            }
            throw Unsupported(description: "unknown selector \(json)")
        }

        func select(_ value: JSON) -> JSON {
            switch self {
            case .identity: return value
            case .field(let name): return value[name] ?? .null
            case .path(let steps):
                var x = value
                for step in steps {
                    switch (step, x) {
                    case (.key(let k), .object(let o)): x = o[k] ?? .null
                    case (.index(let i), .array(let a)) where i >= 0 && i < a.count: x = a[i]
                    default: return .null
                    }
                }
                return x
            }
        }
    }

    static func not(_ x: JSON) -> JSON { x == .null || x == .bool(false) ? .bool(true) : .bool(false) }

    /// Predicate `name` over a value type: `changed` is the value type's `!=`.
    static func predicate<V: VectorValue>(_ name: String, _: V.Type) throws -> (V, V) -> Bool {
        switch name {
        case "changed": return { $0 != $1 }
        case "always": return { _, _ in true }
        case "never": return { _, _ in false }
        case "increased": return { if case .int(let a) = $0.json, case .int(let b) = $1.json { return b > a }; return false }
        case "decreased": return { if case .int(let a) = $0.json, case .int(let b) = $1.json { return b < a }; return false }
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

    // MARK: A step: its log, its failing labels, its user calls

    struct Unsupported: Error, CustomStringConvertible { let description: String }

    /// A user call failed: an effect, transform or predicate listed in the step's
    /// `fail`, or an equality comparing "boom" (label "equality").
    struct CallFailure: Error { let label: String }

    /// What a step observes: its log and the labels that must fail. `Hashable` by
    /// identity, so that a key path's subscript can take it.
    final class StepState: Hashable {
        var log: [(String, JSON)] = []
        /// The step's `fail` list: labels whose every call fails, and `label@k` for a
        /// label's k-th call in the step.
        var failing: Set<String> = [] {
            didSet { calls = [:] }
        }
        /// How many times each label was called in the step.
        var calls: [String: Int] = [:]
        /// Labels of calls that had to fail but could not throw (a key path).
        var unthrowable: [String] = []

        /// Counts a call of `label`: whether it fails.
        func fails(_ label: String) -> Bool {
            let count = calls[label, default: 0] + 1
            calls[label] = count
            return failing.contains(label) || failing.contains("\(label)@\(count)")
        }

        static func == (a: StepState, b: StepState) -> Bool { a === b }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        /// A labelled user call with the value it logs: fails if the label is listed.
        func call(_ label: String, _ logged: JSON) throws {
            if fails(label) { throw CallFailure(label: label) }
            log.append((label, logged))
        }

        /// A labelled call that cannot throw (a key path's subscript).
        func callWithoutThrowing(_ label: String, _ logged: JSON) {
            if fails(label) {
                unthrowable.append(label)
                return
            }
            log.append((label, logged))
        }

        func effect(_ label: String) -> (JSON) throws -> Void {
            { [unowned self] value in try call(label, value) }
        }

        /// An equality gate's comparison `eq(old, new)` by the relation `equal`: fails
        /// when `new` is the string "boom".
        func compare(_ old: JSON, _ new: JSON, _ equal: () -> Bool) throws -> Bool {
            if new == .string("boom") { throw CallFailure(label: "equality") }
            return equal()
        }
    }

    // MARK: Forms

    enum Form: String, CaseIterable {
        case closures, keyPaths = "key paths", calling = "calling:"
        /// Every map a closure selection followed by a stored-property key path, which the
        /// core reads in place (`FieldNode`): the vector's nodes get their values by address.
        case storedKeyPaths = "stored key paths"
    }

    /// Why a pair (vector, form) is not run.
    enum NotApplicable: String, CaseIterable {
        case equalityFails = "an equality fails in a step (error \"equality\"), and Equatable's == cannot throw"
        case transformFails = "a labelled transform fails in a step, and a key path cannot throw"
        case fuser = "a fuser vector: the Fuser API builds a fuser in one form (closures)"
    }

    /// Builds a diffuser vector's tree over the value type `V` in one form. Named nodes
    /// are built once (one node, one cache per name).
    final class DiffuserBuilder<V: VectorValue> {
        let named: [String: JSON]
        let state: StepState
        let form: Form
        /// Every label some step lists in `fail`: the closure form gives the other
        /// effects as non-throwing closures.
        let mayFail: Set<String>
        var built: [String: Diffuser<V>] = [:]

        init(named: [String: JSON], state: StepState, form: Form, mayFail: Set<String>) {
            self.named = named
            self.state = state
            self.form = form
            self.mayFail = mayFail
        }

        func build(_ node: JSON) throws -> Diffuser<V> {
            guard let op = node["op"]?.string else { throw Unsupported(description: "node without op: \(node)") }
            let state = self.state
            func effectLabel() throws -> String {
                guard let l = node["effect"]?.string else { throw Unsupported(description: "\(op) without effect") }
                return l
            }
            func effect() throws -> (V) throws -> Void {
                let label = try effectLabel()
                return { try state.call(label, $0.json) }
            }
            /// The effect as a non-throwing closure, if it never fails and the form is closures.
            func plainEffect() throws -> ((V) -> Void)? {
                let label = try effectLabel()
                guard form == .closures, !mayFail.contains(label) else { return nil }
                return { state.callWithoutThrowing(label, $0.json) }
            }
            func callingEffect() throws -> Effect<V> { Effect(label: try effectLabel(), state: state) }
            func children() throws -> [Diffuser<V>] { try (node["children"]?.array ?? []).map(build) }
            func child() throws -> Diffuser<V> {
                guard let c = node["child"] else { throw Unsupported(description: "\(op) without child") }
                return try build(c)
            }
            try ConformanceTests.expectKeys(node, ConformanceTests.diffuserNodeKeys[op] ?? [], "\(op) node")
            let label = node["label"]?.string
            switch (op, form) {
            case ("ref", _):
                guard let name = node["ref"]?.string, let target = named[name] else { throw Unsupported(description: "bad ref \(node)") }
                if let done = built[name] { return done }
                let made = try build(target)
                built[name] = made
                return made

            case ("intoAlways", _) where node["children"] != nil:
                return .intoAlways(try children())
            case ("intoAlways", .calling):
                return .intoAlways(calling: try callingEffect())
            case ("intoAlways", _):
                if let plain = try plainEffect() { return .intoAlways(plain) }
                return .intoAlways(throwing: try effect())

            case ("into", .calling):
                return .into(comparing: Equality<V>(state: state), calling: try callingEffect())
            case ("into", _):
                if let plain = try plainEffect() { return .into(plain) }
                return .into(throwing: try effect())

            case ("intoOnce", .calling):
                return .intoOnce(calling: try callingEffect())
            case ("intoOnce", _):
                if let plain = try plainEffect() { return .intoOnce(plain) }
                return .intoOnce(throwing: try effect())

            case ("intoAll", .calling):
                return .intoAll(comparing: Equality<V>(state: state), try children())
            case ("intoAll", .keyPaths):
                return Diffuser(try children())
            case ("intoAll", _):
                return .intoAll(try children())

            case ("intoWhen", .calling):
                let change = Change<V>(decide: try ConformanceTests.predicate(node["predicate"]?.string ?? "", V.self),
                                       label: label, state: state)
                if node["child"] != nil { return .intoWhen(calling: change, try child()) }
                return .intoWhen(calling: change, effect: try callingEffect())
            case ("intoWhen", _):
                let p = try ConformanceTests.predicate(node["predicate"]?.string ?? "", V.self)
                if let label {
                    let logged: (V, V) throws -> Bool = { old, new in
                        try state.call(label, .array([old.json, new.json]))
                        return p(old, new)
                    }
                    if node["child"] != nil { return .intoWhen(throwing: logged, try child()) }
                    return .intoWhen(throwing: logged, effect: try effect())
                }
                if node["child"] != nil { return .intoWhen(p, try child()) }
                if let plain = try plainEffect() { return .intoWhen(p, plain) }
                return .intoWhen(p, throwing: try effect())

            case ("map", _):
                let selector = try Selector(node["selector"] ?? .null)
                let inner = try child()
                switch (form, label) {
                case (.closures, nil):
                    return .map({ V(json: selector.select($0.json)) }, inner)
                case (.closures, let label?):
                    return .map(throwing: {
                        try state.call(label, $0.json)
                        return V(json: selector.select($0.json))
                    }, inner)
                case (.keyPaths, nil):
                    return .map(\V.[selecting: selector], inner)
                case (.keyPaths, let label?):
                    return .map(\V.[selecting: selector, labelled: label, in: state], inner)
                case (.calling, _):
                    return .map(calling: Transform<V>(selector: selector, label: label, state: state), inner)
                case (.storedKeyPaths, _):
                    return .map(throwing: { value in
                        if let label { try state.call(label, value.json) }
                        return StoredPart(V(json: selector.select(value.json)))
                    }, .map(\StoredPart<V>.value, inner))
                }

            case ("invert", .closures), ("invert", .storedKeyPaths):
                let inner = try child()
                return .map({ $0.truthy }, Diffuser<Bool>.invert(.map({ V(json: .bool($0)) }, inner)))
            case ("invert", .keyPaths):
                let inner = try child()
                return .map(\V.truthy, Diffuser<Bool>.invert(.map(V.fromBool, inner)))
            case ("invert", .calling):
                let inner = try child()
                return .map(calling: Truthy<V>(), Diffuser<Bool>.invert(.map(calling: FromBool<V>(), inner)))

            default:
                throw Unsupported(description: "unknown diffuser op \(op)")
            }
        }
    }

    // MARK: The callback values of the calling: form

    struct Effect<V: VectorValue>: EffectFunction {
        let label: String
        let state: StepState
        func run(_ value: V) throws { try state.call(label, value.json) }
    }

    /// The vector's equality (the value type's `==`); fails on "boom".
    struct Equality<V: VectorValue>: EqualityFunction {
        let state: StepState
        func equals(_ old: V, _ new: V) throws -> Bool {
            try state.compare(old.json, new.json) { old == new }
        }
    }

    struct Change<V: VectorValue>: ChangeFunction {
        let decide: (V, V) -> Bool
        let label: String?
        let state: StepState
        func didChange(_ old: V, _ new: V) throws -> Bool {
            if let label { try state.call(label, .array([old.json, new.json])) }
            return decide(old, new)
        }
    }

    struct Transform<V: VectorValue>: TransformFunction {
        let selector: Selector
        let label: String?
        let state: StepState
        func select(_ value: V) throws -> V {
            if let label { try state.call(label, value.json) }
            return V(json: selector.select(value.json))
        }
    }

    struct Truthy<V: VectorValue>: TransformFunction {
        func select(_ value: V) -> Bool { value.truthy }
    }

    struct FromBool<V: VectorValue>: TransformFunction {
        func select(_ value: Bool) -> V { V(json: .bool(value)) }
    }

    // MARK: Fusers

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
            try ConformanceTests.expectKeys(node, ConformanceTests.fuserNodeKeys[op] ?? [], "\(op) node")
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

    /// The keys each diffuser op may have (README 3.1 and the exactness extension).
    static let diffuserNodeKeys: [String: Set<String>] = [
        "ref": ["op", "ref"],
        "intoAlways": ["op", "effect", "children"],
        "into": ["op", "effect"],
        "intoOnce": ["op", "effect"],
        "intoAll": ["op", "children"],
        "intoWhen": ["op", "predicate", "effect", "child", "label"],
        "map": ["op", "selector", "child", "label"],
        "invert": ["op", "child"],
    ]

    /// The keys each fuser op may have (README 4.1).
    static let fuserNodeKeys: [String: Set<String>] = [
        "ref": ["op", "ref"],
        "from": ["op", "source"],
        "fromAll": ["op", "children"],
        "extract": ["op", "transform", "child"],
        "extractConstant": ["op", "constant", "child"],
        "extractUnlessNull": ["op", "transform", "child"],
    ]

    /// Throws if `object` has a key this runner does not understand: a runner that does
    /// not understand something in a vector fails (README).
    static func expectKeys(_ object: JSON, _ known: Set<String>, _ what: String) throws {
        guard case .object(let o) = object else { throw Unsupported(description: "\(what) is not an object") }
        let unknown = Set(o.keys).subtracting(known)
        if !unknown.isEmpty { throw Unsupported(description: "\(what): unknown keys \(unknown.sorted())") }
    }

    /// Compares what step `index` did with its `expect`; a description of the mismatch, or nil.
    static func check(_ index: Int, _ step: JSON, _ state: StepState, _ error: String?) -> String? {
        guard let expect = step["expect"], let log = expect["log"]?.array else { return "step \(index): no expect.log" }
        let expected: [(String, JSON)] = log.compactMap { entry in
            guard let pair = entry.array, pair.count == 2, let l = pair[0].string else { return nil }
            return (l, pair[1])
        }
        if expected.count != log.count { return "step \(index): malformed expect.log" }
        if !state.unthrowable.isEmpty {
            return "step \(index): \(state.unthrowable) had to fail in a key path, which cannot throw"
        }
        let actualText = state.log.map { "[\($0.0), \($0.1)]" }.joined(separator: " ")
        let expectedText = expected.map { "[\($0.0), \($0.1)]" }.joined(separator: " ")
        if state.log.count != expected.count || zip(state.log, expected).contains(where: { $0.0 != $1.0 || $0.1 != $1.1 }) {
            return "step \(index): log\n  got      \(actualText)\n  expected \(expectedText)"
        }
        let expectedError = expect["error"]?.string
        if expectedError != error { return "step \(index): error \(error ?? "null"), expected \(expectedError ?? "null")" }
        return nil
    }

    /// Every transform and predicate label of a diffuser description.
    static func callLabels(_ node: JSON, into labels: inout Set<String>) {
        if let label = node["label"]?.string, node["op"]?.string == "map" { labels.insert(label) }
        if let child = node["child"] { callLabels(child, into: &labels) }
        for child in node["children"]?.array ?? [] { callLabels(child, into: &labels) }
    }

    /// Whether `form` can build and run the diffuser vector, or why not. Decided from the
    /// expectations: an equality fails exactly in the steps that report "equality"; a
    /// transform fails exactly in the steps that report its label.
    static func applicability(_ vector: JSON, _ form: Form) -> NotApplicable? {
        guard vector["kind"]?.string == "diffuser" else { return form == .closures ? nil : .fuser }
        let errors = Set((vector["steps"]?.array ?? []).compactMap { $0["expect"]?["error"]?.string })
        if form != .calling, errors.contains("equality") { return .equalityFails }
        if form == .keyPaths {
            var transforms: Set<String> = []
            callLabels(vector["root"] ?? .null, into: &transforms)
            if case .object(let nodes)? = vector["nodes"] { nodes.values.forEach { callLabels($0, into: &transforms) } }
            if !errors.isDisjoint(with: transforms) { return .transformFails }
        }
        return nil
    }

    /// Runs a diffuser vector over the value type `V` in `form`; the first mismatch, or nil.
    static func runDiffuser<V: VectorValue>(_ vector: JSON, _: V.Type, _ form: Form) throws -> String? {
        try expectKeys(vector, ["format", "name", "kind", "description", "nodes", "root", "steps", "equality"], "diffuser vector")
        let state = StepState()
        var named: [String: JSON] = [:]
        if case .object(let o)? = vector["nodes"] { named = o }
        guard let root = vector["root"], let steps = vector["steps"]?.array else { throw Unsupported(description: "vector without root or steps") }
        let mayFail = Set(steps.flatMap { ($0["fail"]?.array ?? []).compactMap { $0.string?.split(separator: "@").first.map(String.init) } })
        let diffuser = try DiffuserBuilder<V>(named: named, state: state, form: form, mayFail: mayFail).build(root)
        for (index, step) in steps.enumerated() {
            try expectKeys(step, ["run", "fail", "comment", "expect"], "diffuser step")
            guard let value = step["run"] else { throw Unsupported(description: "diffuser step without run") }
            state.log = []
            state.unthrowable = []
            state.failing = Set((step["fail"]?.array ?? []).compactMap(\.string))
            var error: String?
            do { try diffuser.tryRun(V(json: value)) } catch let failure as CallFailure { error = failure.label }
            if let mismatch = check(index, step, state, error) { return mismatch }
        }
        return nil
    }

    static func runFuser(_ vector: JSON) throws -> String? {
        try expectKeys(vector, ["format", "name", "kind", "description", "sources", "nodes", "root", "steps"], "fuser vector")
        let state = StepState()
        var named: [String: JSON] = [:]
        if case .object(let o)? = vector["nodes"] { named = o }
        guard let root = vector["root"], let steps = vector["steps"]?.array else { throw Unsupported(description: "vector without root or steps") }
        var sources: [String: ScriptedSource] = [:]
        for name in (vector["sources"]?.array ?? []).compactMap(\.string) { sources[name] = ScriptedSource(name, state) }
        let fuser = try FuserBuilder(named: named, sources: sources).build(root)
        var connections: [String: Fuser<JSON>.Disposable] = [:]
        for (index, step) in steps.enumerated() {
            try expectKeys(step, ["connect", "dispose", "emit", "value", "fail", "comment", "expect"], "fuser step")
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
                    do { try connection.sink(value) } catch let failure as CallFailure { error = failure.label; break }
                }
            } else {
                throw Unsupported(description: "unknown fuser step \(step)")
            }
            if let mismatch = check(index, step, state, error) { return mismatch }
        }
        return nil
    }

    /// Runs one vector in one form; the first mismatch, or nil.
    static func run(_ vector: JSON, _ form: Form) throws -> String? {
        switch vector["kind"]?.string {
        case "diffuser":
            switch vector["equality"]?.string ?? "json" {
            case "json": return try runDiffuser(vector, StrictValue.self, form)
            case "near": return try runDiffuser(vector, NearValue.self, form)
            case "nan": return try runDiffuser(vector, NaNValue.self, form)
            case let other: throw Unsupported(description: "unknown equality \(other)")
            }
        case "fuser":
            return try runFuser(vector)
        default:
            throw Unsupported(description: "unknown kind \(vector["kind"] ?? .null)")
        }
    }

    /// Every `*.json` file under `conformance/`, recursively, sorted by path.
    static func vectorFiles() throws -> [URL] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("conformance")
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
            throw Unsupported(description: "cannot list \(folder.path)")
        }
        return walk.compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    func testEveryConformanceVectorInEveryForm() throws {
        let files = try Self.vectorFiles()
        XCTAssertGreaterThanOrEqual(files.count, 600, "the corpus is incomplete")
        var executed: [Form: Int] = [:], passed: [Form: Int] = [:]
        var notApplicable: [Form: [NotApplicable: Int]] = [:]
        var unaccounted = 0
        // List vectors (README 10) run in the list forms, every one in each.
        var listVectors = 0
        var listExecuted: [ListForm: Int] = [:], listPassed: [ListForm: Int] = [:]
        // Loop vectors (README 11) run once each, on `Loop` (LoopConformance.swift).
        var loopVectors = 0, loopPassed = 0
        for file in files {
            let name = file.lastPathComponent
            let vector: JSON
            do {
                vector = try JSONDecoder().decode(JSON.self, from: Data(contentsOf: file))
            } catch {
                XCTFail("\(name): could not be read: \(error)")
                unaccounted += Form.allCases.count
                continue
            }
            if vector["kind"]?.string == "list" {
                listVectors += 1
                for form in ListForm.allCases {
                    listExecuted[form, default: 0] += 1
                    do {
                        if let mismatch = try Self.runList(vector, form) {
                            XCTFail("\(name) [\(form.rawValue)]: \(mismatch)")
                        } else {
                            listPassed[form, default: 0] += 1
                        }
                    } catch {
                        XCTFail("\(name) [\(form.rawValue)]: could not run: \(error)")
                    }
                }
                continue
            }
            if vector["kind"]?.string == "loop" {
                loopVectors += 1
                do {
                    if let mismatch = try Self.runLoop(vector) {
                        XCTFail("\(name) [loop]: \(mismatch)")
                    } else {
                        loopPassed += 1
                    }
                } catch {
                    XCTFail("\(name) [loop]: could not run: \(error)")
                }
                continue
            }
            for form in Form.allCases {
                if let reason = Self.applicability(vector, form) {
                    notApplicable[form, default: [:]][reason, default: 0] += 1
                    continue
                }
                executed[form, default: 0] += 1
                do {
                    if let mismatch = try Self.run(vector, form) {
                        XCTFail("\(name) [\(form.rawValue)]: \(mismatch)")
                    } else {
                        passed[form, default: 0] += 1
                    }
                } catch {
                    XCTFail("\(name) [\(form.rawValue)]: could not run: \(error)")
                }
            }
        }
        let listPairs = listExecuted.values.reduce(0, +)
        let pairs = executed.values.reduce(0, +) + listPairs
        let skipped = notApplicable.values.flatMap(\.values).reduce(0, +)
        print("Conformance (Swift): \(files.count) vectors, \(pairs) (vector, form) pairs executed, \(skipped) not applicable")
        for form in Form.allCases {
            let reasons = notApplicable[form] ?? [:]
            print("  \(form.rawValue) form: \(executed[form] ?? 0) executed (\(passed[form] ?? 0) passed), \(reasons.values.reduce(0, +)) not applicable")
            for reason in NotApplicable.allCases {
                if let count = reasons[reason] { print("    not applicable, \(count): \(reason.rawValue)") }
            }
        }
        print("  list vectors: \(listVectors), each in \(ListForm.allCases.count) forms: \(listPairs) executed (\(listPassed.values.reduce(0, +)) passed)")
        for form in ListForm.allCases {
            print("    list form \(form.rawValue): \(listExecuted[form] ?? 0) executed (\(listPassed[form] ?? 0) passed)")
        }
        print("  loop vectors: \(loopVectors) executed (\(loopPassed) passed)")
        XCTAssertEqual(unaccounted, 0, "vectors that could not be read")
        XCTAssertEqual(loopPassed, loopVectors, "loop vectors that did not pass")
        XCTAssertGreaterThanOrEqual(loopVectors, 150, "the loop vectors are incomplete")
        XCTAssertEqual(pairs + skipped, (files.count - listVectors - loopVectors) * Form.allCases.count
                       + listVectors * ListForm.allCases.count,
                       "a (vector, form) pair was neither executed nor counted")
        XCTAssertEqual(passed.values.reduce(0, +) + listPassed.values.reduce(0, +), pairs, "pairs that did not pass")
        XCTAssertGreaterThanOrEqual(listVectors, 120, "the list vectors are incomplete")
        // The vectors of format 1 without the exactness extension run in every form.
        for file in files {
            guard file.path.contains("/conformance/hand/") || file.path.contains("/conformance/generated/"),
                  !file.lastPathComponent.hasPrefix("diffuser-exact-"),
                  let vector = try? JSONDecoder().decode(JSON.self, from: Data(contentsOf: file)),
                  vector["kind"]?.string == "diffuser" else { continue }
            for form in Form.allCases {
                XCTAssertNil(Self.applicability(vector, form), "\(file.lastPathComponent) must run \(form.rawValue)")
            }
        }
    }
}

// MARK: Key paths of the key-path form

extension ConformanceTests.VectorValue {
    /// `select(selector, self)`: an unlabelled map as a key path.
    subscript(selecting selector: ConformanceTests.Selector) -> Self {
        Self(json: selector.select(json))
    }

    /// A labelled map as a key path: logs `[label, self]`, then selects.
    subscript(selecting selector: ConformanceTests.Selector, labelled label: String, in state: ConformanceTests.StepState) -> Self {
        state.callWithoutThrowing(label, json)
        return Self(json: selector.select(json))
    }

    /// `!not(self)`: the value as a `Bool`, for `invert`.
    var truthy: Bool { ConformanceTests.not(json) == .bool(false) }
}

extension Bool {
    var strictValue: ConformanceTests.StrictValue { .init(json: .bool(self)) }
    var nearValue: ConformanceTests.NearValue { .init(json: .bool(self)) }
    var nanValue: ConformanceTests.NaNValue { .init(json: .bool(self)) }
}

// MARK: List vectors (README section 10)

extension ConformanceTests {
    /// The forms a list vector runs in: every way the Swift API computes a list diff. Each
    /// form computes the diff, both batches and the script, and compares all of them with
    /// the vector's `expect`.
    enum ListForm: String, CaseIterable {
        /// `ListDiff(from:to:key:sameContent:)`: keys as a `Hashable` enum, contents by `==`.
        case arrays = "ListDiff(from:to:key:sameContent:)"
        /// `ListDiff(from:to:)` of `Identifiable & Equatable` items.
        case identifiable = "ListDiff(from:to:) of Identifiable items"
        /// `ListDiff(oldCount:newCount:oldKey:newKey:sameContent:)`: each distinct key as its
        /// own `Int`, as a binding passes them.
        case indices = "ListDiff(oldCount:newCount:oldKey:newKey:sameContent:)"
        /// `Diffuser.intoList`: a run with the old list, then one with the new list; the
        /// second hands the sink the vector's diff (or does not call it for an empty diff).
        case intoList = "Diffuser.intoList, two runs"
    }

    /// A list key: an integer or a string, never equal to each other (1 and "1" differ).
    enum ListKey: Hashable, CustomStringConvertible {
        case int(Int), string(String)

        var description: String {
            switch self {
            case .int(let i): return "\(i)"
            case .string(let s): return "\"\(s)\""
            }
        }
    }

    /// An item of a list vector; `==` compares keys and contents (JSON equality).
    struct ListVectorItem: Identifiable, Equatable {
        let id: ListKey
        let content: JSON
    }

    static let listVectorKeys: Set<String> = ["format", "name", "kind", "description", "old", "new", "expect"]
    static let listExpectKeys: Set<String> = [
        "deletes", "inserts", "moves", "updates", "oldToNew", "newToOld", "hasDuplicates",
        "batch", "batchMoveThenReload", "script",
    ]
    static let listBatchKeys: Set<String> = ["deletes", "inserts", "moves", "reloads", "reloadsAfterMoves"]

    static func listItems(_ json: JSON?, _ what: String) throws -> [ListVectorItem] {
        guard let array = json?.array else { throw Unsupported(description: "\(what) is not an array") }
        return try array.map { item in
            guard let pair = item.array, pair.count == 2 else { throw Unsupported(description: "\(what): item \(item) is not [key, content]") }
            switch pair[0] {
            case .int(let i): return ListVectorItem(id: .int(i), content: pair[1])
            case .string(let s): return ListVectorItem(id: .string(s), content: pair[1])
            default: throw Unsupported(description: "\(what): key \(pair[0]) is neither an integer nor a string")
            }
        }
    }

    static func listInts(_ json: JSON?, _ what: String) throws -> [Int] {
        guard let array = json?.array else { throw Unsupported(description: "\(what) is not an array") }
        return try array.map {
            guard case .int(let i) = $0 else { throw Unsupported(description: "\(what): \($0) is not an integer") }
            return i
        }
    }

    static func listPairs(_ json: JSON?, _ what: String) throws -> [ListDiff.Pair] {
        guard let array = json?.array else { throw Unsupported(description: "\(what) is not an array") }
        return try array.map {
            let pair = try listInts($0, what)
            guard pair.count == 2 else { throw Unsupported(description: "\(what): \($0) is not a pair") }
            return ListDiff.Pair(old: pair[0], new: pair[1])
        }
    }

    static func listBatch(_ json: JSON?, _ what: String) throws -> ListBatch {
        guard let json else { throw Unsupported(description: "no \(what)") }
        try expectKeys(json, listBatchKeys, what)
        return ListBatch(
            deletes: try listInts(json["deletes"], "\(what).deletes"),
            inserts: try listInts(json["inserts"], "\(what).inserts"),
            moves: try listPairs(json["moves"], "\(what).moves"),
            reloads: try listInts(json["reloads"], "\(what).reloads"),
            reloadsAfterMoves: try listInts(json["reloadsAfterMoves"], "\(what).reloadsAfterMoves"))
    }

    static func listScript(_ json: JSON?) throws -> ListScript {
        guard let array = json?.array else { throw Unsupported(description: "expect.script is not an array") }
        return ListScript(steps: try array.map { step in
            guard let parts = step.array, parts.count == 3, let kind = parts[0].string else {
                throw Unsupported(description: "script step \(step) is not [kind, a, b]")
            }
            let ab = try listInts(.array(Array(parts[1...])), "script step")
            switch kind {
            case "remove": return .remove(at: ab[0], count: ab[1])
            case "move": return .move(from: ab[0], to: ab[1])
            case "insert": return .insert(at: ab[0], count: ab[1])
            case "change": return .change(at: ab[0], count: ab[1])
            default: throw Unsupported(description: "unknown script step kind \(kind)")
            }
        })
    }

    /// A list vector read: its lists and every expectation.
    struct ListVector {
        let old: [ListVectorItem]
        let new: [ListVectorItem]
        let diff: ListDiff
        let batch: ListBatch
        let batchMoveThenReload: ListBatch
        let script: ListScript
    }

    static func readListVector(_ vector: JSON) throws -> ListVector {
        try expectKeys(vector, listVectorKeys, "list vector")
        guard let expect = vector["expect"] else { throw Unsupported(description: "list vector without expect") }
        try expectKeys(expect, listExpectKeys, "list vector's expect")
        let old = try listItems(vector["old"], "old")
        let new = try listItems(vector["new"], "new")
        guard case .bool(let duplicates)? = expect["hasDuplicates"] else { throw Unsupported(description: "expect.hasDuplicates is not a boolean") }
        let diff = ListDiff(
            oldCount: old.count, newCount: new.count,
            deletes: try listInts(expect["deletes"], "expect.deletes"),
            inserts: try listInts(expect["inserts"], "expect.inserts"),
            moves: try listPairs(expect["moves"], "expect.moves"),
            updates: try listPairs(expect["updates"], "expect.updates"),
            oldToNew: try listInts(expect["oldToNew"], "expect.oldToNew"),
            newToOld: try listInts(expect["newToOld"], "expect.newToOld"),
            hasDuplicates: duplicates)
        return ListVector(
            old: old, new: new, diff: diff,
            batch: try listBatch(expect["batch"], "expect.batch"),
            batchMoveThenReload: try listBatch(expect["batchMoveThenReload"], "expect.batchMoveThenReload"),
            script: try listScript(expect["script"]))
    }

    /// Compares a computed diff, and the batches and script made from it, with the vector.
    static func compareList(_ diff: ListDiff, _ vector: ListVector) -> String? {
        if diff != vector.diff { return "diff\n  got      \(diff)\n  expected \(vector.diff)" }
        let batch = diff.batch()
        if batch != vector.batch { return "batch\n  got      \(batch)\n  expected \(vector.batch)" }
        let moveThenReload = diff.batch(movedAndChanged: .moveThenReload)
        if moveThenReload != vector.batchMoveThenReload {
            return "batch (moveThenReload)\n  got      \(moveThenReload)\n  expected \(vector.batchMoveThenReload)"
        }
        let script = diff.script()
        if script != vector.script { return "script\n  got      \(script.steps)\n  expected \(vector.script.steps)" }
        return nil
    }

    /// The sink calls of an `intoList` node.
    final class ListSinkCalls {
        var calls: [ListChanges<ListVectorItem>] = []
    }

    /// Runs a list vector in one form; the first mismatch, or nil.
    static func runList(_ json: JSON, _ form: ListForm) throws -> String? {
        let vector = try readListVector(json)
        let old = vector.old
        let new = vector.new
        switch form {
        case .arrays:
            return compareList(ListDiff(from: old, to: new, key: \.id, sameContent: { $0.content == $1.content }), vector)
        case .identifiable:
            return compareList(ListDiff(from: old, to: new), vector)
        case .indices:
            // Each distinct key its own Int, in order of first appearance.
            var numbers: [ListKey: Int] = [:]
            func number(_ key: ListKey) -> Int {
                if let n = numbers[key] { return n }
                numbers[key] = numbers.count
                return numbers.count - 1
            }
            let oldKeys = old.map { number($0.id) }
            let newKeys = new.map { number($0.id) }
            let diff = ListDiff(
                oldCount: old.count, newCount: new.count,
                oldKey: { oldKeys[$0] }, newKey: { newKeys[$0] },
                sameContent: { old[$0].content == new[$1].content })
            return compareList(diff, vector)
        case .intoList:
            let sink = ListSinkCalls()
            let diffuser = Diffuser<[ListVectorItem]>.intoList(
                key: { $0.id }, sameContent: { $0.content == $1.content }
            ) { sink.calls.append($0) }
            try diffuser.tryRun(old)
            guard sink.calls.count == 1, let first = sink.calls.first else { return "the first run called the sink \(sink.calls.count) times" }
            let fromNothing = ListDiff(from: [], to: old, key: \.id, sameContent: { $0.content == $1.content })
            guard first.isFirst, first.old.isEmpty, first.new == old, first.diff == fromNothing,
                  first.diff.inserts == Array(0..<old.count)
            else { return "first run: isFirst \(first.isFirst), old \(first.old.count) items, diff \(first.diff)" }
            try diffuser.tryRun(new)
            if vector.diff.isEmpty {
                return sink.calls.count == 1 ? nil : "an empty diff called the sink"
            }
            guard sink.calls.count == 2 else { return "the second run called the sink \(sink.calls.count - 1) times" }
            let changes = sink.calls[1]
            guard !changes.isFirst, changes.old == old, changes.new == new else {
                return "second run: isFirst \(changes.isFirst), old/new not the runs' lists"
            }
            if let mismatch = compareList(changes.diff, vector) { return mismatch }
            if changes.batch() != vector.batch || changes.batch(movedAndChanged: .moveThenReload) != vector.batchMoveThenReload
                || changes.script() != vector.script {
                return "ListChanges' batch or script differ from its diff's"
            }
            return nil
        }
    }
}
