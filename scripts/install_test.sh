#!/usr/bin/env bash
# install_test.sh BUILD_DIR — installs a built tree into a temporary prefix and uses it
# the two ways a consumer would:
#   1. compile a tiny C program with `pkg-config --cflags --libs diffuser`;
#   2. configure a tiny CMake project with find_package(Diffuser REQUIRED) that links
#      Diffuser::diffuser.
# Both must build and run against the installed library. Also checks that the installed
# library does not need any Swift runtime library (libswift*): the runtime is static.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/diffuser-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cc=${CC:-cc}

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
sed 's/^/   /' "$work/install.log"

lib=$(find "$prefix" -name 'libdiffuser.so' | head -n 1)
pc=$(find "$prefix" -name 'diffuser.pc' | head -n 1)
[ -n "$lib" ] || fail "libdiffuser.so is not installed"
[ -n "$pc" ] || fail "diffuser.pc is not installed"
[ -f "$prefix/include/diffuser.h" ] || fail "include/diffuser.h is not installed"
[ -n "$(find "$prefix" -name DiffuserConfig.cmake)" ] || fail "DiffuserConfig.cmake is not installed"
supp="$prefix/share/diffuser/valgrind.supp"
[ -f "$supp" ] || fail "share/diffuser/valgrind.supp is not installed"
libdir=$(dirname "$lib")

step "readelf -d $lib: no libswift* NEEDED"
readelf -d "$lib" | grep NEEDED | sed 's/^/   /'
if readelf -d "$lib" | grep NEEDED | grep -qi 'libswift'; then
    fail "the installed library needs a Swift runtime library"
fi
step "exported symbols are the C API only"
# Global symbols only (upper-case types): a thread-local variable of the library's own
# appears in the dynamic symbol table as a local symbol, visible to nothing outside.
others=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}' | grep -v '^dfs_' || true)
[ -z "$others" ] || fail "symbols outside the dfs_ API are exported: $others"
echo "   $(nm -D --defined-only "$lib" | grep -c ' dfs_') dfs_* symbols, nothing else"

# The consumer: uses the C API a little and checks the versions.
cat >"$work/consumer.c" <<'EOF'
#include <diffuser.h>
#include <stdio.h>
#include <string.h>

static int renders;

static int render(const void *value, void *ctx) {
    (void)ctx;
    printf("   render %s\n", (const char *)value);
    renders++;
    return 0;
}

int main(void) {
    if (dfs_abi_version() != DFS_ABI_VERSION) {
        fprintf(stderr, "ABI mismatch: library %d, header %d\n", dfs_abi_version(), DFS_ABI_VERSION);
        return 1;
    }
    dfs_diffuser *d = NULL;
    if (dfs_diffuser_into(dfs_type_cstring(), render, NULL, NULL, &d) != DFS_OK) return 1;
    dfs_diffuser_run(d, "hello");
    dfs_diffuser_run(d, "hello");
    dfs_diffuser_run(d, "world");
    dfs_diffuser_release(d);
    printf("   libdiffuser %s, ABI %d: %d renders\n", dfs_version(), dfs_abi_version(), renders);
    return renders == 2 ? 0 : 1;
}
EOF

step "pkg-config consumer"
export PKG_CONFIG_PATH="$(dirname "$pc")"
flags=$(pkg-config --cflags --libs diffuser) || fail "pkg-config does not find diffuser"
echo "   pkg-config --cflags --libs diffuser: $flags"
incdir=$(pkg-config --variable=includedir diffuser)
real_incdir=$(cd "$incdir" 2>/dev/null && pwd -P) || fail "pkg-config's includedir $incdir does not exist"
case "$real_incdir" in
    "$(cd "$prefix" && pwd -P)"/*) echo "   includedir resolves to $real_incdir" ;;
    *) fail "pkg-config's includedir ($real_incdir) is not inside the install prefix" ;;
esac
# As the README builds it: the library found at run time through the rpath that
# pkg-config's libdir gives, with no LD_LIBRARY_PATH.
pclibdir=$(pkg-config --variable=libdir diffuser)
# shellcheck disable=SC2086
"$cc" -Wall -Wextra -o "$work/consumer" "$work/consumer.c" $flags -Wl,-rpath,"$pclibdir" ||
    fail "compiling with pkg-config flags"
"$work/consumer" || fail "the pkg-config consumer failed"
if ldd "$work/consumer" >/dev/null 2>&1; then
    loaded=$(ldd "$work/consumer" | awk '/libdiffuser/ {print $3}')
    [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$lib")" ] ||
        fail "the consumer did not load the installed library (it loads '$loaded')"
fi
if command -v valgrind >/dev/null 2>&1; then
    step "the consumer under valgrind, with the installed suppressions"
    valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=9 \
        --suppressions="$supp" "$work/consumer" >/dev/null ||
        fail "valgrind reports errors or leaks in the consumer with $supp"
    echo "   no errors, no leaks"
fi

step "CMake consumer: find_package(Diffuser REQUIRED), Diffuser::diffuser"
mkdir -p "$work/cmake-consumer"
cp "$work/consumer.c" "$work/cmake-consumer/consumer.c"
cat >"$work/cmake-consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(DiffuserConsumer LANGUAGES C)
find_package(Diffuser 0.1 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE Diffuser::diffuser)
EOF
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cmake -S "$work/cmake-consumer" -B "$work/cmake-consumer/build" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; fail "configuring the CMake consumer"; }
grep -i "Diffuser" "$work/cmake-consumer/build/CMakeCache.txt" | grep -i "Diffuser_DIR" | sed 's/^/   /'
cmake --build "$work/cmake-consumer/build" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; fail "building the CMake consumer"; }
LD_LIBRARY_PATH="$libdir" "$work/cmake-consumer/build/consumer" || fail "the CMake consumer failed"

echo "install test: OK"
