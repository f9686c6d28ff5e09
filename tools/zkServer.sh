#!/usr/bin/env bash
# zkServer.sh for zkraft: ZooKeeper's bin/zkServer.sh verbs, environment, output lines and exit
# codes, running zkraft-server instead of java, so a test rig or an init script written for
# ZooKeeper's script runs zkraft by changing one path.
#
#   tools/zkServer.sh [--config <conf-dir>] {start|start-foreground|stop|restart|status|print-cmd|version} [config]
#
# As in ZooKeeper (3.9 bin/zkServer.sh + zkEnv.sh):
#   ZOOCFGDIR    the config directory (default: ../conf beside this script; --config DIR sets it)
#   ZOOCFG       the config file name in it (default zoo.cfg); a second argument replaces it, and a
#                second argument that is a path elsewhere is used as it is
#   ZOO_LOG_DIR  where the server's output goes (default ../logs beside this script), in
#                zookeeper-$USER-server-$HOSTNAME.out
#   ZOOPIDFILE   the pid file (default <dataDir>/zookeeper_server.pid)
#   SERVER_JVMFLAGS, JVMFLAGS   -Dname=value words zkraft reads as ZooKeeper's system properties
#   $ZOOCFGDIR/zookeeper-env.sh and $ZOOCFGDIR/java.env are sourced when present.
# zkraft's own: ZKRAFT_SERVER, the zkraft-server binary (default: found beside this script, in the
# build directory, or on PATH). The config may be a zoo.cfg or zkraft's YAML.
#
# Exit codes and lines as ZooKeeper's: start prints "Starting zookeeper ... STARTED" (0), or
# "already running as process N." / "FAILED TO START" (1); stop prints "Stopping zookeeper ...
# STOPPED" or "no zookeeper to stop (could not find file F)" and exits 0 either way; status asks
# the server with srvr and prints its "Mode: ..." line (0) or "Error contacting service. It is
# probably not running." (1). Unlike ZooKeeper's, stop waits (up to ZOO_STOP_TIMEOUT seconds,
# default 30) until the process has exited, so a restart never finds the old one still running.

ZOOBIN="${BASH_SOURCE-$0}"
ZOOBIN="$(dirname "${ZOOBIN}")"
ZOOBINDIR="$(cd "${ZOOBIN}" || exit 1; pwd)"
ZOOKEEPER_PREFIX="${ZOOBINDIR}/.."

