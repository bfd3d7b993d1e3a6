import XCTest
@testable import Diffuser

/// Property tests: each law is checked on hundreds of seeded random cases.
final class LawTests: XCTestCase {
    static let cases = 300

    /// A random diffuser description, built afresh for each side of a law.
    indirect enum Spec {
        case always(String)
        case into(String)
        case once(String)
        case when(Int, Spec)           // index into `predicates`
        case all([Spec])
        case fanOut([Spec])
        case map(Int, Spec)            // index into `functions`

        func build(_ log: Recorder<String>) -> Diffuser<Int> {
            switch self {
            case .always(let l): return .intoAlways { log.append("\(l):\($0)") }
            case .into(let l): return .into { log.append("\(l):\($0)") }
            case .once(let l): return .intoOnce { log.append("\(l):\($0)") }
            case .when(let p, let child): return .intoWhen(LawTests.predicates[p], child.build(log))
            case .all(let children): return .intoAll(children.map { $0.build(log) })
            case .fanOut(let children): return .intoAlways(children.map { $0.build(log) })
            case .map(let f, let child): return .map(LawTests.functions[f], child.build(log))
            }
        }
    }

    nonisolated(unsafe) static let predicates: [DidChange<Int>] = [{ $0 != $1 }, { _, _ in true }, { _, _ in false }, { $1 > $0 }, { ($0 ^ $1) & 1 == 1 }]
    nonisolated(unsafe) static let functions: [(Int) -> Int] = [{ $0 }, { $0 / 2 }, { $0 % 3 }, { $0 * 7 }, { -$0 }, { _ in 0 }]

    /// The random source of a law check: copied so that both sides of a law are built
    /// from the same draws.
    struct Gen {
        var rng = SeededGenerator(seed: 0x0D1F_F05E)
        var labelCounter = 0

        mutating func label() -> String { labelCounter += 1; return "e\(labelCounter)" }

        mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }

        mutating func spec(depth: Int = 0) -> Spec {
            switch int(0..<(depth >= 3 ? 3 : 7)) {
            case 0: return .always(label())
            case 1: return .into(label())
            case 2: return .once(label())
            case 3: return .when(int(0..<LawTests.predicates.count), spec(depth: depth + 1))
            case 4: return .all((0..<int(0..<4)).map { _ in spec(depth: depth + 1) })
            case 5: return .fanOut((0..<int(0..<4)).map { _ in spec(depth: depth + 1) })
            default: return .map(int(0..<LawTests.functions.count), spec(depth: depth + 1))
            }
        }

        mutating func inputs() -> [Int] {
            let range = int(1..<7)
            return (0..<int(1..<16)).map { _ in int(0..<range) }
        }

