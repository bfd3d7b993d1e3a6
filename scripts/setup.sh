#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, when they are missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

need=()
command -v cmake >/dev/null 2>&1        || need+=(cmake)
command -v ninja >/dev/null 2>&1        || need+=(ninja-build)
command -v gradle >/dev/null 2>&1       || need+=(gradle)
command -v pkg-config >/dev/null 2>&1   || need+=(pkg-config)
command -v valgrind >/dev/null 2>&1     || need+=(valgrind)
command -v g++ >/dev/null 2>&1          || need+=(g++)
[ -f /usr/include/ffi.h ] || [ -f /usr/include/x86_64-linux-gnu/ffi.h ] || need+=(libffi-dev)
[ -f /usr/include/jansson.h ]           || need+=(libjansson-dev)
[ -f /usr/share/java/junit4.jar ]       || need+=(junit4)
[ -f /usr/share/java/gson.jar ]         || need+=(libgoogle-gson-java)

if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: need root to apt-get install ${need[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
