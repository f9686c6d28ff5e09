#!/usr/bin/env bash
# Configures and builds the test tree, build-tests/ (TESTS_BUILD_DIR to change): the unit and
# simulation tests and the libFuzzer targets, built with clang++ at -O0 with AddressSanitizer and
# UndefinedBehaviorSanitizer (and -fsanitize=fuzzer-no-link, so that the fuzzers link the same
# libraries). Builds the targets given, by default `unit_tests fuzzers`.
#
# Why clang at -O0, in a tree of its own: CI has two cores and 40 minutes. Built with g++ at
# RelWithDebInfo, as before, the sanitized pass alone took ~48 of CI's 81 minutes (peer_transport.cc:
# 130 s against 27 s in Release); clang at -O0 compiles these sources in 0.7x the time g++ needs
# for Release (peer_transport.cc 19.6 s, request_pipeline_test.cc 14.3 s), and the fuzzers no
# longer compile the libraries a second time. The server itself is built by g++ (tools/build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${TESTS_BUILD_DIR:-$root/build-tests}
if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
  rm -rf "$dir"  # configured with another compiler: CMake cannot switch in place
fi
cmake -S "$root" -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  "-DCMAKE_CXX_FLAGS=-O0 -gline-tables-only" -DZKRAFT_SANITIZE=address,undefined -DZKRAFT_UNIT_TESTS=ON \
  -DZKRAFT_FUZZERS=ON -DZKRAFT_CORE_OPTIMIZE=-O1 >/dev/null
if [ $# -eq 0 ]; then set -- unit_tests fuzzers; fi
cmake --build "$dir" -j"$(nproc)" --target "$@"
