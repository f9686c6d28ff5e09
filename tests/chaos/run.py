#!/usr/bin/python3
"""One chaos run: an ensemble in network namespaces (cluster.py), the workloads as client
processes recording histories (worker.py), faults from a seed (nemesis.py), then every history
checked (linearizability.py, checkers.py). Prints one JSON summary line last:
{"seed", "servers", "ops", "faults", "violations", "lost", "crashes", "healed", "ok", "dir"}.
Exit status 0 when the run is clean, 1 when a checker found a violation, a server crashed or
the ensemble did not heal, 2 when the run could not be made (no namespaces, no root).

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/chaos/run.py --seed 7 [--servers 5]
        [--duration 25] [--keep] [--out DIR] [--faults kill_leader,isolate_one,...|none]
        [--sequence kill_leader,wipe,...]
        [--plain-reads] [--split-brain]

Needs root (namespaces, tmpfs mounts). Everything started is stopped by PID; everything made is
removed, except the run directory (histories, faults.jsonl, server logs, result.json) when the
run failed or --keep was given.
"""

import argparse
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkers  # noqa: E402
import history  # noqa: E402
import linearizability  # noqa: E402
from cluster import Cluster  # noqa: E402
from nemesis import Nemesis  # noqa: E402
import harness  # noqa: E402  (tests/integration, on the path through cluster.py)

SESSION_TIMEOUT = 4.0
MARGIN = 3.0  # expiry runs on ticks (500 ms), plus the observer's poll and a commit
SETTLE = 8.0  # after the last fault heals, the workloads run on this long
KEY_PERIOD, KEYS = 4.0, 3


