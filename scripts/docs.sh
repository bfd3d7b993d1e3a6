#!/usr/bin/env bash
# Builds the API reference of each language in its own format, into build/docs/:
#   swift/  DocC, from the symbol graph of module Diffuser (the toolchain's docc)
#   c/      Doxygen, from include/diffuser.h (installs doxygen when missing, as root)
#   java/   Javadoc of the exported packages (gradle javadoc, doclint on)
# Fails on any warning.
#
#   bash scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/docs
rm -rf "$out"
mkdir -p "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "Swift: DocC" >&2
graphs=$out/symbol-graphs
mkdir -p "$graphs"
swift build --scratch-path .build-docs --target Diffuser > "$log" 2>&1 || { cat "$log"; exit 1; }
swift-symbolgraph-extract -module-name Diffuser -I .build-docs/debug/Modules \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$graphs" > "$log" 2>&1 ||
    { cat "$log"; exit 1; }
docc convert docs/Diffuser.docc --additional-symbol-graph-dir "$graphs" --output-path "$out/swift" \
    --fallback-display-name Diffuser --fallback-bundle-identifier io.diffuser.Diffuser \
    --warnings-as-errors > "$log" 2>&1 || { cat "$log"; exit 1; }
rm -rf "$graphs"

echo "C: Doxygen" >&2
if ! command -v doxygen > /dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then echo "docs: need root to apt-get install doxygen" >&2; exit 1; fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq doxygen > /dev/null
fi
mkdir -p "$out/c"
doxygen docs/Doxyfile > "$log" 2>&1 || { cat "$log"; exit 1; }
if grep -q "warning" "$log"; then grep "warning" "$log"; exit 1; fi

echo "Java: Javadoc" >&2
(cd java && gradle --offline --no-daemon -q javadoc) > "$log" 2>&1 || { cat "$log"; exit 1; }
rm -rf "$out/java"
cp -r java/build/docs/javadoc "$out/java"

echo "API reference: $out/swift (DocC archive), $out/c/html/index.html, $out/java/index.html"
