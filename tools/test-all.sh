#!/usr/bin/env bash
# One command: install what is missing, build everything, run every test (unit, simulation,
# real-client integration, differential, fuzz smoke).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
status=0
if [ -x "$root/tests/fuzz/run.sh" ]; then
  "$root/tests/fuzz/run.sh" || status=1
fi
(cd "$root/build" && ctest --output-on-failure --timeout 900 -j"${CTEST_JOBS:-2}") || status=1
exit $status
