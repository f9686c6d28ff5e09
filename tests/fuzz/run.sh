#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt, in build-tests/ by tools/build-tests.sh,
# clang++ with ASan and UBSan; FUZZ_NO_BUILD=1 when they are built already) and runs each for
# FUZZ_SECONDS (default 30):
#   fuzz_jute   what reads untrusted client bytes (seeds made from tests/jute/golden)
#   fuzz_state  what reads the log, the disk and peers, and the state machine that applies it
#   fuzz_wire   the peer transport's frames and handshake, AdminServer HTTP requests, 4lw
#   fuzz_config YAML, zoo.cfg, -D words, server.N specs, JAAS files
# Seeds: tests/fuzz/corpus/<fuzzer>/ (small, kept in the repo), the golden transcripts, conf/.
# The corpora grow in build-tests/fuzz/. FUZZERS="fuzz_wire fuzz_config" runs only those
# (tools/fuzz-all.sh runs them longer). Exits non-zero if a build fails or a fuzzer finds a
# crash; prints one summary line each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree=${TESTS_BUILD_DIR:-$root/build-tests}
out=$tree/fuzz
seconds=${FUZZ_SECONDS:-30}
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  TESTS_BUILD_DIR=$tree "$root/tools/build-tests.sh" fuzzers
fi
mkdir -p "$out/corpus" "$out/seeds" "$out/corpus_state" "$out/corpus_wire" "$out/corpus_config" \
  "$out/seeds_config"
for f in fuzz_jute fuzz_state fuzz_wire fuzz_config; do
  ln -sf "$tree/tests/fuzz/$f" "$out/$f"
done

python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" "$root/tests/fuzz/make_seeds.py" "$root/tests/jute/golden" "$out/seeds" >/dev/null
# The example configs as seeds: mode byte 0 is YAML, 1 is zoo.cfg (see fuzz_config.cc).
for f in "$root"/conf/*.yaml; do { printf '\x00'; cat "$f"; } >"$out/seeds_config/$(basename "$f")"; done
for f in "$root"/conf/*.cfg; do { printf '\x01'; cat "$f"; } >"$out/seeds_config/$(basename "$f")"; done

failed=0
run() {  # name corpus...
  local name=$1
  shift
  local log="$out/$name.log" status=0
  (cd "$out" && "./$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/$name-" "$@") >"$log" 2>&1 || status=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ "$status" -ne 0 ]; then
    grep -E 'ERROR|SUMMARY|runtime error|deadly signal|property' "$log" | head -5 >&2 || true
    echo "$name: FAILED (exit $status) after $runs runs; log $log; crash input in $out/$name-crash-*" >&2
    failed=1
    return
  fi
  echo "$name: ok, $runs runs in ${seconds}s, corpus $(ls "$out/$1" | wc -l) inputs, no crash"
}
wanted=${FUZZERS:-fuzz_jute fuzz_state fuzz_wire fuzz_config}
want() { [[ " $wanted " == *" $1 "* ]]; }
want fuzz_jute && run fuzz_jute corpus seeds
want fuzz_state && run fuzz_state corpus_state
want fuzz_wire && run fuzz_wire corpus_wire "$root/tests/fuzz/corpus/fuzz_wire"
want fuzz_config && run fuzz_config corpus_config seeds_config "$root/tests/fuzz/corpus/fuzz_config"
exit $failed
