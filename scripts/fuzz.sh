#!/usr/bin/env bash
# Fuzzes the C API with libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer
# (Tests/Fuzz/fuzz_api.c: programs of API calls, see Tests/Fuzz/README.md).
#
#   scripts/fuzz.sh [--seconds N] [--fresh]
#
# Builds libdiffuser.so (Swift core with -sanitize=address and coverage) and the fuzzer
# into build-fuzz/ (incrementally), then fuzzes for N seconds (default 60) starting from
# the seed corpus Tests/Fuzz/corpus/, which is copied into build-fuzz/corpus/ (inputs
# found by earlier runs are kept there; --fresh starts from the seeds only). Prints the
# number of executions and the result; exits non-zero on a crash, a leak, a sanitizer
# report, an oracle failure or a hang (an input running longer than 60 s), leaving the
# input in build-fuzz/artifacts/.
#
# Environment: CLANG (default: the clang of the Swift toolchain), FUZZ_ARGS (more
# libFuzzer flags), FUZZ_API_ALLOW_NESTED=1 (look past a nested effect call, the symptom of
# Tests/Fuzz/repro/nested_merge.c).
set -euo pipefail

seconds=60
fresh=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#--seconds=}"; shift ;;
    --fresh) fresh=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: --seconds needs a number" >&2; exit 2 ;; esac

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"

# The Swift toolchain: swiftc on PATH, or /opt/swift.
swiftc="$(command -v swiftc || true)"
[ -n "$swiftc" ] || swiftc=/opt/swift/usr/bin/swiftc
if [ ! -x "$swiftc" ]; then
  echo "fuzz.sh: no Swift toolchain (swiftc) found" >&2
  exit 1
fi
toolchain_bin="$(dirname "$(readlink -f "$swiftc")")"
clang="${CLANG:-$toolchain_bin/clang}"
if [ ! -x "$clang" ]; then
  echo "fuzz.sh: the Swift toolchain has no clang at $clang (set CLANG)" >&2
  exit 1
fi
if ! ls "$(dirname "$toolchain_bin")"/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 &&
   ! ls "$(dirname "$toolchain_bin")"/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  echo "fuzz.sh: warning: no libFuzzer runtime found next to $clang; the link may fail" >&2
fi

# Build tools from Debian packages, if missing.
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
[ -e /usr/include/ffi.h ] || ls /usr/include/*/ffi.h >/dev/null 2>&1 || missing+=(libffi-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# Build (incremental).
mkdir -p "$build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root/Tests/Fuzz" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER="$clang" -DCMAKE_Swift_COMPILER="$swiftc" >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log" >&2
    exit 1
  }
fi
echo "fuzz.sh: building the sanitized library and the fuzzer in ${build#$root/}"
# The toolchain's gold warns about every ASan helper symbol it cannot export: noise.
if ! cmake --build "$build" --target fuzz_api >"$build/build.log" 2>&1; then
  grep -v "Cannot export local symbol" "$build/build.log" >&2
  echo "fuzz.sh: build failed" >&2
  exit 1
fi

# The working corpus: the seeds plus what earlier runs found.
corpus="$build/corpus"
artifacts="$build/artifacts"
[ "$fresh" -eq 0 ] || rm -rf "$corpus"
mkdir -p "$corpus" "$artifacts"
cp "$root"/Tests/Fuzz/corpus/* "$corpus"/

symbolizer="$toolchain_bin/llvm-symbolizer"
[ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"
export ASAN_SYMBOLIZER_PATH="$symbolizer"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

log="$build/fuzz.log"
echo "fuzz.sh: fuzzing for ${seconds}s from $(ls "$corpus" | wc -l) inputs (log: ${log#$root/})"
set +e
# timeout: a guard in case libFuzzer itself cannot stop (a deadlock in its exit path).
# shellcheck disable=SC2086
timeout --signal=KILL $((seconds + 300)) "$build/fuzz_api" \
  -max_total_time="$seconds" -timeout=60 -print_final_stats=1 -reload=0 \
  -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1
status=$?
set -e

runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
echo "fuzz.sh: ${runs:-?} executions in ${seconds}s (${rate:-?}/s), ${cov:-?} edges covered, corpus $(ls "$corpus" | wc -l) inputs"
if [ "$status" -eq 0 ]; then
  echo "fuzz.sh: result: OK (no crash, leak, sanitizer report or oracle failure)"
  exit 0
fi
artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
# The harness is single-threaded and deterministic: a timeout that the same input does not
# show again is the machine stalling (other work on a shared machine), not a hang.
if grep -q "ERROR: libFuzzer: timeout" "$log" && [ -n "$artifact" ] &&
   timeout 120 "$build/fuzz_api" -runs=3 "$artifact" >"$build/replay.log" 2>&1; then
  echo "fuzz.sh: warning: libFuzzer reported a timeout, but its input $artifact runs in" \
       "$(sed -n 's/^Executed .* in \([0-9]* ms\)$/\1/p' "$build/replay.log" | tail -1) on replay: the machine stalled" >&2
  echo "fuzz.sh: result: OK (no crash, leak, sanitizer report or oracle failure; fuzzing stopped early)"
  exit 0
fi
echo "fuzz.sh: result: FAILED (exit status $status)" >&2
grep -E "^fuzz_api:|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:" "$log" | head -20 >&2 || true
if [ -n "$artifact" ]; then
  echo "fuzz.sh: input: $artifact" >&2
  echo "fuzz.sh: replay: FUZZ_API_TRACE=1 $build/fuzz_api $artifact" >&2
  echo "fuzz.sh: shrink: $build/fuzz_api -minimize_crash=1 -max_total_time=60 $artifact" >&2
fi
echo "fuzz.sh: full log: $log" >&2
exit "$status"
