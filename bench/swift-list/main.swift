// List diff benchmark: Diffuser's ListDiff against the standard library's
// CollectionDifference (`difference(from:).inferringMoves()`) and a straightforward
// hash-map diff written by hand, on the workloads of issue 35, in one process.
//
//   swift run -c release ListDiffBench [--quick] [--all] [--only NAME]
//
// Prints, per workload and implementation, the median and the minimum time of a diff and
// the median per item (per item of the longer list), and the moves each found.
// CollectionDifference runs Myers' O((N+M)D) algorithm (D: the number of removals and
// insertions): it runs fewer times, and on the 100k permutations (D ~ N+M, minutes) only
// with --all, once.
import Diffuser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's CPU time: the machine may be shared, and time spent descheduled
/// is not the diff's.
@inline(never)
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Keeps results alive so that the optimizer cannot drop a diff.
nonisolated(unsafe) var blackHole = 0

@inline(never)
func consume(_ value: Int) { blackHole &+= value }

/// A seeded generator, so that every run measures the same lists.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

var rng = SplitMix(state: 35)

func uuids(_ count: Int) -> [UUID] {
    (0..<count).map { _ in
        let a = rng.next(), b = rng.next()
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a >> 16),
            UInt8(truncatingIfNeeded: a >> 24), UInt8(truncatingIfNeeded: a >> 32), UInt8(truncatingIfNeeded: a >> 40),
            UInt8(truncatingIfNeeded: a >> 48), UInt8(truncatingIfNeeded: a >> 56), UInt8(truncatingIfNeeded: b),
            UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b >> 16), UInt8(truncatingIfNeeded: b >> 24),
            UInt8(truncatingIfNeeded: b >> 32), UInt8(truncatingIfNeeded: b >> 40), UInt8(truncatingIfNeeded: b >> 48),
            UInt8(truncatingIfNeeded: b >> 56)))
    }
}

/// W1/W2: `count` UUIDs; the target removes `removed`, inserts `inserted` new UUIDs at
/// `at`, then shuffles the first `shuffled`.
func removeInsertShuffle(_ count: Int, removed: Range<Int>, inserted: Int, at: Int, shuffled: Int) -> ([UUID], [UUID]) {
    let source = uuids(count)
    var target = source
    target.removeSubrange(removed)
    target.insert(contentsOf: uuids(inserted), at: at)
    target[0..<shuffled].shuffle(using: &rng)
    return (source, target)
}

struct Workload {
    let name: String
    let old: [UUID]
    let new: [UUID]
    /// Diffs of CollectionDifference to measure (it can take seconds); 0: only with --all.
    let standardRuns: Int
}

func makeWorkloads() -> [Workload] {
    var result: [Workload] = []
    let (w1old, w1new) = removeInsertShuffle(5_000, removed: 2_000..<3_000, inserted: 1_000, at: 3_000, shuffled: 200)
    result.append(Workload(name: "W1 5k remove/insert/shuffle", old: w1old, new: w1new, standardRuns: 15))
    let (w2old, w2new) = removeInsertShuffle(100_000, removed: 20_000..<30_000, inserted: 10_000, at: 30_000, shuffled: 2_000)
    result.append(Workload(name: "W2 100k remove/insert/shuffle", old: w2old, new: w2new, standardRuns: 3))
    for n in [10_000, 50_000] {
        let all = uuids(n * 3 / 2)
        result.append(Workload(
            name: "\(n / 1000)k 50% overlap", old: Array(all[0..<n]), new: Array(all[(n / 2)..<(n * 3 / 2)]),
            standardRuns: n <= 10_000 ? 3 : 1))
    }
    let ten = uuids(10_000)
    result.append(Workload(name: "10k unchanged", old: ten, new: ten, standardRuns: 50))
    result.append(Workload(name: "10k shuffled", old: ten, new: ten.shuffled(using: &rng), standardRuns: 2))
    let hundred = uuids(100_000)
    result.append(Workload(name: "100k random permutation", old: hundred, new: hundred.shuffled(using: &rng), standardRuns: 0))
    result.append(Workload(name: "100k reversed", old: hundred, new: hundred.reversed(), standardRuns: 0))
    // Duplicate-heavy: 10k items over 100 distinct keys, 10% of the places redrawn.
    let alphabet = uuids(100)
    let dupOld = (0..<10_000).map { _ in alphabet[Int(rng.next() % 100)] }
    var dupNew = dupOld
    for _ in 0..<1_000 { dupNew[Int(rng.next() % 10_000)] = alphabet[Int(rng.next() % 100)] }
    result.append(Workload(name: "10k over 100 keys (duplicates)", old: dupOld, new: dupNew, standardRuns: 3))
    return result
}

