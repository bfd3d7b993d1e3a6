#!/usr/bin/env bash
# Runs the Swift, C and Java benchmarks (same model, same scenarios) and prints one
# table: scenario x language, ns per run, ratio to `hand` and to `hand-tree`.
# Each benchmark reports medians of interleaved rounds inside one process; absolute
# times move with the machine's load, ratios much less. The JVM's JIT settles
# differently from one process to the next (the same scenario can differ by 2x between
# processes), so Java runs in several processes and the table shows, per scenario, the
# process with the median library/hand-tree ratio; the targets list the spread.
#
# Then the loop benchmarks' table (scripts/bench_loop.sh); `bash scripts/bench.sh loop`
# runs only those.
#
#   bash scripts/bench.sh [--rounds N] [--java-processes K]
#   bash scripts/bench.sh loop [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = loop ]; then
    shift
    exec bash scripts/bench_loop.sh "$@"
fi
rounds=15
java_processes=3
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --java-processes) java_processes=$2; shift 2 ;;
        *) echo "usage: bash scripts/bench.sh [--rounds N] [--java-processes K]" >&2; exit 2 ;;
    esac
done

bash scripts/setup.sh
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "Building..." >&2
swift build -c release --product DiffuserBench > /dev/null
cmake -S . -B build -G Ninja > /dev/null
ninja -C build diffuser_bench_c > /dev/null

echo "Running Swift..." >&2
"$(swift build -c release --show-bin-path)/DiffuserBench" --tsv --rounds "$rounds" | grep -P '^(swift(-keypaths|-floor|-node-floor)?\t|# swift memory)' >> "$out"
echo "Running C..." >&2
build/bench/c/diffuser_bench_c --tsv --rounds "$rounds" | grep -P '^(c\t|c-fields\t|c-floor\t|c-node-floor\t|c-handle-floor\t|# memory)' >> "$out"
(cd java && gradle --offline --no-daemon -q benchClasses)
for k in $(seq "$java_processes"); do
    echo "Running Java ($k of $java_processes)..." >&2
    (cd java && gradle --offline --no-daemon -q bench -Pargs="--tsv --rounds $rounds") | grep -P '^(java(-floor)?\t|# java native memory)' >> "$out"
done

python3 - "$out" <<'PY'
import re
import sys

rows, c_memory, fields_memory, c_floor_memory = [], None, None, None
swift_memory, java_memory = None, []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# memory"):
        m = re.search(r"library ([0-9.]+) built, ([0-9.]+) after a run", line)
        c_memory = (float(m.group(1)), float(m.group(2))) if m else None
        m = re.search(r"fields ([0-9.]+) built, ([0-9.]+) after a run", line)
        fields_memory = float(m.group(2)) if m else None
        m = re.search(r"floor ([0-9.]+) built, ([0-9.]+) after a run", line)
        c_floor_memory = float(m.group(2)) if m else None
    elif line.startswith("# swift memory"):
        m = re.search(r"library ([0-9.]+); keypaths ([0-9.]+); floor ([0-9.]+)", line)
        swift_memory = tuple(float(x) for x in m.groups()) if m else None
    elif line.startswith("# java native memory"):
        m = re.search(r"library ([0-9.]+)", line)
        if m:
            java_memory.append(float(m.group(1)))
    elif line.strip():
        rows.append(line.split("\t"))
order = ["unchanged-same", "unchanged-equal", "one-leaf", "one-leaf-deep", "ten-pct", "build"]
# c-fields: the C tree with every map a field map (dfs_diffuser_map_field). See
# bench/c/bench.c.
# The C targets are checked on `c` (a callback per map) and on `c-fields`.
# swift-keypaths: the Swift tree built with key paths (`map(\.sections[i], ...)`,
# `map(\.s0, ...)`), measured in the same rounds as the closure tree `swift`.
langs = ["swift", "swift-keypaths", "c", "c-fields", "java"]
# Floors: the least any library with the language's API does on the same work (see
# ClosureFloorRenderer and NodeFloorRenderer in bench/swift, floor_render in
# bench/c/bench.c, FloorRenderer in the Java bench), measured in the same rounds as that
# language's baselines. The C floor reaches values through the callbacks of the `c`
# form; for `c-fields` the floor is hand-tree itself. Java's is pure Java (no JNI), so
# for the binding it is a loose lower bound.
floor_of = {"swift": "swift-floor", "swift-keypaths": "swift-floor", "c": "c-floor", "java": "java-floor"}
# Node floors: the same work with one node per combinator, each reached from its parent
# through an indirect call, as in any library of composable nodes (NodeFloorRenderer,
# node_floor_render). What lies between a floor and its node floor is the price of the
# tree's shape; what lies above the node floor is the library's own.
node_floor_of = {"swift": "swift-node-floor", "swift-keypaths": "swift-node-floor", "c": "c-node-floor"}
# The handle floor (C only, handle_floor_render): the node floor built and run through
# checked handles, as any C API that turns a released or forged handle into an error
# must. For build, where the node floor costs no more than the floor, it is the floor
# that shows what the handles alone take of the target.
handle_floor_of = {"c": "c-handle-floor"}
# Several processes may report one (language, scenario): keep the one with the median
# library/hand-tree ratio, and remember the range of ratios.
grouped = {}
for r in rows:
    grouped.setdefault((r[0], r[1]), []).append(r)
