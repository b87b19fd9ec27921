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
# Only the umbrella header is installed.
[ "$(find "$WORK/prefix/include" -type f | wc -l)" -eq 1 ]
echo "install test passed"