// MARK: The three diffs

/// Diffuser's diff: keys are the UUIDs, content compared by `==`.
@inline(never)
func oursDiff(_ old: [UUID], _ new: [UUID]) -> Int {
    let diff = ListDiff(from: old, to: new, key: { $0 })
    consume(diff.deletes.count &+ diff.inserts.count &+ diff.updates.count)
    return diff.moves.count
}

/// The standard library: Myers' diff, then moves inferred from matching removals and
/// insertions.
@inline(never)
func standardDiff(_ old: [UUID], _ new: [UUID]) -> Int {
    let difference = new.difference(from: old).inferringMoves()
    var moves = 0
    for change in difference {
        if case .insert(_, _, let associated) = change, associated != nil { moves += 1 }
    }
    consume(difference.insertions.count)
    return moves
}

/// A straightforward hash-map diff as one writes it by hand: a dictionary of positions per
/// list, deletes and inserts by lookup, and an item moved when its position, corrected for
/// the deletes before it and the inserts before its new place, differs (the usual approach
/// of hand-written and Heckel-style diffs). Duplicate keys: the last occurrence wins.
@inline(never)
func handDiff(_ old: [UUID], _ new: [UUID]) -> Int {
    var oldIndex = [UUID: Int](minimumCapacity: old.count)
    for (i, key) in old.enumerated() { oldIndex[key] = i }
    var newIndex = [UUID: Int](minimumCapacity: new.count)
    for (j, key) in new.enumerated() { newIndex[key] = j }
    var deletes: [Int] = []
    var deletesBefore = [Int](repeating: 0, count: old.count)
    var running = 0
    for (i, key) in old.enumerated() {
        deletesBefore[i] = running
        if newIndex[key] == nil {
            deletes.append(i)
            running += 1
        }
    }
    var inserts: [Int] = []
    var moves: [(Int, Int)] = []
    running = 0
    for (j, key) in new.enumerated() {
        if let i = oldIndex[key] {
            if i - deletesBefore[i] != j - running { moves.append((i, j)) }
        } else {
            inserts.append(j)
            running += 1
        }
    }
    consume(deletes.count &+ inserts.count)
    return moves.count
}

// MARK: Measuring

struct Measure {
    var median: Double
    var minimum: Double
    var moves: Int
}

/// Runs `body` `runs` times (after one warm-up unless `warm` is false) and returns times in
/// microseconds.
func measure(runs: Int, warm: Bool = true, _ body: () -> Int) -> Measure {
    var moves = warm ? body() : 0
    var times: [Double] = []
    for _ in 0..<runs {
        let start = now()
        moves = body()
        times.append(Double(now() - start) / 1000)
    }
    times.sort()
    return Measure(median: times[times.count / 2], minimum: times[0], moves: moves)
}

/// Repetitions that take about `budget` microseconds, from a first timing.
func runsFor(budgetMicros budget: Double, _ body: () -> Int) -> Int {
    let start = now()
    _ = body()
    let once = max(Double(now() - start) / 1000, 0.05)
    return max(5, min(2_000, Int(budget / once)))
}

func maxRSSMegabytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss / 1024
}

func format(_ micros: Double) -> String {
    if micros >= 100_000 { return String(format: "%.0f ms", micros / 1000) }
    if micros >= 1_000 { return String(format: "%.2f ms", micros / 1000) }
    return String(format: "%.1f us", micros)
}

