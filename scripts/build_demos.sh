#!/usr/bin/env bash
# Builds the C and Java login demos into OUT, the way a user would:
# the C demo with pkg-config against an installed copy of libdiffuser (OUT/prefix),
# the Java demo against the built jar.
#
#   bash scripts/build_demos.sh OUT
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath "${1:?usage: build_demos.sh OUT}")
mkdir -p "$out"

cmake -S . -B build -G Ninja > /dev/null
ninja -C build diffuser > /dev/null
cmake --install build --prefix "$out/prefix" > /dev/null
export PKG_CONFIG_PATH="$out/prefix/lib/pkgconfig"
cc -Wall -Wextra examples/c/login_demo.c $(pkg-config --cflags --libs diffuser) \
    -Wl,-rpath,"$out/prefix/lib" -o "$out/login_demo_c"

(cd java && gradle --offline --no-daemon -q jar examplesJar)
cp java/build/libs/diffuser-0.1.0.jar "$out/diffuser.jar"
cp java/build/libs/diffuser-examples-0.1.0.jar "$out/diffuser-examples.jar"