        mutating func function() -> (Int) -> Int { LawTests.functions[int(0..<LawTests.functions.count)] }
    }

    /// Asserts on `cases` random cases that two diffusers fed the same inputs log the
    /// same effects. `make` is called twice with identical generators: the left result
    /// of the first call is compared with the right result of the second.
    func checkLaw(_ name: String, file: StaticString = #filePath, line: UInt = #line,
                  _ make: (inout Gen, Recorder<String>) -> (Diffuser<Int>, Diffuser<Int>)) {
        var gen = Gen()
        for n in 0..<Self.cases {
            let left = Recorder<String>(), right = Recorder<String>()
            var copy = gen
            let l = make(&gen, left).0
            let r = make(&copy, right).1
            let inputs = gen.inputs()
            inputs.forEach { l.run($0) }
            inputs.forEach { r.run($0) }
            if left.values != right.values {
                XCTFail("\(name) broken in case \(n): inputs \(inputs)\n\(left.values)\n\(right.values)", file: file, line: line)
                return
            }
        }
    }

    func testIntoWhenAlwaysTrueIsIntoAlways() {
        checkLaw("intoWhen(true, e) == intoAlways(e)") { _, log in
            (.intoWhen({ _, _ in true }, { log.append("e:\($0)") }), .intoAlways { log.append("e:\($0)") })
        }
    }

    func testIntoIsIntoWhenNotEqual() {
        checkLaw("into(e) == intoWhen(!=, intoAlways(e))") { _, log in
            (.into { log.append("e:\($0)") }, .intoWhen({ $0 != $1 }, .intoAlways { log.append("e:\($0)") }))
        }
    }

    func testIntoOnceIsIntoWhenNever() {
        checkLaw("intoOnce(e) == intoWhen(false, intoAlways(e))") { _, log in
            (.intoOnce { log.append("e:\($0)") }, .intoWhen({ _, _ in false }, .intoAlways { log.append("e:\($0)") }))
        }
    }

    func testVarargsAndArrayFormsAreEqual() {
        checkLaw("intoAll(a, b, c) == intoAll([a, b, c])") { me, log in
            let specs = (0..<3).map { _ in me.spec() }
            let v = Diffuser<Int>.intoAll(specs[0].build(log), specs[1].build(log), specs[2].build(log))
            return (v, .intoAll(specs.map { $0.build(log) }))
        }
        checkLaw("intoAlways(a, b) == intoAlways([a, b])") { me, log in
            let specs = (0..<2).map { _ in me.spec() }
            return (.intoAlways(specs[0].build(log), specs[1].build(log)), .intoAlways(specs.map { $0.build(log) }))
        }
        checkLaw("Diffuser(a, b) == Diffuser([a, b]) == intoAll") { me, log in
            let specs = (0..<2).map { _ in me.spec() }
            return (Diffuser(specs[0].build(log), specs[1].build(log)), Diffuser(specs.map { $0.build(log) }))
        }
    }

    func testMapFusion() {
        checkLaw("map(f, map(g, d)) == map(g . f, d)") { me, log in
            let spec = me.spec()
            let f = me.function()
            let g = me.function()
            return (.map(f, .map(g, spec.build(log))), .map({ g(f($0)) }, spec.build(log)))
        }
    }

    func testMapIdentity() {
        checkLaw("map(id, d) == d") { me, log in
            let spec = me.spec()
            return (.map({ $0 }, spec.build(log)), spec.build(log))
        }
    }

    func testIntoAllIsEachChildAsInto() {
        checkLaw("intoAll(children) == intoAlways(children gated by into)") { me, log in
            let specs = (0..<me.int(1..<5)).map { _ in me.spec() }
            let gated = specs.map { Diffuser<Int>.intoWhen({ $0 != $1 }, $0.build(log)) }
            return (.intoAll(specs.map { $0.build(log) }), .intoAlways(gated))
        }
    }

    /// Equalities that `==` of a value type may implement: reflexive or not, transitive
    /// or not.
    nonisolated(unsafe) static let equalities: [(Int, Int) -> Bool] = [
        { $0 == $1 },
        { abs($0 - $1) <= 1 },              // not transitive
        { $0 == $1 && $0 % 2 == 0 },        // odd values are not equal to themselves
        { _, _ in false },                  // equal to nothing
        { $0 % 3 == $1 % 3 },
    ]

    struct AnyEquality: EqualityFunction {
        let equals: (Int, Int) -> Bool
        func equals(_ old: Int, _ new: Int) -> Bool { equals(old, new) }
    }

    struct LoggedEffect: EffectFunction {
        let log: Recorder<String>
        func run(_ value: Int) { log.append("e:\(value)") }
    }

    func testIntoComparingIsIntoWhenNotEqualForEveryEquality() {
        checkLaw("into(comparing: eq, e) == intoWhen(!eq, e)") { me, log in
            let eq = LawTests.equalities[me.int(0..<LawTests.equalities.count)]
            return (.into(comparing: AnyEquality(equals: eq), calling: LoggedEffect(log: log)),
                    .intoWhen({ !eq($0, $1) }, { log.append("e:\($0)") }))
        }
        checkLaw("intoAll(comparing: eq, children) == intoWhen(!eq, intoAlways(children))") { me, log in
            let eq = LawTests.equalities[me.int(0..<LawTests.equalities.count)]
            let specs = (0..<me.int(0..<4)).map { _ in me.spec() }
            return (.intoAll(comparing: AnyEquality(equals: eq), specs.map { $0.build(log) }),
                    .intoWhen({ !eq($0, $1) }, .intoAlways(specs.map { $0.build(log) })))
        }
    }

    // MARK: Fuser laws

    /// Runs one random script of connects, emits and disposes against both fusers of a
    /// law and compares the effect logs; also checks every source connection was closed.
    func fuserLaw(_ name: String, _ make: (inout Gen, [ManualSource<Int>]) -> (Fuser<Int>, Fuser<Int>)) {
        var gen = Gen()
        for n in 0..<Self.cases {
            var logs: [[String]] = []
            let before = gen
            for side in 0..<2 {
                var local = before
                let sources = (0..<3).map { _ in ManualSource<Int>() }
                let pair = make(&local, sources)
                if side == 0 { gen = local }
                let fuser = side == 0 ? pair.0 : pair.1
                let log = Recorder<String>()
                var connections: [(Int, Fuser<Int>.Disposable)] = []
                var script = SeededGenerator(seed: UInt64(n) &+ 77)
                for step in 0..<20 {
                    switch Int.random(in: 0..<6, using: &script) {
                    case 0:
                        connections.append((step, fuser.connect { log.append("c\(step):\($0)") }))
                    case 1:
                        if !connections.isEmpty { connections.removeFirst().1.dispose() }
                    default:
                        sources[Int.random(in: 0..<3, using: &script)].emit(Int.random(in: 0..<10, using: &script))
                    }
                }
                connections.forEach { $0.1.dispose() }
                logs.append(log.values)
                XCTAssertEqual(sources.map(\.activeConnections), [0, 0, 0], "\(name): dispose left a source connected")
            }
            if logs[0] != logs[1] {
                XCTFail("\(name) broken in case \(n):\n\(logs[0])\n\(logs[1])")
                return
            }
        }
    }

    func testFuserExtractFusion() {
        fuserLaw("extract(f, extract(g, s)) == extract(f . g, s)") { me, s in
            let f = me.function(), g = me.function()
            return (.extract(f, .extract(g, .from(s[0]))), .extract({ f(g($0)) }, .from(s[0])))
        }
    }

    func testFuserFromAllVarargsArrayAndInit() {
        fuserLaw("fromAll(a, b, c) == Fuser([a, b, c])") { _, s in
            (.fromAll(.from(s[0]), .from(s[1]), .from(s[2])), Fuser([.from(s[0]), .from(s[1]), .from(s[2])]))
        }
    }

    /// Checks the connection promises against a direct model of them: events arrive in
    /// order, only between connect and dispose, every connection independently, and
    /// `fromAll` subscribes its children in order.
    func testFuserEventsInOrderOnlyBetweenConnectAndDispose() {
        for n in 0..<Self.cases {
            var script = SeededGenerator(seed: UInt64(n) &* 31 &+ 5)
            let source = ManualSource<Int>()
            let fuser = Fuser<Int>.fromAll(.from(source), .extractUnlessNil({ $0 % 2 == 0 ? $0 * 100 : nil }, .from(source)))
            let log = Recorder<String>()
            var expected: [String] = []
            var open: [(Int, Fuser<Int>.Disposable)] = []
            for step in 0..<25 {
                switch Int.random(in: 0..<5, using: &script) {
                case 0:
                    open.append((step, fuser.connect { log.append("c\(step):\($0)") }))
                case 1:
                    guard !open.isEmpty else { continue }
                    let closing = open.removeFirst().1
                    closing.dispose()
                    closing.dispose()
                default:
                    let v = Int.random(in: 0..<10, using: &script)
                    for (id, _) in open {
                        expected.append("c\(id):\(v)")
                        if v % 2 == 0 { expected.append("c\(id):\(v * 100)") }
                    }
                    source.emit(v)
                }
            }
            open.forEach { $0.1.dispose() }
            XCTAssertEqual(source.activeConnections, 0)
            XCTAssertEqual(source.connects, source.disposes)
            if log.values != expected {
                XCTFail("case \(n):\n\(log.values)\n\(expected)")
                return
            }
        }
    }
}
