// Diffuser benchmark (Swift): the library against hand-written caching code on a
// 1,000-leaf model. Prints ns per run; medians of interleaved rounds in one process. The
// library is measured twice, its tree built with closures and with key paths, side by
// side in the same rounds. Also measures a floor: the least any library taking this
// API's closures must do.
//
//   swift run -c release DiffuserBench [--rounds N] [--tsv] [--only SCENARIO]
//   swift run -c release DiffuserBench --profile SCENARIO [--renderer NAME]
//
// `--profile` runs one renderer (`library` by default; `keypaths`, `floor`, `node-floor`)
// on one scenario (or `build`: builds it) for about three seconds and measures nothing: a
// process to hand to `perf record`.
import BenchHeap
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
///
/// The built renderers are destroyed and the heap trimmed afterwards (as the C
/// benchmark's `settle_heap` does), so that every build starts from the same heap, which
/// it must grow into: without that, a build's time depends on the free memory the
/// measurements before it left (the floor alone took 97 us, after the run scenarios 42).
func measureBuild<R: Renderer>(_ make: () -> R, iterations: Int) -> Double {
    var built: [R] = []
    built.reserveCapacity(iterations)
    let start = now()
    for _ in 0..<iterations { built.append(make()) }
    let elapsed = now() - start
    keepAlive = [built.count]
    built.removeAll()
    _ = bench_heap_in_use()
    return Double(elapsed) / Double(iterations)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

var rounds = 15
var tsv = false
var only: String?
var profile: String?
var profiled = "library"
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--rounds": rounds = Int(args.next() ?? "") ?? rounds
    case "--tsv": tsv = true
    case "--only": only = args.next()
    case "--profile": profile = args.next()
    case "--renderer": profiled = args.next() ?? profiled
    default:
        print("usage: DiffuserBench [--rounds N] [--tsv] [--only SCENARIO] | --profile SCENARIO [--renderer NAME]")
        exit(2)
    }
}

/// Runs `make()`'s renderer on the scenario's inputs, alternately, for about `seconds`.
func spin<R: Renderer>(_ make: () -> R, _ scenario: Scenario, seconds: UInt64 = 3) {
    var renderer = make()
    let end = now() + seconds * 1_000_000_000
    var i = 0
    while now() < end {
        for _ in 0..<100 {
            renderer.render(i & 1 == 0 ? scenario.inputs.0 : scenario.inputs.1)
            i += 1
        }
    }
}

/// Builds `make()`'s renderer over and over for about `seconds`, 40 kept at a time.
func spinBuild<R: Renderer>(_ make: () -> R, seconds: UInt64 = 3) {
    let end = now() + seconds * 1_000_000_000
    while now() < end {
        var built: [R] = []
        built.reserveCapacity(40)
        for _ in 0..<40 { built.append(make()) }
        keepAlive = [built.count]
    }
}

if profile == "build" {
    switch profiled {
    case "library": spinBuild(LibraryRenderer.init)
    case "keypaths": spinBuild(KeyPathLibraryRenderer.init)
    case "node-floor": spinBuild(NodeFloorRenderer.init)
    default:
        print("no build of \(profiled): library, keypaths or node-floor")
        exit(2)
    }
    exit(0)
}
if let profile {
    guard let scenario = makeScenarios().first(where: { $0.name == profile }) else {
        print("no scenario \(profile)")
        exit(2)
    }
    switch profiled {
    case "library": spin(LibraryRenderer.init, scenario)
    case "keypaths": spin(KeyPathLibraryRenderer.init, scenario)
    case "floor": spin(ClosureFloorRenderer.init, scenario)
    case "node-floor": spin(NodeFloorRenderer.init, scenario)
    default:
        print("no renderer \(profiled): library, keypaths, floor or node-floor")
        exit(2)
    }
    exit(0)
}

let scenarios = makeScenarios().filter { only == nil || $0.name == only }
if let only, only != "build", scenarios.isEmpty {
    print("no scenario \(only): \((makeScenarios().map(\.name) + ["build"]).joined(separator: ", "))")
    exit(2)
}
/// The sink's sum over `sequence` for a new renderer: renderers that run the same effects
/// on the same models give the same sum.
func effects<R: Renderer>(_ make: () -> R, _ sequence: [Screen]) -> UInt64 {
    let saved = sinkAccumulator
    defer { sinkAccumulator = saved }
    sinkAccumulator = 0
    var renderer = make()
    for screen in sequence { renderer.render(screen) }
    return sinkAccumulator
}

// Before measuring: the library, the baselines and the floor must run the same effects,
// or the figures would compare different work.
do {
    let all = makeScenarios()
    let sequence = [all[0].inputs.0, all[2].inputs.1, all[4].inputs.1, all[3].inputs.1, all[1].inputs.1,
                    all[0].inputs.0, all[2].inputs.1, all[0].inputs.0]
    let expected = effects(LibraryRenderer.init, sequence)
    for (name, sum) in [("key paths", effects(KeyPathLibraryRenderer.init, sequence)),
                        ("hand", effects(HandRenderer.init, sequence)),
                        ("hand-tree", effects(HandTreeRenderer.init, sequence)),
                        ("floor", effects(ClosureFloorRenderer.init, sequence)),
                        ("node floor", effects(NodeFloorRenderer.init, sequence))] where sum != expected {
        print("renderer \(name) ran different effects than the library")
        exit(1)
    }
}

