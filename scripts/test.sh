#!/usr/bin/env bash
# Runs every test suite: Swift (swift test, in a debug build and in a release build under
# AddressSanitizer), C (ctest, including valgrind and the installed-package test), Java
# (gradle test, under -Xcheck:jni: a JNI misuse the JVM reports fails it),
# ThreadSanitizer over the thread tests, a bounded run of the C API fuzzer, the API
# reference build, the demos and the README's snippets. Installs what is missing first.
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

# What a swift test log says in short: the conformance runner's count, every failure, and
# the totals (XCTest prints an "Executed" line per test class; only its last is the total).
swift_summary() {
    grep -E "^Conformance|error:|failed \(|Test run with" "$1" | tail -n 20
    grep -E "Executed [0-9]+ tests" "$1" | tail -n 1
    return 0
}

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
swift_summary "$logs/swift.log"
[ $status -eq 0 ] || { echo "swift test failed; log: $logs/swift.log"; failed+=("swift"); }

# The release build is the one users ship, and the only one where the optimizer takes the
# core's fast paths (a map's closure lent its input in place, Borrow.swift): every vector
# and test again, through that code, under AddressSanitizer. Leak detection is off: an
# object's weak-reference side table is reached only through an encoded pointer, so
# LeakSanitizer reports every one still in use as a leak (and what it reaches, such as the
# test cases XCTest keeps); the Swift tests check lifetimes with weak references, and
# valgrind (ctest) and the fuzzer check the core's leaks through the C API.
section "Swift, optimized, under AddressSanitizer: swift test -c release --sanitize=address (.build-asan)"
ASAN_OPTIONS=detect_leaks=0 swift test -c release -Xswiftc -enable-testing --sanitize=address \
    --scratch-path .build-asan > "$logs/swift-release.log" 2>&1
status=$?
swift_summary "$logs/swift-release.log"
grep -m 1 -A 12 "ERROR: AddressSanitizer" "$logs/swift-release.log"
[ $status -eq 0 ] || { echo "swift test -c release --sanitize=address failed; log: $logs/swift-release.log"; failed+=("swift release (ASan)"); }

section "C: cmake, ninja, ctest (C tests, example, valgrind, install, ABI drift)"
if cmake -S . -B build -G Ninja > "$logs/cmake.log" 2>&1 && ninja -C build > "$logs/ninja.log" 2>&1; then
    (cd build && ctest --output-on-failure) > "$logs/ctest.log" 2>&1
    status=$?
    grep -E "vectors|Test +#|tests passed|tests failed|Total Test" "$logs/ctest.log" | tail -n 40
    # ctest shows only failing output: print the C runner's vector count from a verbose rerun.
    (cd build && ctest -R '^c_conformance$' -V 2>&1) | grep -E "^[0-9]+: (Conformance \(C\)|[0-9]+ passed, [0-9]+ failed)" | sed 's/^[0-9]*: //'
    [ $status -eq 0 ] || { echo "ctest failed; log: $logs/ctest.log"; tail -n 60 "$logs/ctest.log"; failed+=("ctest"); }
else
    tail -n 30 "$logs/cmake.log" "$logs/ninja.log"; failed+=("cmake build")
fi

section "Java: gradle test, under -Xcheck:jni"
(cd java && gradle --offline --no-daemon -q test -PcheckJni) > "$logs/gradle.log" 2>&1
status=$?
grep -E "vectors|passed, [0-9]+ failed|FAILED|error:|Xcheck:jni reported" "$logs/gradle.log" | tail -n 20
[ $status -eq 0 ] || { echo "gradle test failed; log: $logs/gradle.log"; tail -n 60 "$logs/gradle.log"; failed+=("gradle"); }

section "ThreadSanitizer: Swift concurrency tests, C thread tests, stress (scripts/tsan.sh)"
if bash scripts/tsan.sh > "$logs/tsan.log" 2>&1; then
    tail -n 3 "$logs/tsan.log"
else
    tail -n 60 "$logs/tsan.log"; failed+=("tsan")
fi

section "Fuzzer: the C API under ASan and UBSan for 60 s (scripts/fuzz.sh)"
if bash scripts/fuzz.sh --seconds 60 > "$logs/fuzz.log" 2>&1; then
    tail -n 3 "$logs/fuzz.log"
else
    tail -n 60 "$logs/fuzz.log"; failed+=("fuzz")
fi

section "API reference: DocC, Doxygen, Javadoc without warnings (scripts/docs.sh)"
if bash scripts/docs.sh > "$logs/docs.log" 2>&1; then
    tail -n 1 "$logs/docs.log"
else
    tail -n 40 "$logs/docs.log"; failed+=("docs")
fi

section "Demo: Swift, C and Java print the same session (scripts/demo.sh --all)"
if bash scripts/demo.sh --all > "$logs/demo.log" 2>&1; then
    tail -n 1 "$logs/demo.log"
else
    tail -n 40 "$logs/demo.log"; failed+=("demo comparison")
fi

section "Demo: the README's demo command in a fresh clone"
bash scripts/test_demo_fresh_clone.sh > "$logs/fresh.log" 2>&1 && tail -n 1 "$logs/fresh.log" || {
    tail -n 40 "$logs/fresh.log"; failed+=("fresh-clone demo"); }

section "README: every snippet compiles and runs"
rm -rf "$logs/prefix"
if cmake --install build --prefix "$logs/prefix" > /dev/null 2>&1 &&
   python3 scripts/check_readme.py --prefix "$logs/prefix" --jar java/build/libs/diffuser-0.1.0.jar > "$logs/readme.log" 2>&1; then
    cat "$logs/readme.log"
else
    tail -n 40 "$logs/readme.log"; failed+=("README snippets")
fi

# One closing line over the three test runners.
swift_total=$(grep -oE "Executed [0-9]+ tests, with [0-9]+ failures" "$logs/swift.log" | tail -n 1 | grep -oE "[0-9]+" | head -n 2 | tr '\n' ' ')
read -r s_run s_fail <<< "${swift_total:-0 1}"
# Swift Testing's tests (the exit tests) report apart from XCTest's; a failure of theirs
# already fails `swift test`.
st_run=$(grep -oE "Test run with [0-9]+ tests? in [0-9]+ suites? passed" "$logs/swift.log" | tail -n 1 | grep -oE "[0-9]+" | head -n 1)
s_run=$(( s_run + ${st_run:-0} ))
c_total=$(grep -oE "[0-9]+ tests failed out of [0-9]+" "$logs/ctest.log" | tail -n 1 | grep -oE "[0-9]+" | tr '\n' ' ')
read -r c_fail c_run <<< "${c_total:-1 0}"
j_total=$(grep -oE "^[0-9]+ passed, [0-9]+ failed" "$logs/gradle.log" | tail -n 1 | grep -oE "[0-9]+" | tr '\n' ' ')
read -r j_pass j_fail <<< "${j_total:-0 1}"
passed=$(( s_run - s_fail + c_run - c_fail + j_pass ))
failures=$(( s_fail + c_fail + j_fail + ${#failed[@]} ))

echo
echo "Swift: $s_run tests ($s_fail failed); C: $c_run ctest entries ($c_fail failed); Java: $j_pass passed ($j_fail failed)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    echo "tests: $passed passed, $failures failed"
    exit 1
fi
echo "All suites passed (Swift, C, Java, demos, README)."
echo "tests: $passed passed, $failures failed"