table, spread, heap = {}, {}, {}
for key, group in grouped.items():
    group.sort(key=lambda r: float(r[2]) / float(r[4]))
    median_row = group[(len(group) - 1) // 2]
    table[key] = tuple(float(x) for x in median_row[2:5])
    ratios = [float(r[2]) / float(r[4]) for r in group]
    if len(ratios) > 1:
        libs = [float(r[2]) for r in group]
        trees = [float(r[4]) for r in group]
        spread[key] = (ratios[0], ratios[-1], min(libs), max(libs), min(trees), max(trees))
    if key[0] == "java" and len(median_row) > 5:
        heap[key[1]] = max(float(r[5]) for r in group)

def floor_ratio(lang, s, floors=floor_of):
    """The floor's median ratio to hand-tree for (lang, s), or None."""
    key = (floors.get(lang), s)
    if key not in table:
        return None
    f, _, t = table[key]
    return f / t

print("Diffuser benchmark: 100 sections x 10 fields; ns per run (medians), ratio to hand / hand-tree")
print(f"{'scenario':<16}" + "".join(f"{l:>30}" for l in langs))
for s in order:
    cells = []
    for l in langs:
        if (l, s) not in table:
            cells.append(f"{'-':>30}")
            continue
        lib, hand, tree = table[(l, s)]
        cells.append(f"{lib:>12.0f} ns {lib/hand:>6.2f}x {lib/tree:>7.2f}x")
    print(f"{s:<16}" + "".join(cells))
print("(columns per language: library ns, x hand, x hand-tree)")
print()
print("floors: the least any library with the same API does, x hand-tree (library x hand-tree after /)")
print(f"{'scenario':<16}" + "".join(f"{l:>22}" for l in floor_of))
for s in order:
    cells = []
    for l in floor_of:
        f = floor_ratio(l, s)
        if f is None or (l, s) not in table:
            cells.append(f"{'-':>22}")
            continue
        lib, _, tree = table[(l, s)]
        cells.append(f"{f:>10.2f}x / {lib / tree:>7.2f}x")
    print(f"{s:<16}" + "".join(cells))

# The targets: each library form against its floor (runs within 1.3x, build within 2x);
# Java against Spotify's pure-Java library on the same work (about 27x hand-tree at
# one-leaf, 8x at ten-pct) and its build against the pure-Java floor (within 2x).
print()
print("targets:")
for lang in ("swift", "swift-keypaths", "c"):
    for s in order:
        f = floor_ratio(lang, s)
        if f is None or (lang, s) not in table:
            continue
        lib, _, tree = table[(lang, s)]
        limit = 2.0 if s == "build" else 1.3
        ratio = (lib / tree) / f
        verdict = "met" if ratio <= limit else "NOT met"
        nf = floor_ratio(lang, s, node_floor_of) if s != "build" else None
        hf = floor_ratio(lang, s, handle_floor_of)
        parts = []
        if nf is not None:
            parts.append(f"node floor {nf / f:.2f}x floor; library {(lib / tree) / nf:.2f}x node floor")
        if hf is not None:
            parts.append(f"handle floor {hf / f:.2f}x floor; library {(lib / tree) / hf:.2f}x handle floor")
        shape = f"   ({'; '.join(parts)})" if parts else ""
        print(f"  {lang:<15}{s:<16} <= {limit:>4.1f}x floor        measured {ratio:>7.2f}x   {verdict}{shape}")
# Java's hand-tree moves by 2-4x between processes (JIT), which flatters the library in
# a process where the baseline settled badly: the verdict takes the median library time
# over the fastest hand-tree of all processes. When every process settled badly, that is
# still flattering (hand-tree settles anywhere from about 150 to 720 ns at one-leaf): the
# library's multiple of the pure-Java floor of the same process is printed alongside, a
# second baseline compiled apart from hand-tree.
java_targets = [("one-leaf", 27.0, "x hand-tree"), ("ten-pct", 8.0, "x hand-tree")]
for s, limit, unit in java_targets:
    if ("java", s) not in table:
        continue
    lib, _, tree = table[("java", s)]
    tree = min(float(r[4]) for r in grouped[("java", s)])
    ratio = lib / tree
    parts = []
    if ("java", s) in spread:
        low, high, lib_low, lib_high, tree_low, tree_high = spread[("java", s)]
        processes = len(grouped[("java", s)])
        parts.append(f"{processes} processes: {low:.2f}x to {high:.2f}x;"
                     f" library {lib_low:.0f}-{lib_high:.0f} ns, hand-tree {tree_low:.0f}-{tree_high:.0f} ns")
    # The floor of the same process: its row repeats that process's hand and hand-tree.
    floors = {(r[3], r[4]): float(r[2]) for r in grouped.get(("java-floor", s), [])}
    over = sorted(float(r[2]) / floors[(r[3], r[4])] for r in grouped[("java", s)] if (r[3], r[4]) in floors)
    if over:
        parts.append(f"library {over[0]:.1f}x to {over[-1]:.1f}x the floor" if len(over) > 1
                     else f"library {over[0]:.1f}x the floor")
    note = f"  ({'; '.join(parts)})" if parts else ""
    print(f"  java           {s:<16} <= {limit:>4.0f}{unit:<12} measured {ratio:>7.2f}x   {'met' if ratio <= limit else 'NOT met'}{note}")
f = floor_ratio("java", "build")
if f is not None and ("java", "build") in table:
    lib, _, tree = table[("java", "build")]
    ratio = (lib / tree) / f
    print(f"  java           build            <=  2.0x floor        measured {ratio:>7.2f}x   {'met' if ratio <= 2 else 'NOT met'}")
# Key paths against closures: the same Swift tree, the same rounds (target: within 1.1x).
for s in order:
    if ("swift", s) not in table or ("swift-keypaths", s) not in table:
        continue
    ratio = table[("swift-keypaths", s)][0] / table[("swift", s)][0]
    limit = 1.1
    verdict = "" if s == "build" else ("met" if ratio <= limit else "NOT met")
    bound = "<= 1.1x" if s != "build" else "       "
    print(f"  swift          key paths / closures, {s:<16} {bound}   measured {ratio:>6.2f}x   {verdict}")
# Native bytes per leaf, each tree after its first run (target 96 B). The floors: one
# small block per combinator and nothing else (bench/c floor_make, Swift's
# NodeFloorRenderer); a library with one node per combinator can only add to them.
if c_memory:
    built, after = c_memory
    print(f"  c              memory per leaf   <= 96 B   measured {after:>6.0f} B   {'met' if after <= 96 else 'NOT met'}"
          f"  (native, C tree after its first run"
          + (f"; {fields_memory:.0f} B with field maps" if fields_memory else "")
          + (f"; floor {c_floor_memory:.0f} B)" if c_floor_memory else ")"))
if swift_memory:
    lib, kp, floor = swift_memory
    print(f"  swift          memory per leaf   <= 96 B   measured {lib:>6.0f} B   {'met' if lib <= 96 else 'NOT met'}"
          f"  (native, closure tree after its first run; {kp:.0f} B with key paths; floor {floor:.0f} B)")
if java_memory:
    java_memory.sort()
    value = java_memory[(len(java_memory) - 1) // 2]
    print(f"  java           memory per leaf   <= 96 B   measured {value:>6.0f} B   {'met' if value <= 96 else 'NOT met'}"
          f"  (native: core nodes, JNI global references; the Java objects are on the Java heap)")
for s in ("unchanged-same", "unchanged-equal"):
    if s in heap:
        print(f"  java           heap per run, {s:<16} 0 B   measured {heap[s]:>6.1f} B   {'met' if heap[s] < 1 else 'NOT met'}")
PY

echo
bash scripts/bench_loop.sh --rounds "$rounds"