# zkEnv.sh: --config <conf-dir> as the first two arguments.
if [ $# -gt 1 ] && [ "--config" = "$1" ]; then
  shift
  ZOOCFGDIR=$1
  shift
fi
if [ "x$ZOOCFGDIR" = "x" ]; then
  if [ -e "${ZOOKEEPER_PREFIX}/conf" ]; then
    ZOOCFGDIR="$ZOOBINDIR/../conf"
  else
    ZOOCFGDIR="$ZOOBINDIR/../etc/zookeeper"
  fi
fi
export ZOOCFGDIR  # so restart's own stop and start see the same directory
if [ -f "${ZOOCFGDIR}/zookeeper-env.sh" ]; then
  . "${ZOOCFGDIR}/zookeeper-env.sh"
fi
if [ "x$ZOOCFG" = "x" ]; then
  ZOOCFG="zoo.cfg"
fi
ZOOCFG="$ZOOCFGDIR/$ZOOCFG"
if [ -f "$ZOOCFGDIR/java.env" ]; then
  . "$ZOOCFGDIR/java.env"
fi
if [ "x${ZOO_LOG_DIR}" = "x" ]; then
  ZOO_LOG_DIR="$ZOOKEEPER_PREFIX/logs"
fi

# The server binary: $ZKRAFT_SERVER, else beside this script, in a build directory, on PATH.
if [ -z "$ZKRAFT_SERVER" ]; then
  for candidate in "$ZOOBINDIR/zkraft-server" "$ZOOKEEPER_PREFIX/build/server/zkraft-server" \
                   "$ZOOKEEPER_PREFIX"/build*/server/zkraft-server; do
    if [ -x "$candidate" ]; then
      ZKRAFT_SERVER="$candidate"
      break
    fi
  done
fi
if [ -z "$ZKRAFT_SERVER" ]; then
  ZKRAFT_SERVER="$(command -v zkraft-server)"
fi
if [ -z "$ZKRAFT_SERVER" ] || [ ! -x "$ZKRAFT_SERVER" ]; then
  echo "Error: zkraft-server not found: build it (tools/build.sh) or set ZKRAFT_SERVER." 1>&2
  exit 1
fi
export SERVER_JVMFLAGS JVMFLAGS  # zkraft-server reads their -D words

echo "zkraft: ZooKeeper-compatible server $ZKRAFT_SERVER" >&2

if [ "x$2" != "x" ]; then
  ZOOCFG="$ZOOCFGDIR/$2"
fi
# if we give a more complicated path to the config, don't screw around in $ZOOCFGDIR
if [ "x$(dirname "$ZOOCFG")" != "x$ZOOCFGDIR" ]; then
  ZOOCFG="$2"
fi

echo "Using config: $ZOOCFG" >&2

# A key's value in the config: zoo.cfg `key=value`, or zkraft's YAML `yaml_key: value`.
config_value() {  # zoo_key yaml_key
  local v
  v="$(grep "^[[:space:]]*$1[^[:alpha:]]" "$ZOOCFG" 2>/dev/null | grep "=" | tail -n 1 | sed -e 's/[^=]*=//')"
  if [ -z "$v" ] && [ -n "$2" ]; then
    v="$(grep "^[[:space:]]*$2[[:space:]]*:" "$ZOOCFG" 2>/dev/null | tail -n 1 | sed -e 's/[^:]*:[[:space:]]*//' -e 's/[[:space:]]*#.*$//' -e 's/^"\(.*\)"$/\1/')"
  fi
  echo "$v" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

ZOO_DATADIR="$(config_value dataDir data_dir)"

# iff autocreate is turned off and the data dir does not exist fail immediately
if [ -n "$ZOO_DATADIR_AUTOCREATE_DISABLE" ] && [ ! -d "$ZOO_DATADIR" ]; then
  echo "ZooKeeper data directory is missing at $ZOO_DATADIR fix the path or run initialize"
  exit 1
fi

if [ -z "$ZOOPIDFILE" ]; then
  if [ ! -d "$ZOO_DATADIR" ]; then
    mkdir -p "$ZOO_DATADIR"
  fi
  ZOOPIDFILE="$ZOO_DATADIR/zookeeper_server.pid"
else
  # ensure it exists, otw stop will fail
  mkdir -p "$(dirname "$ZOOPIDFILE")"
fi

if [ ! -w "$ZOO_LOG_DIR" ]; then
  mkdir -p "$ZOO_LOG_DIR"
fi

ZOO_LOG_FILE=${ZOO_LOG_FILE:-zookeeper-$USER-server-$HOSTNAME.log}
_ZOO_DAEMON_OUT="$ZOO_LOG_DIR/zookeeper-$USER-server-$HOSTNAME.out"

# Whether process $1 runs. A zombie does not (some containers' init never reaps the server once
# the shell that started it has gone).
alive() {
  kill -0 "$1" > /dev/null 2>&1 || return 1
  if [ -r "/proc/$1/stat" ]; then
    [ "$(sed -e 's/^.*) //' "/proc/$1/stat" 2> /dev/null | cut -c1)" != "Z" ]
  fi
}

# The four-letter word `srvr` on address:port; its output, or nothing.
srvr() {
  timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf srvr >&3 && cat <&3' _ "$1" "$2" 2>/dev/null
}

case $1 in
start)
  echo -n "Starting zookeeper ... "
  if [ -f "$ZOOPIDFILE" ]; then
    if alive "$(cat "$ZOOPIDFILE")"; then
      echo "already running as process $(cat "$ZOOPIDFILE")."
      exit 1
    fi
  fi
  nohup "$ZKRAFT_SERVER" --config "$ZOOCFG" > "$_ZOO_DAEMON_OUT" 2>&1 < /dev/null &
  if [ $? -eq 0 ]; then
    if /bin/echo -n $! > "$ZOOPIDFILE"; then
      sleep 1
      pid=$(cat "${ZOOPIDFILE}")
      if alive "${pid}"; then
        echo STARTED
      else
        echo FAILED TO START
        exit 1
      fi
    else
      echo FAILED TO WRITE PID
      exit 1
    fi
  else
    echo SERVER DID NOT START
    exit 1
  fi
  ;;
start-foreground)
  ZOO_CMD=(exec "$ZKRAFT_SERVER")
  if [ "${ZOO_NOEXEC}" != "" ]; then
    ZOO_CMD=("$ZKRAFT_SERVER")
  fi
  "${ZOO_CMD[@]}" --config "$ZOOCFG"
  ;;