/// Per scenario: ns of the library (closures), the library (key paths), hand, hand-tree,
/// the floor and the node floor, one element a round (for build, the node floor is the
/// floor).
var results: [(String, [Double], [Double], [Double], [Double], [Double], [Double])] = []
for scenario in scenarios {
    var lib: [Double] = [], keyPaths: [Double] = [], hand: [Double] = [], tree: [Double] = [], floor: [Double] = []
    var nodeFloor: [Double] = []
    for _ in 0..<rounds {
        lib.append(measureRuns(LibraryRenderer.init, scenario, iterations: 400))
        keyPaths.append(measureRuns(KeyPathLibraryRenderer.init, scenario, iterations: 400))
        hand.append(measureRuns(HandRenderer.init, scenario, iterations: 400))
        tree.append(measureRuns(HandTreeRenderer.init, scenario, iterations: 400))
        floor.append(measureRuns(ClosureFloorRenderer.init, scenario, iterations: 400))
        nodeFloor.append(measureRuns(NodeFloorRenderer.init, scenario, iterations: 400))
    }
    results.append((scenario.name, lib, keyPaths, hand, tree, floor, nodeFloor))
}
if only == nil || only == "build" {
    var lib: [Double] = [], keyPaths: [Double] = [], hand: [Double] = [], tree: [Double] = [], floor: [Double] = []
    for _ in 0..<rounds {
        lib.append(measureBuild(LibraryRenderer.init, iterations: 40))
        keyPaths.append(measureBuild(KeyPathLibraryRenderer.init, iterations: 40))
        hand.append(measureBuild(HandRenderer.init, iterations: 40))
        tree.append(measureBuild(HandTreeRenderer.init, iterations: 40))
        floor.append(measureBuild(NodeFloorRenderer.init, iterations: 40))
    }
    results.append(("build", lib, keyPaths, hand, tree, floor, floor))
}

/// Native bytes per leaf of what `make` builds, after a first run on `screen` (which
/// gives the graph its serializer and fills the caches): the heap in use (glibc's
/// `mallinfo2`, see bench/heap) before and after building and running 20 of them. `nil`
/// where the C library cannot say.
func memoryPerLeaf<R: Renderer>(_ make: () -> R, _ screen: Screen) -> Double? {
    let trees = 20
    var built: [R] = []
    built.reserveCapacity(trees)
    let before = bench_heap_in_use()
    for _ in 0..<trees { built.append(make()) }
    for i in 0..<trees { built[i].render(screen) }
    let after = bench_heap_in_use()
    keepAlive = [built.count]
    guard before > 0 else { return nil }
    return Double(Int(after) - Int(before)) / Double(trees * Shape.leaves)
}

/// Bytes per leaf: the library with closures, with key paths, and the node floor (one
/// small object per combinator, see `NodeFloorRenderer`).
let memory: (Double, Double, Double)? = only != nil ? nil : {
    let base = makeScreen(seed: 1)
    guard let l = memoryPerLeaf(LibraryRenderer.init, base), let k = memoryPerLeaf(KeyPathLibraryRenderer.init, base),
          let f = memoryPerLeaf(NodeFloorRenderer.init, base) else { return nil }
    return (l, k, f)
}()

func fmt(_ x: Double, _ width: Int = 10, _ digits: Int = 0) -> String {
    var s = digits == 0 ? String(Int(x.rounded())) : String(Double(Int(x * 100)) / 100)
    while s.count < width { s = " " + s }
    return s
}

if tsv {
    // The key-path and floor rows have the same baselines, measured in the same rounds.
    for (name, lib, keyPaths, hand, tree, floor, nodeFloor) in results {
        let l = median(lib), k = median(keyPaths), h = median(hand), t = median(tree), f = median(floor)
        print("swift\t\(name)\t\(l)\t\(h)\t\(t)")
        print("swift-keypaths\t\(name)\t\(k)\t\(h)\t\(t)")
        print("swift-floor\t\(name)\t\(f)\t\(h)\t\(t)")
        print("swift-node-floor\t\(name)\t\(median(nodeFloor))\t\(h)\t\(t)")
    }
    if let (l, k, f) = memory {
        print("# swift memory per leaf (bytes): library \(l); keypaths \(k); floor \(f)")
    }
} else {
    print("Diffuser Swift benchmark: 100 sections x 10 fields, median of \(rounds) interleaved rounds")
    print("scenario        closures ns  keypaths ns  kp/cl   hand ns  hand-tree ns  cl x tree  kp x tree   floor ns  x tree"
          + "  node floor ns  x tree")
    for (name, lib, keyPaths, hand, tree, floor, nodeFloor) in results {
        let l = median(lib), k = median(keyPaths), h = median(hand), t = median(tree), f = median(floor)
        let n = median(nodeFloor)
        var padded = name
        while padded.count < 16 { padded += " " }
        print("\(padded)\(fmt(l, 11))\(fmt(k, 13))\(fmt(k / l, 7, 2))\(fmt(h, 10))\(fmt(t, 14))"
              + "\(fmt(l / t, 11, 2))\(fmt(k / t, 11, 2))\(fmt(f, 11))\(fmt(f / t, 8, 2))\(fmt(n, 15))\(fmt(n / t, 8, 2))")
    }
    print("(kp/cl: key paths over closures, same rounds; x tree: over hand-tree; floor: the least any library")
    print(" taking this API's closures does, see ClosureFloorRenderer; node floor: the same with one node per")
    print(" combinator, see NodeFloorRenderer, which is also the floor of build)")
    if let (l, k, f) = memory {
        print("\nnative memory per leaf after the first run (mallinfo2, \(Shape.leaves) leaves per tree):")
        print("  closures \(fmt(l, 7, 2)) bytes   key paths \(fmt(k, 7, 2)) bytes   node floor \(fmt(f, 7, 2)) bytes")
    }
}
print("(sink \(sinkAccumulator % 1000))")