class FencingStore(threading.Thread):
    """The store a lock holder writes to: it accepts a token at least the highest it accepted
    and rejects older ones; it logs every write in the order it serialised them. Listens on a
    Unix socket (not namespaced), so workers in the hub namespace reach it."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.top, self.log = path, None, []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.lock = threading.Lock()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    line = conn.recv(256).decode().split()
                    token, who = int(line[1]), line[2]
                    with self.lock:
                        ok = self.top is None or token >= self.top
                        if ok:
                            self.top = token
                        self.log.append({"token": token, "accepted": ok, "time": time.monotonic(),
                                         "process": who})
                    conn.sendall(b"OK\n" if ok else ("REJ %d\n" % self.top).encode())
                except (OSError, ValueError, IndexError):
                    pass

    def close(self):
        self.sock.close()


class Clients:
    """The worker processes: started, stopped, continued, killed and replaced by PID."""

    FAULTABLE = ("lock", "owner")

    def __init__(self, args, cluster, workdir, until, base, store_path):
        self.args, self.cluster, self.workdir = args, cluster, workdir
        self.until, self.base, self.store_path = until, base, store_path
        self.procs, self.kinds, self.generation = {}, {}, {}
        self.deaths, self.client_faults, self.stopped = [], [], {}
        self.store = None  # the FencingStore, set by main

    def start(self, kind, name):
        cmd = ["/usr/bin/python3", os.path.join(HERE, "worker.py"), kind, name,
               "--hosts", self.cluster.hosts(), "--out", os.path.join(self.workdir, "h-%s.jsonl" % name),
               "--until", repr(self.until), "--seed", str(self.args.seed),
               "--session-timeout", str(SESSION_TIMEOUT), "--store", self.store_path,
               "--base", repr(self.base), "--key-period", str(KEY_PERIOD), "--keys", str(KEYS)]
        if self.args.plain_reads:
            cmd.append("--plain-reads")
        if self.args.split_brain:
            cmd.append("--pin-hosts")
        log = open(os.path.join(self.workdir, "w-%s.log" % name), "ab")
        self.procs[name] = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
                                            preexec_fn=harness._die_with_parent)
        log.close()
        self.kinds[name] = kind

    def pick(self, rnd, holder_first=False):
        names = sorted(n for n, p in self.procs.items()
                       if self.kinds[n] in self.FAULTABLE and p.poll() is None and n not in self.stopped)
        if holder_first and self.store and self.store.log and rnd.random() < 0.7:
            # most often stop the process that wrote to the store last: likely the lock holder,
            # so its writes after it wakes test the fencing
            last = self.store.log[-1]["process"]
            if last in names:
                return last
        return rnd.choice(names) if names else None

    def kill(self, name):
        p = self.procs[name]
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        now = time.monotonic()
        self.deaths.append({"process": name, "start": now, "how": "kill -9"})
        self.client_faults.append({"process": name, "start": now, "end": float("inf")})

    def replace(self, name):
        base = name.split(".")[0]
        self.generation[base] = self.generation.get(base, 1) + 1
        if time.monotonic() < self.until - 1:
            self.start(self.kinds[name], "%s.%d" % (base, self.generation[base]))

    def stop(self, name):
        self.procs[name].send_signal(signal.SIGSTOP)
        self.stopped[name] = time.monotonic()

    def cont(self, name):
        start = self.stopped.pop(name)
        self.procs[name].send_signal(signal.SIGCONT)
        now = time.monotonic()
        self.deaths.append({"process": name, "start": start, "resumed": now, "how": "SIGSTOP"})
        self.client_faults.append({"process": name, "start": start, "end": now})

    def wait_all(self, timeout):
        """Wait for every worker to finish; kill the ones that do not. Owners that exit leave
        their sessions to expire: those exits are deaths too."""
        end = time.monotonic() + timeout
        hung = []
        for name, p in self.procs.items():
            if name in self.stopped:
                p.send_signal(signal.SIGCONT)
            try:
                p.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait(10)
                hung.append(name)
        return hung

    def kill_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait(10)


def prepare(cluster, epochs):
    """The znodes the workloads expect, made before the clock starts (on every server when
    they are not an ensemble)."""
    from kazoo.client import KazooClient
    for ids in ([[i] for i in cluster.ids] if cluster.split_brain else [None]):
        c = KazooClient(hosts=cluster.hosts(ids), timeout=10)
        c.start(timeout=30)
        for path in ("/reg", "/ids", "/set", "/eph", "/lock", "/watch"):
            c.ensure_path(path)
        c.create("/counter", b"0")
        for e in range(epochs):
            for k in range(KEYS):
                c.create("/reg/e%d-%d" % (e, k), b"0")
        for k in range(3):
            c.create("/watch/n%d" % k, b"")
        c.stop()
        c.close()


def check(workdir, store_log, deaths, client_faults, server_faults):
    def ops_of(pattern):
        return history.load(sorted(glob.glob(os.path.join(workdir, pattern))))

    misc = ops_of("h-misc*.jsonl")
    eph = [o for o in misc if o.get("kind") == "eph"] + ops_of("h-owner-*.jsonl") + ops_of("h-final-eph.jsonl")
    register = ops_of("h-register.jsonl")
    results = {
        "register": linearizability.check([o for o in register if o["f"] in ("read", "write", "cas")], initial=0),
        "ids": checkers.unique_ids([o for o in misc if o.get("kind") == "ids"]),
        "set": checkers.grow_only_set([o for o in misc if o.get("kind") == "set"]),
        "counter": checkers.counter([o for o in misc if o.get("kind") == "counter"]),
        "lock": checkers.fenced_lock(ops_of("h-lock-*.jsonl"), store_log, client_faults),
        "ephemerals": checkers.ephemerals(eph, deaths, server_faults, SESSION_TIMEOUT, MARGIN),
        "watches": checkers.watches(ops_of("h-watch.jsonl")),
    }
    everything = misc + register + eph + ops_of("h-lock-*.jsonl") + ops_of("h-watch.jsonl")
    n_ops = sum(1 for o in everything if o["f"] not in ("state", "event", "done"))
    r = results["register"]
    results["register"] = dict(r, valid=r["valid"], violations=r["failures"], lost=[])
    return results, n_ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--servers", type=int, choices=(3, 5), default=3)
    ap.add_argument("--duration", type=float, default=25.0, help="seconds of faults")
    ap.add_argument("--faults", help="comma-separated fault kinds (default: all)")
    ap.add_argument("--sequence", help="comma-separated fault kinds to do in this order, short ones")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--split-brain", action="store_true",
                    help="standalone servers posing as an ensemble (a self-check: must fail)")
    ap.add_argument("--plain-reads", action="store_true",
                    help="register reads without sync (a self-check: the checker should object)")
    ap.add_argument("--out", help="parent of the run directory (default: /tmp)")
    args = ap.parse_args()
    # SIGTERM (ctest's timeout, tools/chaos going away) ends the run through its cleanup.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    binary = os.environ.get("ZKRAFT_BIN")
    if not binary or not os.access(binary, os.X_OK):
        print("ZKRAFT_BIN must name the zkraft-server binary", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print(json.dumps({"seed": args.seed, "skipped": "needs root"}))
        return 2
    workdir = tempfile.mkdtemp(prefix="zkchaos-s%d-" % args.seed, dir=args.out)
    print("chaos run seed %d, %d servers, %.0f s of faults, in %s" % (args.seed, args.servers,
                                                                    args.duration, workdir), flush=True)
    cluster = Cluster(args.servers, workdir, binary, split_brain=args.split_brain)
    store = clients = nemesis = None
    summary = {"seed": args.seed, "servers": args.servers, "dir": workdir}
    status = 1
    try:
        try:
            cluster.setup()
        except Exception as e:
            summary["skipped"] = "cannot make namespaces: %s" % e
            status = 2
            return status
        if not cluster.wait_healthy(40):
            raise RuntimeError("the ensemble did not form")
        base = time.monotonic() + 2.0
        until = base + args.duration + SETTLE + 4
        prepare(cluster, int((until - base) / KEY_PERIOD) + 3)
        store_path = os.path.join(workdir, "store.sock")
        store = FencingStore(store_path)
        store.start()
        clients = Clients(args, cluster, workdir, until, base, store_path)
        clients.store = store
        for kind, name in [("register", "register"), ("misc", "misc"), ("watch", "watch"),
                           ("lock", "lock-1"), ("lock", "lock-2"), ("lock", "lock-3"),
                           ("owner", "owner-a"), ("owner", "owner-b")]:
            clients.start(kind, name)
        kinds = set(args.faults.split(",")) - {"none"} if args.faults else None
        nemesis = Nemesis(args.seed, cluster, clients, os.path.join(workdir, "faults.jsonl"),
                          SESSION_TIMEOUT, MARGIN, kinds,
                          sequence=args.sequence.split(",") if args.sequence else None)
        crashes = []
        fault_end = base + args.duration
        while time.monotonic() < fault_end:
            now = time.monotonic()
            nemesis.step(now)
            busy = nemesis.busy_servers()
            for i in cluster.ids:
                if not cluster.running(i) and i not in busy:
                    rc = cluster.procs[i].returncode
                    crashes.append({"server": i, "time": now, "returncode": rc})
                    nemesis.log({"kind": "server_exited", "target": "s%d" % i, "start": now,
                                 "detail": "exit status %s: restarted" % rc})
                    cluster.start(i)
            time.sleep(0.1)
        nemesis.heal_all()
        healed_at = time.monotonic()
        healed = cluster.wait_healthy(40)
        print("  healed %s after %.1f s" % ("ok" if healed else "NOT", time.monotonic() - healed_at), flush=True)
        hung = clients.wait_all(max(5.0, until - time.monotonic()) + 90)
        for name, p in clients.procs.items():
            if clients.kinds[name] == "owner" and name not in hung and not any(
                    d["process"] == name and "resumed" not in d for d in clients.deaths):
                clients.deaths.append({"process": name, "start": until, "how": "exit without close"})
        last_death = max([d["start"] for d in clients.deaths] + [until])
        time.sleep(max(0.0, last_death + SESSION_TIMEOUT + MARGIN + 1 - time.monotonic()))
        clients.start("final-eph", "final-eph")
        clients.procs["final-eph"].wait(90)
        server_faults = [{"start": f["start"], "end": f["end"]} for f in nemesis.done
                         if f["kind"] not in ("kill_client", "pause_client")]
        server_faults += [{"start": c["time"], "end": c["time"] + 5} for c in crashes]
        results, n_ops = check(workdir, store.log, clients.deaths, clients.client_faults, server_faults)
        violations = sum(len(r["violations"]) for r in results.values())
        lost = sum(len(r["lost"]) for r in results.values())
        unknown = results["register"]["valid"] is None
        summary.update(ops=n_ops, faults=len(nemesis.done), violations=violations, lost=lost,
                       crashes=len(crashes), healed=healed, hung_workers=hung, register_unknown=unknown,
                       checks={k: {x: y for x, y in v.items() if x not in ("violations", "lost", "failures")}
                               for k, v in results.items()})
        with open(os.path.join(workdir, "result.json"), "w") as f:
            json.dump(dict(summary, details=results, deaths=clients.deaths, store=store.log,
                           crash_list=crashes), f, indent=1, default=str)
        for name, r in results.items():
            for v in (r["violations"] + r["lost"])[:5]:
                print("  VIOLATION %s: %s" % (name, json.dumps(v, default=str)[:600]), flush=True)
        status = 0 if (violations == 0 and lost == 0 and not crashes and healed and not hung) else 1
    except (Exception, SystemExit):
        traceback.print_exc()
        summary["error"] = traceback.format_exc().splitlines()[-1]
        status = 1
    finally:
        if clients:
            clients.kill_all()
        if store:
            store.close()
        cluster.close()
        summary["ok"] = status == 0
        # a split brain fails by design: its directory is kept only when asked for
        if (status == 0 or args.split_brain) and not args.keep or summary.get("skipped"):
            shutil.rmtree(workdir, ignore_errors=True)
            summary["dir"] = None
        print(json.dumps(summary, default=str), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
