#!/usr/bin/env bash
# One command: install what is missing, build, start a standalone zkraft on 127.0.0.1:2181.
# Data goes to ${ZKRAFT_DATA_DIR:-./.data/standalone}. Extra arguments go to zkraft-server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh" --target zkraft-server
data=${ZKRAFT_DATA_DIR:-$root/.data/standalone}
mkdir -p "$data"
exec "$root/build/server/zkraft-server" --config "$root/conf/standalone.yaml" --data-dir "$data" "$@"
