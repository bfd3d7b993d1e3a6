#!/usr/bin/env bash
# Runs every test suite: Swift (swift test), C (ctest, including valgrind and the
# installed-package test) and Java (gradle test). Installs what is missing first.
#
#   bash scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/setup.sh || exit 1

failed=()
logs=${TMPDIR:-/tmp}/diffuser-test-logs
mkdir -p "$logs"

section() { printf '\n== %s\n' "$*"; }

section "Conformance corpus: the Python model agrees with every vector"
if python3 scripts/check_vectors.py > "$logs/vectors.log" 2>&1; then
    tail -n 1 "$logs/vectors.log"
else
    cat "$logs/vectors.log"; failed+=("vectors")
fi
python3 scripts/gen_vectors.py --check > "$logs/regen.log" 2>&1 || { cat "$logs/regen.log"; failed+=("vector regeneration"); }

section "Swift: swift test"
swift test > "$logs/swift.log" 2>&1
status=$?
grep -E "^Conformance|error:|failed \(|Executed [0-9]+ tests" "$logs/swift.log" | tail -n 12
[ $status -eq 0 ] || { echo "swift test failed; log: $logs/swift.log"; failed+=("swift"); }

section "C: cmake, ninja, ctest (C tests, example, valgrind, install, ABI drift)"
if cmake -S . -B build -G Ninja > "$logs/cmake.log" 2>&1 && ninja -C build > "$logs/ninja.log" 2>&1; then
    (cd build && ctest --output-on-failure) > "$logs/ctest.log" 2>&1
    status=$?
    grep -E "vectors|Test +#|tests passed|tests failed|Total Test" "$logs/ctest.log" | tail -n 40
    [ $status -eq 0 ] || { echo "ctest failed; log: $logs/ctest.log"; tail -n 60 "$logs/ctest.log"; failed+=("ctest"); }
else
    tail -n 30 "$logs/cmake.log" "$logs/ninja.log"; failed+=("cmake build")
fi

section "Java: gradle test"
(cd java && gradle --offline --no-daemon -q test) > "$logs/gradle.log" 2>&1
status=$?
grep -E "vectors|passed, [0-9]+ failed|FAILED|error:" "$logs/gradle.log" | tail -n 20
[ $status -eq 0 ] || { echo "gradle test failed; log: $logs/gradle.log"; tail -n 60 "$logs/gradle.log"; failed+=("gradle"); }

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "All suites passed (Swift, C, Java)."
