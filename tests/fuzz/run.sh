#!/usr/bin/env bash
# Builds the fuzzers with clang++ (libFuzzer + ASan + UBSan) into ${BUILD_DIR:-<repo>/build}/fuzz and
# runs each for FUZZ_SECONDS (default 30):
#   fuzz_jute   what reads untrusted client bytes (seeds made from tests/jute/golden)
#   fuzz_state  what reads the log, the disk and peers, and the state machine that applies it
#   fuzz_wire   the peer transport's frames and handshake, AdminServer HTTP requests, 4lw
#   fuzz_config YAML, zoo.cfg, -D words, server.N specs, JAAS files
# Seeds: tests/fuzz/corpus/<fuzzer>/ (small, kept in the repo), the golden transcripts, conf/.
# FUZZERS="fuzz_wire fuzz_config" runs only those (tools/fuzz-all.sh runs them longer).
# Exits non-zero if a build fails or a fuzzer finds a crash; prints one summary line each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD_DIR:-$root/build}/fuzz
seconds=${FUZZ_SECONDS:-30}
mkdir -p "$out/corpus" "$out/seeds" "$out/corpus_state" "$out/corpus_wire" "$out/corpus_config" \
  "$out/seeds_config"
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$root")

# Only the sources each needs: the fuzzers are not part of the main g++ build.
clang++ "${flags[@]}" "$root/tests/fuzz/fuzz_jute.cc" "$root"/jute/*.cc -o "$out/fuzz_jute"
clang++ "${flags[@]}" "$root/tests/fuzz/fuzz_state.cc" "$root"/jute/*.cc "$root"/tree/*.cc \
  "$root"/session/*.cc "$root"/server/zk_state_machine*.cc "$root"/server/{txn,peer_message,membership_text,config_values}.cc \
  "$root"/consensus/{messages,storage_codec,storage_crc32c}.cc -lfmt -o "$out/fuzz_state"
config_sources=("$root"/server/config_keys*.cc "$root"/server/{config_file,config_values,zoo_cfg,yaml_config,system_properties,membership_text,tls_options}.cc)
# The admin commands reach the state machine (restore checks a state) and the trace mask.
clang++ "${flags[@]}" "$root/tests/fuzz/fuzz_wire.cc" "$root/consensus/peer_transport_frame.cc" \
  "$root"/server/zk_state_machine*.cc "$root"/server/{admin_commands,admin_json,four_letter_words,digest_auth,trace_mask,txn,peer_message}.cc \
  "${config_sources[@]}" "$root"/jute/*.cc "$root"/tree/*.cc "$root"/session/*.cc \
  -lyaml-cpp -lfmt -lssl -lcrypto -o "$out/fuzz_wire"
clang++ "${flags[@]}" "$root/tests/fuzz/fuzz_config.cc" "$root/server/jaas_file.cc" \
  "${config_sources[@]}" -lyaml-cpp -lfmt -lssl -lcrypto -o "$out/fuzz_config"

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
