// Diffuser benchmark (Swift): the library against hand-written caching code on a
// 1,000-leaf model. Prints ns per run; medians of interleaved rounds in one process.
//
//   swift run -c release DiffuserBench [--rounds N] [--tsv]
import Diffuser

#if canImport(Glibc)
import Glibc
#endif

struct Scenario {
    let name: String
    /// Two models the runs alternate between (after a first run on the first one).
    let inputs: (Screen, Screen)
}

func makeScenarios() -> [Scenario] {
    let base = makeScreen(seed: 1)
    var oneLeaf = base
    edit(&oneLeaf, leaf: 537, generation: 1)
    var oneLeafDeep = deepCopy(base)
    edit(&oneLeafDeep, leaf: 537, generation: 1)
    var tenPct = base
    for leaf in stride(from: 3, to: Shape.leaves, by: 10) { edit(&tenPct, leaf: leaf, generation: 1) }
    return [
        Scenario(name: "unchanged-same", inputs: (base, base)),
        Scenario(name: "unchanged-equal", inputs: (base, deepCopy(base))),
        Scenario(name: "one-leaf", inputs: (base, oneLeaf)),
        Scenario(name: "one-leaf-deep", inputs: (deepCopy(base), oneLeafDeep)),
        Scenario(name: "ten-pct", inputs: (base, tenPct)),
    ]
}

@inline(never)
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// ns per run of `renderer` alternating between the scenario's two inputs.
func measureRuns<R: Renderer>(_ make: () -> R, _ scenario: Scenario, iterations: Int) -> Double {
    var renderer = make()
    renderer.render(scenario.inputs.0)
    renderer.render(scenario.inputs.1)
    let start = now()
    for i in 0..<iterations {
        renderer.render(i & 1 == 0 ? scenario.inputs.0 : scenario.inputs.1)
    }
    return Double(now() - start) / Double(iterations)
}

nonisolated(unsafe) var keepAlive: [Any] = []

/// ns to construct a renderer (the diffuser tree, or the baseline's caches).
func measureBuild<R: Renderer>(_ make: () -> R, iterations: Int) -> Double {
    var built: [R] = []
    built.reserveCapacity(iterations)
    let start = now()
    for _ in 0..<iterations { built.append(make()) }
    let elapsed = now() - start
    keepAlive = [built.count]
    return Double(elapsed) / Double(iterations)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

var rounds = 15
var tsv = false
var only: String?
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--rounds": rounds = Int(args.next() ?? "") ?? rounds
    case "--tsv": tsv = true
    case "--only": only = args.next()
    default:
        print("usage: DiffuserBench [--rounds N] [--tsv] [--only SCENARIO]")
        exit(2)
    }
}

let scenarios = makeScenarios().filter { only == nil || $0.name == only }
var results: [(String, [Double], [Double], [Double])] = []
for scenario in scenarios {
    var lib: [Double] = [], hand: [Double] = [], tree: [Double] = []
    for _ in 0..<rounds {
        lib.append(measureRuns(LibraryRenderer.init, scenario, iterations: 400))
        hand.append(measureRuns(HandRenderer.init, scenario, iterations: 400))
        tree.append(measureRuns(HandTreeRenderer.init, scenario, iterations: 400))
    }
    results.append((scenario.name, lib, hand, tree))
}
if only == nil || only == "build" {
    var lib: [Double] = [], hand: [Double] = [], tree: [Double] = []
    for _ in 0..<rounds {
        lib.append(measureBuild(LibraryRenderer.init, iterations: 40))
        hand.append(measureBuild(HandRenderer.init, iterations: 40))
        tree.append(measureBuild(HandTreeRenderer.init, iterations: 40))
    }
    results.append(("build", lib, hand, tree))
}

func fmt(_ x: Double, _ width: Int = 10, _ digits: Int = 0) -> String {
    var s = digits == 0 ? String(Int(x.rounded())) : String(Double(Int(x * 100)) / 100)
    while s.count < width { s = " " + s }
    return s
}

if tsv {
    for (name, lib, hand, tree) in results {
        let l = median(lib), h = median(hand), t = median(tree)
        print("swift\t\(name)\t\(l)\t\(h)\t\(t)")
    }
} else {
    print("Diffuser Swift benchmark: 100 sections x 10 fields, median of \(rounds) interleaved rounds")
    print("scenario          library ns    hand ns  hand-tree ns   x hand  x hand-tree")
    for (name, lib, hand, tree) in results {
        let l = median(lib), h = median(hand), t = median(tree)
        var padded = name
        while padded.count < 16 { padded += " " }
        print("\(padded)\(fmt(l, 12))\(fmt(h, 11))\(fmt(t, 14))\(fmt(l / h, 9, 2))\(fmt(l / t, 13, 2))")
    }
}
print("(sink \(sinkAccumulator % 1000))")
