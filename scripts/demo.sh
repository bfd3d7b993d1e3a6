#!/usr/bin/env bash
# Runs the login demo from a fresh clone: the Swift demo needs only Swift; --all installs
# what the C and Java demos need.
#
#   bash scripts/demo.sh            the Swift demo (the library's own language)
#   bash scripts/demo.sh --all      Swift, then C and Java, and shows their outputs agree
#   bash scripts/demo.sh --interactive   type the events yourself (Swift)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=swift
extra=()
for arg in "$@"; do
    case "$arg" in
        --all) mode=all ;;
        --interactive) extra+=(--interactive) ;;
        *) echo "usage: scripts/demo.sh [--all | --interactive]"; exit 2 ;;
    esac
done

echo "Building the Swift demo..." >&2
swift build --product LoginDemo > /dev/null
swift_demo=$(swift build --show-bin-path)/LoginDemo
"$swift_demo" --script examples/login.script "${extra[@]}"

if [ "$mode" = all ]; then
    bash scripts/setup.sh
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    bash scripts/build_demos.sh "$tmp" >&2
    "$swift_demo" --script examples/login.script --no-color | tail -n +2 > "$tmp/swift.out"
    echo; echo "== C (through libdiffuser.so, found with pkg-config)"
    "$tmp/login_demo_c" --script examples/login.script | tee "$tmp/c.full" | tail -n +2 > "$tmp/c.out"
    head -n 1 "$tmp/c.full"; echo "   ... (same steps)"
    echo; echo "== Java (through the jar)"
    java -cp "$tmp/diffuser.jar:$tmp/diffuser-examples.jar" io.diffuser.examples.LoginDemo --script examples/login.script | tee "$tmp/java.full" | tail -n +2 > "$tmp/java.out"
    head -n 1 "$tmp/java.full"; echo "   ... (same steps)"
    if diff -q "$tmp/swift.out" "$tmp/c.out" > /dev/null && diff -q "$tmp/swift.out" "$tmp/java.out" > /dev/null; then
        echo; echo "Swift, C and Java printed the same $(wc -l < "$tmp/swift.out") lines after their banner."
    else
        echo; echo "The outputs differ:"; diff "$tmp/swift.out" "$tmp/c.out"; diff "$tmp/swift.out" "$tmp/java.out"; exit 1
    fi
fi
