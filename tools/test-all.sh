#!/usr/bin/env bash
# One command: install what is missing, build everything, run every test (unit, simulation,
# real-client integration, differential, fuzz smoke), then build again with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-asan/ and run the unit and simulation tests there.
# SANITIZE=0 leaves the sanitizer pass out (a quicker local run; CI runs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
status=0
if [ -x "$root/tests/fuzz/run.sh" ]; then
  "$root/tests/fuzz/run.sh" || status=1
fi
(cd "$root/build" && ctest --output-on-failure --timeout 900 -j"${CTEST_JOBS:-2}") || status=1
if [ "${SANITIZE:-1}" != 0 ]; then
  asan=${ASAN_BUILD_DIR:-$root/build-asan}
  cmake -S "$root" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZKRAFT_SANITIZE=address,undefined >/dev/null
  cmake --build "$asan" -j"$(nproc)"
  # Unit and simulation tests; the integration suites start servers and stay in the main pass.
  (cd "$asan" && ctest --output-on-failure --timeout 900 -j"${CTEST_JOBS:-2}" -E 'integration|lint') || status=1
fi
exit $status
