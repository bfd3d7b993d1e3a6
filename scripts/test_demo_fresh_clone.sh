#!/usr/bin/env bash
# Runs the README's demo command in a fresh clone of this repository and checks what a
# newcomer sees: every step of the scripted session and the render counts.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q . "$tmp/diffuser"
command=$(grep -A4 '^Run the demo' README.md | grep -m1 '^bash ')
echo "fresh clone: $command"
(cd "$tmp/diffuser" && $command) > "$tmp/out.txt" 2> "$tmp/err.txt" || {
    cat "$tmp/err.txt" "$tmp/out.txt"; echo "the demo command failed"; exit 1; }
fails=0
for want in \
    "Login demo (Swift): a Loop updates the model, a Diffuser renders it, a Fuser gathers the user's events." \
    "-- start" "   6 of 6 parts rendered" "-- username \"alice\"" "   0 of 6 parts rendered" \
    "   effect           login \"alice\" -> sends login refused" "-- login accepted" \
    "   header.title     Hello, alice!" "   button.login     ( Log in ) signed in" \
    "   total            31 of 78 (60% fewer draws)"; do
    if ! grep -qxF -- "$want" "$tmp/out.txt"; then echo "missing: $want"; fails=$((fails + 1)); fi
done
steps=$(grep -c '^-- ' "$tmp/out.txt")
[ "$steps" -eq 14 ] || { echo "expected 14 steps, saw $steps"; fails=$((fails + 1)); }
if [ $fails -ne 0 ]; then cat "$tmp/out.txt"; exit 1; fi
echo "fresh clone demo: 14 steps, render counts as expected"
