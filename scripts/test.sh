#!/usr/bin/env bash
# Runs every test suite: Swift (swift test). Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== Swift: swift test"
swift test 2>&1 | tee /tmp/diffuser-swift-test.log | grep -E "error|failed|Executed [0-9]+ tests" | tail -20
# tee hides swift test's status; read the pipe's first status.
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || { echo "swift test failed ($status); full log: /tmp/diffuser-swift-test.log"; exit "$status"; }
