#!/usr/bin/env bash
# Runs the Swift, C and Java benchmarks (same model, same scenarios) and prints one
# table: scenario x language, ns per run, ratio to `hand` and to `hand-tree`.
# Each benchmark reports medians of interleaved rounds inside one process; absolute
# times move with the machine's load, ratios much less.
#
#   bash scripts/bench.sh [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=15
[ "${1:-}" = "--rounds" ] && rounds=${2:-15}

bash scripts/setup.sh
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "Building..." >&2
swift build -c release --product DiffuserBench > /dev/null
cmake -S . -B build -G Ninja > /dev/null
ninja -C build diffuser_bench_c > /dev/null

echo "Running Swift..." >&2
"$(swift build -c release --show-bin-path)/DiffuserBench" --tsv --rounds "$rounds" | grep -P '^swift\t' >> "$out"
echo "Running C..." >&2
build/bench/c/diffuser_bench_c --tsv --rounds "$rounds" | grep -P '^c\t' >> "$out"
echo "Running Java..." >&2
(cd java && gradle --offline --no-daemon -q bench -Pargs="--tsv --rounds $rounds") | grep -P '^java\t' >> "$out"

python3 - "$out" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
order = ["unchanged-same", "unchanged-equal", "one-leaf", "one-leaf-deep", "ten-pct", "build"]
langs = ["swift", "c", "java"]
table = {(r[0], r[1]): tuple(float(x) for x in r[2:5]) for r in rows}
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
PY
