#!/usr/bin/env bash
# ThreadSanitizer runs of the thread tests.
#
#   scripts/tsan.sh [--swift-only | --c-only]
#
# (a) Swift: swift test --sanitize=thread on the concurrency, lock and thread tests of
#     Tests/DiffuserTests (DiffuserConcurrencyTests, FuserConcurrencyTests,
#     LoopConcurrencyTests, LoopClosingRaceTests, LoopSourceDeliveryTests,
#     LoopSourceLifetimeTests, LoopSessionWaitTests, LoopModelOwnershipTests, LockTests
#     and any test whose name says Thread), built in .build-tsan.
# (b) C: the C thread tests (Tests/C/test_threads.c; test_fuser.c, whose concurrent
#     emit and dispose-while-emitting sections run threads; test_loop.c, whose loops run
#     on background executors, eight dispatching threads and dispose racing dispatch;
#     test_gear.c; test_closure_races.c, libffi closures called and made while their
#     connection is disposed; test_loop_connection.c, loop registrations disposed while
#     their sources connect and deliver on other threads) against a libdiffuser.so
#     whose Swift core is compiled with -sanitize=thread, built in build-tsan with the
#     Swift toolchain's clang.
# (c) Tests/Fuzz/stress_threads.c (threads doing random steps on shared diffusers and
#     fusers) and Tests/Fuzz/stress_loops.c (the same on shared loops) against the same
#     library; STRESS_STEPS steps per thread (default 20000).
#
# Exits non-zero if a test fails or ThreadSanitizer reports anything (a data race, a
# lock-order inversion, a thread leak...). Logs: build-tsan/*.log.
#
# Environment: CLANG (default: the clang of the Swift toolchain), TSAN_OPTIONS (added
# to this script's), SWIFT_FILTER (default 'Concurrency|Lock|Thread|Race|SourceDelivery|SourceLifetime|SessionWait|SessionLifetime|ModelOwnership').
set -uo pipefail

do_swift=1
do_c=1
case "${1:-}" in
  --swift-only) do_c=0 ;;
  --c-only) do_swift=0 ;;
  "") ;;
  -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "tsan.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-tsan"
mkdir -p "$build"

swiftc="$(command -v swiftc || true)"
[ -n "$swiftc" ] || swiftc=/opt/swift/usr/bin/swiftc
if [ ! -x "$swiftc" ]; then
  echo "tsan.sh: no Swift toolchain (swiftc) found" >&2
  exit 1
