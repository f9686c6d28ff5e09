#!/usr/bin/env bash
# Local zkraft ensemble on 127.0.0.1, configured exactly like a ZooKeeper ensemble (zoo.cfg with
# server.N=host:peerPort:electionPort;clientAddr:clientPort lines, dataDir/myid).
#
#   tools/ensemble.sh start N [BASEDIR]   N = 3 or 5; BASEDIR defaults to .data/ensemble
#   tools/ensemble.sh stop [BASEDIR]      stops exactly the PIDs in BASEDIR/pids
#   tools/ensemble.sh status [BASEDIR]    each member's srvr Mode line
#
# Member i (1..N) gets client port CLIENT_BASE+i-1 (default 2181), peer port PEER_BASE+i-1
# (default 2888) and election port ELECTION_BASE+i-1 (default 3888; zkraft accepts and ignores
# it). ZKRAFT_BIN picks the server binary (default build/server/zkraft-server). ZOO_CFG_EXTRA
# (newline-separated key=value lines) is appended to every member's zoo.cfg, e.g. snapCount=1000.
# Never kills anything but the PIDs it wrote itself.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ZKRAFT_BIN:-$root/build/server/zkraft-server}
client_base=${CLIENT_BASE:-2181}
peer_base=${PEER_BASE:-2888}
election_base=${ELECTION_BASE:-3888}

usage() {
  sed -n '5,8p' "$0" >&2
  exit 2
}

# Sends a four-letter word and prints the answer (empty if the member does not answer).
four_letter() {
  local port=$1 word=$2
  if command -v nc >/dev/null 2>&1; then
    printf '%s' "$word" | nc -q 1 -w 2 127.0.0.1 "$port" 2>/dev/null || true
  else
    exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || return 0
    printf '%s' "$word" >&3
    timeout 2 cat <&3 || true
    exec 3>&-
  fi
}

cmd_start() {
  local n=${1:-}
  local base=${2:-.data/ensemble}
  [[ $n == 3 || $n == 5 ]] || usage
  [[ -x $bin ]] || { echo "no server binary at $bin (run tools/build.sh or set ZKRAFT_BIN)" >&2; exit 1; }
  if [[ -s $base/pids ]]; then
    echo "$base/pids exists: stop that ensemble first (tools/ensemble.sh stop $base)" >&2
    exit 1
  fi
  mkdir -p "$base"
  base=$(cd "$base" && pwd)
  local i servers="" connect=""
  for ((i = 1; i <= n; i++)); do
    servers+="server.$i=127.0.0.1:$((peer_base + i - 1)):$((election_base + i - 1));127.0.0.1:$((client_base + i - 1))"$'\n'
    connect+="${connect:+,}127.0.0.1:$((client_base + i - 1))"
  done
  : >"$base/pids"
  for ((i = 1; i <= n; i++)); do
    local dir=$base/$i
    mkdir -p "$dir/data"
    echo "$i" >"$dir/data/myid"
    cat >"$dir/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$((client_base + i - 1))
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
$servers
${ZOO_CFG_EXTRA:-}
CFG
    "$bin" --config "$dir/zoo.cfg" </dev/null >>"$dir/server.log" 2>&1 &
    echo "$!" >>"$base/pids"
  done
  # Wait (up to 30 s) until some member reports a leader, so the printed string is usable.
  local t
  for ((t = 0; t < 300; t++)); do
    for ((i = 1; i <= n; i++)); do
      if four_letter $((client_base + i - 1)) srvr | grep -q '^Mode: leader'; then
        echo "$connect"
        return 0
      fi
    done
    sleep 0.1
  done
  echo "$connect"
  echo "warning: no leader reported within 30 s; see $base/*/server.log" >&2
}

cmd_stop() {
  local base=${1:-.data/ensemble}
  [[ -f $base/pids ]] || { echo "no $base/pids" >&2; exit 1; }
  local pid
  while read -r pid; do
    [[ -n $pid ]] || continue
    kill "$pid" 2>/dev/null || true
  done <"$base/pids"
  # Give each member 10 s to exit after SIGTERM, then SIGKILL that same PID.
  while read -r pid; do
    [[ -n $pid ]] || continue
    local t
    for ((t = 0; t < 100; t++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done <"$base/pids"
  rm -f "$base/pids"
}

cmd_status() {
  local base=${1:-.data/ensemble}
  [[ -f $base/pids ]] || { echo "no $base/pids" >&2; exit 1; }
  local i=0 pid
  while read -r pid; do
    [[ -n $pid ]] || continue
    i=$((i + 1))
    local port=$((client_base + i - 1)) state="running"
    kill -0 "$pid" 2>/dev/null || state="not running"
    local mode
    mode=$(four_letter "$port" srvr | grep '^Mode:' || true)
    echo "server.$i pid $pid ($state) 127.0.0.1:$port ${mode:-Mode: (no answer)}"
  done <"$base/pids"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) usage ;;
esac