print-cmd)
  echo "SERVER_JVMFLAGS=\"$SERVER_JVMFLAGS\" JVMFLAGS=\"$JVMFLAGS\" \"$ZKRAFT_SERVER\" --config \"$ZOOCFG\" > \"$_ZOO_DAEMON_OUT\" 2>&1 < /dev/null"
  ;;
stop)
  echo -n "Stopping zookeeper ... "
  if [ ! -f "$ZOOPIDFILE" ]; then
    echo "no zookeeper to stop (could not find file $ZOOPIDFILE)"
  else
    pid=$(cat "$ZOOPIDFILE")
    kill $pid
    rm "$ZOOPIDFILE"
    # SIGTERM makes zkraft finish what it is writing and exit; wait for it.
    waited=0
    while alive $pid && [ $waited -lt $((${ZOO_STOP_TIMEOUT:-30} * 10)) ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    echo STOPPED
  fi
  exit 0
  ;;
version)
  "$ZKRAFT_SERVER" --version 2> /dev/null
  ;;
restart)
  shift
  "$0" stop "$@"
  sleep 3
  "$0" start "$@"
  ;;
status)
  isSSL="false"
  clientPortAddress="$(config_value clientPortAddress client_address)"
  if ! [ $clientPortAddress ]; then
    clientPortAddress="localhost"
  fi
  clientPort="$(config_value clientPort client_port)"
  case "$ZOOCFG" in
    *.yaml|*.yml)  # zkraft's YAML defaults, where zoo.cfg has none
      [ -n "$clientPort" ] || clientPort=2181
      [ "$clientPortAddress" != "localhost" ] || clientPortAddress=127.0.0.1
      ;;
  esac
  if ! [[ "$clientPort" =~ ^[0-9]+$ ]]; then
    dataDir="$ZOO_DATADIR"
    myid=`cat "$dataDir/myid" 2> /dev/null`
    if ! [[ "$myid" =~ ^[0-9]+$ ]]; then
      echo "myid could not be determined, will not able to locate clientPort in the server configs."
    else
      clientPortAndAddress=`grep "^[[:space:]]*server.$myid=.*;.*" "$ZOOCFG" | sed -e 's/.*=//' | sed -e 's/.*;//'`
      if [ ! "$clientPortAndAddress" ]; then
        echo "Client port not found in the server configs"
      else
        if [[ "$clientPortAndAddress" =~ ^.*:[0-9]+ ]]; then
          if [[ "$clientPortAndAddress" =~ \[.*\]:[0-9]+ ]]; then
            clientPortAddress=`echo "$clientPortAndAddress" | sed -e 's|\[||' | sed -e 's|\]:.*||'`
          else
            clientPortAddress=`echo "$clientPortAndAddress" | sed -e 's/:.*//'`
          fi
        fi
        clientPort=`echo "$clientPortAndAddress" | sed -e 's/.*://'`
      fi
    fi
  fi
  if [ ! "$clientPort" ]; then
    echo "Client port not found. Looking for secureClientPort in the static config."
    echo "Unable to find either secure or unsecure client port in any configs. Terminating."
    exit 1
  fi
  echo "Client port found: $clientPort. Client address: $clientPortAddress. Client SSL: $isSSL."
  STAT=`srvr "$clientPortAddress" "$clientPort" | grep Mode`
  if [ "x$STAT" = "x" ] && [ "$clientPortAddress" = "localhost" ]; then
    STAT=`srvr 127.0.0.1 "$clientPort" | grep Mode`  # localhost may name ::1 first
  fi
  if [ "x$STAT" = "x" ]; then
    echo "Error contacting service. It is probably not running."
    exit 1
  else
    echo $STAT
    exit 0
  fi
  ;;
*)
  echo "Usage: $0 [--config <conf-dir>] {start|start-foreground|stop|version|restart|status|print-cmd}" >&2

esac