fi
toolchain_bin="$(dirname "$(readlink -f "$swiftc")")"
swift="$toolchain_bin/swift"
clang="${CLANG:-$toolchain_bin/clang}"

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
[ -e /usr/include/ffi.h ] || ls /usr/include/*/ffi.h >/dev/null 2>&1 || missing+=(libffi-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "tsan.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

symbolizer="$toolchain_bin/llvm-symbolizer"
[ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"
# halt_on_error=0: see every report of a run; exitcode=66 (the default) makes a run
# with reports fail even if its tests pass.
# cmake/tsan.supp: the first use of a Swift global, which the statically linked runtime
# initializes with synchronization TSan cannot see (see the file).
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4 external_symbolizer_path=$symbolizer suppressions=$root/cmake/tsan.supp ${TSAN_OPTIONS:-}"

failed=()
reports=0

# Counts the ThreadSanitizer reports in a log and prints their summaries.
count_reports() {
  local log="$1" n
  n=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
  if [ "$n" -gt 0 ]; then
    echo "  $n ThreadSanitizer report(s):"
    grep "SUMMARY: ThreadSanitizer" "$log" | sort | uniq -c | sed 's/^/    /' | head -20
  fi
  reports=$((reports + n))
  return 0
}

if [ "$do_c" -eq 1 ]; then
  echo "== (b) C thread tests against a TSan-built libdiffuser.so (build-tsan)"
  # The toolchain's TSan runtime intercepts libdispatch too: executables linked with it
  # need the toolchain's libdispatch and BlocksRuntime.
  swift_libs="$(dirname "$toolchain_bin")/lib/swift/linux"
  if [ ! -f "$build/build.ninja" ]; then
    if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER="$clang" -DCMAKE_Swift_COMPILER="$swiftc" \
        -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
        -DCMAKE_Swift_FLAGS="-sanitize=thread" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread -L$swift_libs -Wl,-rpath,$swift_libs -ldispatch -lBlocksRuntime" \
        >"$build/configure.log" 2>&1; then
      cat "$build/configure.log" >&2
      exit 1
    fi
  fi
  if ! cmake --build "$build" --target test_threads test_fuser test_loop test_gear test_closure_races test_loop_connection >"$build/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$build/build.log" | tail -40 >&2
    echo "tsan.sh: the C build failed" >&2
    failed+=("C build")
  else
    for t in test_threads test_fuser test_loop test_gear test_closure_races test_loop_connection; do
      log="$build/$t.log"
      "$build/Tests/C/$t" >"$log" 2>&1
      status=$?
      summary="$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -1)"
      echo "  $t: ${summary:-no summary} (exit status $status)"
      count_reports "$log"
      [ "$status" -eq 0 ] || { failed+=("$t"); grep "^FAIL" "$log" | head -10; }
    done
    # (c) Tests/Fuzz/stress_threads.c: random steps of threads over shared diffusers,
    # trees composed while their parts run, connections disposed while sources emit;
    # Tests/Fuzz/stress_loops.c: the same over shared loops (dispatches, jobs, observers,
    # feedbacks, sources, a gear, stops, starts, a dispose while the others go on).
    for stress in stress_threads stress_loops; do
      echo "== (c) Tests/Fuzz/$stress.c against the same library"
      if "$clang" -std=c11 -Wall -Wextra -g -O1 -fsanitize=thread "$root/Tests/Fuzz/$stress.c" \
          -I"$root/include" -L"$build" -ldiffuser -Wl,-rpath,"$build" \
          -L"$swift_libs" -Wl,-rpath,"$swift_libs" -ldispatch -lBlocksRuntime -lpthread \
          -o "$build/$stress" >"$build/$stress.build.log" 2>&1; then
        log="$build/$stress.log"
        timeout 900 "$build/$stress" "${STRESS_STEPS:-20000}" >"$log" 2>&1
        status=$?
        echo "  $(grep "^$stress: [0-9]" "$log" | tail -1 | sed "s/^$stress: //") (exit status $status)"
        count_reports "$log"
        [ "$status" -eq 0 ] || { failed+=("$stress"); grep "^$stress:" "$log" | head -10; }
      else
        grep -v "Cannot export local symbol" "$build/$stress.build.log" >&2
        failed+=("$stress build")
      fi
    done
  fi
fi

if [ "$do_swift" -eq 1 ]; then
  filter="${SWIFT_FILTER:-Concurrency|Lock|Thread|Race|SourceDelivery|SourceLifetime|SessionWait|SessionLifetime|ModelOwnership}"
  echo "== (a) swift test --sanitize=thread --filter '$filter' (.build-tsan)"
  log="$build/swift-test.log"
  (cd "$root" && "$swift" test --sanitize=thread --scratch-path .build-tsan --filter "$filter") >"$log" 2>&1
  status=$?
  executed="$(grep -E "Executed [0-9]+ tests" "$log" | tail -1 | sed 's/^ *//')"
  echo "  ${executed:-no test summary} (exit status $status)"
  if grep -q "Executed 0 tests" "$log"; then
    echo "  the filter matched no test" >&2
    failed+=("swift test: no tests")
  fi
  count_reports "$log"
  [ "$status" -eq 0 ] || { failed+=("swift test"); grep -E "error:|failed \(" "$log" | head -10; }
fi

if [ "$reports" -gt 0 ]; then
  failed+=("$reports ThreadSanitizer report(s)")
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "tsan.sh: FAILED: ${failed[*]} (logs in ${build#$root/}/)" >&2
  exit 1
fi
echo "tsan.sh: OK: no ThreadSanitizer report"
