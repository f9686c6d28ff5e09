#!/usr/bin/env bash
# One command per sanitizer build: configures build-<name>/ with the sanitizers, builds it and runs
# ctest there with the arguments given (default: the unit and simulation tests).
#   tools/sanitize.sh asan                 AddressSanitizer + UndefinedBehaviorSanitizer
#   tools/sanitize.sh tsan                 ThreadSanitizer
#   tools/sanitize.sh tsan -L integration  the real-client suites against a TSan zkraft-server
# A finding aborts the process that has it (halt_on_error), so the test that started it fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:?usage: tools/sanitize.sh asan|tsan [ctest arguments]}
shift
case "$kind" in
  asan) sanitizers=address,undefined ;;
  tsan) sanitizers=thread ;;
  *) echo "tools/sanitize.sh: unknown sanitizer build '$kind' (asan or tsan)" >&2; exit 2 ;;
esac
build=${SANITIZE_BUILD_DIR:-$root/build-$kind}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZKRAFT_SANITIZE="$sanitizers" >/dev/null
cmake --build "$build" -j"${JOBS:-$(nproc)}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
if [ $# -eq 0 ]; then set -- -E 'integration|lint'; fi
cd "$build" && ctest --output-on-failure --timeout 1800 -j"${CTEST_JOBS:-2}" "$@"
