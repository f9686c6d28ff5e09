#!/usr/bin/env bash
# Configures and builds zkraft into build/ (Release by default: BUILD_TYPE=Debug to change).
# UNIT_TESTS=OFF leaves the unit tests out (tools/test-all.sh builds them in build-tests/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DZKRAFT_UNIT_TESTS="${UNIT_TESTS:-ON}" >/dev/null
cmake --build "$build" -j"$(nproc)" "$@"
