#!/usr/bin/env bash
# One command: install what is missing, build, run every test.
#   build/        g++ Release: the server, tools and benchmarks; the integration suites, lint and
#                 the Python tests run there against the real server.
#   build-tests/  clang++ -O0 with AddressSanitizer and UndefinedBehaviorSanitizer
#                 (tools/build-tests.sh): the unit and simulation tests, and the fuzz smoke.
# The unit tests are built only in build-tests/: compiling them twice did not fit CI's two cores
# in 40 minutes. SANITIZE=0 instead builds them in build/ (Release) and leaves build-tests/ and
# the fuzzers out: a quicker local run, not what CI runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
jobs=${CTEST_JOBS:-2}
status=0
if [ "${SANITIZE:-1}" != 0 ]; then
  UNIT_TESTS=OFF "$root/tools/build.sh"
  "$root/tools/build-tests.sh" unit_tests fuzzers
  tests=${TESTS_BUILD_DIR:-$root/build-tests}
  (cd "$tests" && ctest --output-on-failure --timeout 900 -j"$jobs" -L unit) || status=1
  FUZZ_NO_BUILD=1 "$root/tests/fuzz/run.sh" || status=1
else
  "$root/tools/build.sh"
fi
(cd "$root/build" && ctest --output-on-failure --timeout 900 -j"$jobs") || status=1
exit $status
