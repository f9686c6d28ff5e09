#!/usr/bin/env bash
# Runs every libFuzzer target for as long as asked, one after another on one core each:
#   tools/fuzz-all.sh [MINUTES_PER_FUZZER]   (default 60)
# The corpora grow in build-tests/fuzz/corpus* between runs, so a later run starts where this one
# stopped. Prints each fuzzer's runs and the CPU-hours in all; exits non-zero on a finding, whose
# input is in build-tests/fuzz/<fuzzer>-crash-*. .ci/run runs the same targets for 30 s each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-60}
start=$(date +%s)
status=0
FUZZ_SECONDS=$((minutes * 60)) "$root/tests/fuzz/run.sh" || status=$?
elapsed=$(( $(date +%s) - start ))
echo "fuzz-all: $(awk -v s="$elapsed" 'BEGIN { printf "%.2f", s / 3600 }') CPU-hours in all (one core, builds included)"
exit $status
