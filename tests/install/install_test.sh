#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/install against it with
# find_package(bitsift), and runs the result. Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S "$SRC/tests/install" -B "$WORK/build" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DEXAMPLE_SOURCE="$SRC/examples/embed.cc" >/dev/null
cmake --build "$WORK/build" >/dev/null
"$WORK/build/consumer" "$WORK/example.bitsift" | tee "$WORK/out"
grep -q "notes/zh.txt" "$WORK/out"
# The public headers are installed, and nothing else: the umbrella, one header per concept and
# the configured version.h.
want="bitsift.h build.h document.h index.h lines.h query.h shards.h status.h tokenize.h version.h"
got=$(cd "$WORK/prefix/include" && find . -type f | sed 's|^./bitsift/||' | sort | tr '\n' ' ')
[ "$got" == "$want " ] || { echo "installed headers: $got; expected: $want"; exit 1; }
grep -q "define BITSIFT_VERSION_STRING \"[0-9]*\.[0-9]*\.[0-9]*\"" "$WORK/prefix/include/bitsift/version.h"
echo "install test passed"