/// The fewest moves that can reorder the items `ListDiff` matched: matched items minus a
/// longest increasing subsequence of their old indices in new order (patience sorting,
/// computed here independently of the core).
func lisMinimumMoves(_ old: [UUID], _ new: [UUID]) -> (moves: Int, minimum: Int) {
    let diff = ListDiff(from: old, to: new, key: { $0 })
    var tails: [Int] = []
    var matched = 0
    for i in diff.newToOld where i >= 0 {
        matched += 1
        var lo = 0
        var hi = tails.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if tails[mid] < i { lo = mid + 1 } else { hi = mid }
        }
        if lo == tails.count { tails.append(i) } else { tails[lo] = i }
    }
    return (diff.moves.count, matched - tails.count)
}

setvbuf(stdout, nil, _IOLBF, 0)
let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let all = arguments.contains("--all")
let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1] }

print("List diff benchmark (thread CPU time): median / min per diff, ns per item (items: the longer list), moves")
print("ours = Diffuser ListDiff; std = CollectionDifference + inferringMoves(); hand = hash-map diff")
print("")
var speedups: [String: Double] = [:]  // workload name -> std median / ours median
var oursMedians: [String: Double] = [:]
var aboveMinimum: [String] = []
for workload in makeWorkloads() {
    if let only, !workload.name.contains(only) { continue }
    let items = Double(max(workload.old.count, workload.new.count))
    let old = workload.old
    let new = workload.new
    print("\(workload.name)  (\(old.count) -> \(new.count))")
    func line(_ label: String, _ m: Measure, ratioTo ours: Measure?) {
        var text = "  \(label.padding(toLength: 5, withPad: " ", startingAt: 0)) median \(format(m.median).padding(toLength: 10, withPad: " ", startingAt: 0))"
            + " min \(format(m.minimum).padding(toLength: 10, withPad: " ", startingAt: 0))"
            + String(format: " %8.1f ns/item", m.median * 1000 / items)
            + "  moves \(m.moves)"
        if let ours { text += String(format: "  (%.0fx ours)", m.median / ours.median) }
        print(text)
    }
    let budget = quick ? 100_000.0 : 500_000.0
    let ours = measure(runs: runsFor(budgetMicros: budget) { oursDiff(old, new) }) { oursDiff(old, new) }
    line("ours", ours, ratioTo: nil)
    oursMedians[workload.name] = ours.median
    let (moves, minimum) = lisMinimumMoves(old, new)
    print("        moves \(moves), LIS minimum \(minimum)")
    if moves > minimum { aboveMinimum.append(workload.name) }
    let hand = measure(runs: runsFor(budgetMicros: budget) { handDiff(old, new) }) { handDiff(old, new) }
    line("hand", hand, ratioTo: ours)
    if workload.standardRuns > 0 || all {
        let runs = workload.standardRuns == 0 ? 1 : quick ? min(workload.standardRuns, 3) : workload.standardRuns
        let standard = measure(runs: runs, warm: runs > 5) { standardDiff(old, new) }
        line("std", standard, ratioTo: ours)
        speedups[workload.name] = standard.median / ours.median
        print("        (max RSS so far \(maxRSSMegabytes()) MB)")
    } else {
        print("  std   skipped: Myers is O((N+M)D), D ~ \(old.count + new.count) here (--all runs it once)")
    }
    print("")
}
// The goals of issue 35, measured here.
print("Targets (issue 35):")
func verdict(_ met: Bool?) -> String { met.map { $0 ? "met" : "NOT MET" } ?? "not measured" }
for (prefix, goal) in [("W1", 120.0), ("W2", 330.0)] {
    let speedup = speedups.first { $0.key.hasPrefix(prefix) }?.value
    let shown = speedup.map { String(format: "%.0fx", $0) } ?? "-"
    print("  \(prefix): CollectionDifference / ours = \(shown) (goal >= \(Int(goal))x): \(verdict(speedup.map { $0 >= goal }))")
}
let unchanged = oursMedians["10k unchanged"]
print("  10k unchanged: \(unchanged.map(format) ?? "-") (goal < 50 us): \(verdict(unchanged.map { $0 < 50 }))")
print("  moves never above the LIS minimum: \(aboveMinimum.isEmpty ? "met" : "NOT MET on \(aboveMinimum)")")
print("checksum \(blackHole)")
