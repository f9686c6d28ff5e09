#!/usr/bin/env bash
# Builds the jute fuzzer with clang++ (libFuzzer + ASan + UBSan) into ${BUILD_DIR:-<repo>/build}/fuzz
# and runs it for FUZZ_SECONDS (default 30) over seeds made from tests/jute/golden.
# Exits non-zero if the build fails or the fuzzer finds a crash; prints one summary line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD_DIR:-$root/build}/fuzz
seconds=${FUZZ_SECONDS:-30}
mkdir -p "$out/corpus" "$out/seeds"

# Only the jute sources: the fuzzer is not part of the main g++ build.
clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$root" "$root/tests/fuzz/fuzz_jute.cc" "$root"/jute/*.cc -o "$out/fuzz_jute"

python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" "$root/tests/fuzz/make_seeds.py" "$root/tests/jute/golden" "$out/seeds" >/dev/null

log="$out/fuzz.log"
status=0
(cd "$out" && ./fuzz_jute -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$out/" corpus seeds) >"$log" 2>&1 || status=$?

runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
corpus=$(ls "$out/corpus" | wc -l)
if [ "$status" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" | head -5 >&2 || true
  echo "fuzz_jute: FAILED (exit $status) after $runs runs; log $log; crash input in $out/crash-*" >&2
  exit 1
fi
echo "fuzz_jute: ok, $runs runs in ${seconds}s, corpus $corpus inputs, no crash"
