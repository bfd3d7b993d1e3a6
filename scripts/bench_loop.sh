#!/usr/bin/env bash
# Runs the loop benchmarks (Swift bench/swift-loop, C bench/c/loop_bench.c, Java
# LoopBench) and prints one table: events per second through a loop against a
# hand-written queue + reducer + render in the same language, and the targets.
# Each benchmark reports the median and the best of interleaved rounds in one process;
# absolute figures move with the machine's load, the best round much less.
#
#   bash scripts/bench_loop.sh [--rounds N]        (also: bash scripts/bench.sh loop)
#
# Build directories: DFS_SWIFT_BUILD (default .build), DFS_CMAKE_BUILD (default build),
# DFS_JAVA_BUILD (default java/build), DFS_GRADLE_CACHE (Gradle's project cache, default
# java/.gradle).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=15
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        *) echo "usage: bash scripts/bench_loop.sh [--rounds N]" >&2; exit 2 ;;
    esac
done
swift_build=${DFS_SWIFT_BUILD:-.build}
cmake_build=${DFS_CMAKE_BUILD:-build}
java_build=()
[ -n "${DFS_JAVA_BUILD:-}" ] && java_build+=(-PdfsBuildDir="$(realpath -m "$DFS_JAVA_BUILD")")
[ -n "${DFS_GRADLE_CACHE:-}" ] && java_build+=(--project-cache-dir "$(realpath -m "$DFS_GRADLE_CACHE")")

bash scripts/setup.sh
out=$(mktemp)
trap 'rm -f "$out" "$out.log"' EXIT

# Runs a build step quietly; shows its output if it fails.
quiet() { "$@" > "$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }; }

echo "Building the loop benchmarks..." >&2
quiet swift build -c release --build-path "$swift_build" --product LoopBench
quiet cmake -S . -B "$cmake_build" -G Ninja
quiet ninja -C "$cmake_build" diffuser_bench_loop_c
(cd java && quiet gradle --offline --no-daemon -q benchClasses "${java_build[@]}")

echo "Running the Swift loop benchmark..." >&2
"$swift_build/release/LoopBench" --tsv --rounds "$rounds" | grep -P '^swift\t' >> "$out"
echo "Running the C loop benchmark..." >&2
"$cmake_build/bench/c/diffuser_bench_loop_c" --tsv --rounds "$rounds" | grep -P '^c\t' >> "$out"
echo "Running the Java loop benchmark..." >&2
(cd java && gradle --offline --no-daemon -q bench "${java_build[@]}" -Pargs="--loop --tsv --rounds $rounds") \
    | grep -P '^java\t' >> "$out"

python3 - "$out" "$rounds" <<'PY'
import sys

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
table = {(r[0], r[1]): r[2:] for r in rows}

def num(x):
    return None if x == "-" else float(x)

def rate(ns):
    return f"{1e9 / ns:,.0f}"

print(f"Loop benchmark: events/s through a loop, median of {sys.argv[2]} rounds (best round in brackets)")
print("x hand: the loop's time per event / the hand-written queue + reducer + render's;")
print("loop share: ns per event the loop adds to what it runs, from the best rounds (which the machine's")
print("load disturbs least): library - hand+diffuser (the same queue and reducer by hand, the same Diffuser);")
print("no-render, references, observed, source, gear, effects and job: library - hand (source: the hand-written loop fed by the same kind of source;")
print("gear: Swift, the hand-written loop observing the same kind of gear; C and Java, which have no plain subscription to a gear,")
print("the hand-written loop subscribed to a hand-written bus)")
header = f"{'scenario':<12}{'lang':<7}{'library ev/s':>26}{'hand ev/s':>30}{'x hand':>9}{'hand+diffuser ev/s':>21}{'loop share':>12}"
print(header)
for scenario in ("render-100", "no-render", "references", "observed", "source", "gear", "effects", "job"):
    for lang in ("swift", "c", "java"):
        if (lang, scenario) not in table:
            continue
        lib, lib_min, hand, hand_min, mixed, mixed_min = (num(x) for x in table[(lang, scenario)][:6])
        share = lib_min - (mixed_min if mixed_min is not None else hand_min)
        print(f"{scenario:<12}{lang:<7}"
              f"{rate(lib) + ' (' + rate(lib_min) + ')':>26}"
              f"{rate(hand) + ' (' + rate(hand_min) + ')':>30}"
              f"{lib / hand:>8.2f}x"
              f"{rate(mixed) if mixed is not None else '-':>21}"
              f"{share:>9.0f} ns")

print()
print("targets:")
for lang in ("swift", "c"):
    if (lang, "no-render") in table:
        lib = num(table[(lang, "no-render")][0])
        verdict = "met" if 1e9 / lib >= 1e6 else "NOT met"
        print(f"  {lang:<6}no-render    >= 1,000,000 ev/s   measured {rate(lib):>12} ev/s   {verdict}")
for lang in ("swift", "c", "java"):
    if (lang, "render-100") in table:
        row = table[(lang, "render-100")]
        lib, _, hand, _, mixed, _ = (num(x) for x in row[:6])
        floor = num(row[6]) if len(row) > 6 else None
        verdict = "met" if lib / hand <= 2 else "NOT met"
        note = f"  (the Diffuser run alone, hand+diffuser: {mixed / hand:.2f}x hand)" if mixed else ""
        if floor:
            note += f"; floor, the 100 selectors called and compared by hand: {floor / hand:.2f}x hand"
        print(f"  {lang:<6}render-100   <= 2x hand            measured {lib / hand:>12.2f}x        {verdict}{note}")
PY
