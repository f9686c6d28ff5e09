"""compare.py's parts that are not the ops x shapes matrix: the leader kill under writes, memory
after many znodes, and restart to serving (restart_bench.py)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from bench_run import record, zk_load
from bench_servers import ZK_HEAP, ensemble, four_letter, hosts, loadavg, mode, rss_kib, split_kind, standalone, stop_all


SETTLED_AFTER_S = 6  # memory: the second RSS reading, seconds after the fill


def base_kind(kind):
    return split_kind(kind)[0]


def run_failover(args, kind, rnd, runs=3):
    results = []
    for run in range(1, runs + 1):
        members = ensemble(kind, args, "fo-%s-r%d-%d" % (base_kind(kind), rnd, run))
        try:
            leader = next(m for m in members if mode(m.port) == "leader")
            cmd = [args.zk_load, "--json", "--failover", "-s", hosts(members), "-n", 8, "-k", 1, "-b", 100,
                   "-w", 0, "-d", args.failover_duration, "--io-timeout-ms", 2000,
                   "--timeline", os.path.join(args.work, "timeline-%s-%s-r%d-%d.txt" % (args.failover_signal, base_kind(kind), rnd, run))]
            cmd = [str(x) for x in cmd]
            la = loadavg()
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(args.failover_kill_after)
            kill_us = int(time.time() * 1e6)
            if args.failover_signal == "STOP":
                leader.proc.send_signal(signal.SIGSTOP)  # frozen, sockets stay open: timeouts must notice
            else:
                leader.kill9()
            out, err = p.communicate(timeout=args.failover_duration + 120)
            r = json.loads(out)
            with open(os.path.join(args.work, "timeline-%s-%s-r%d-%d.txt" % (args.failover_signal, base_kind(kind), rnd, run))) as f:
                times = [int(x) for x in f.read().split()]
            # The outage: the largest gap between successful writes that ends after the kill. (Writes
            # already committed may still be answered in the first moments after kill_us, which is
            # taken just before the signal is sent.)
            outage = max(((b - a, a, b) for a, b in zip(times, times[1:])
                          if b > kill_us and kill_us - 1e6 <= a <= kill_us + 2e5), default=(0, 0, 0))
            inside = outage[2] > 0
            r.update({"label": "failover SIG%s run %d" % (args.failover_signal, run), "kind": base_kind(kind),
                      "part": "failover", "round": rnd, "kill_unix_us": kill_us,
                      "outage_gap_ms": outage[0] / 1000.0, "outage_from_minus_kill_ms": (outage[1] - kill_us) / 1000.0,
                      "kill_to_first_write_ms": (outage[2] - kill_us) / 1000.0 if inside else None,
                      "new_leader": [m.myid for m in members if m.running() and mode(m.port) == "leader"],
                      "loadavg_before": la, "command": " ".join(cmd)})
            record(args, r)
            results.append(r)
            print("%-10s failover SIG%s run %d: kill->first write after the outage %s ms (outage gap %.1f ms, starts %.1f ms "
                  "after the kill stamp), largest gap of the run %.1f ms, writes %d, connfail %d, "
                  "killed server.%d, new leader %s, load %s"
                  % (kind, args.failover_signal, run, "%.1f" % r["kill_to_first_write_ms"] if inside else "n/a", r["outage_gap_ms"],
                     r["outage_from_minus_kill_ms"], r["largest_gap_ms"], r["successful_writes"],
                     r["connection_failures"], leader.myid,
                     r["new_leader"], la), flush=True)
        finally:
            for s in members:
                if args.failover_signal == "STOP":
                    s.kill9()  # a stopped process never handles SIGTERM
            stop_all(members, args.keep_data)
    return results


def run_memory(args, kind, count):
    srv = standalone(kind, args, "mem-" + kind)
    try:
        pid = srv[0].proc.pid
        before = rss_kib(pid)
        t0 = time.time()
        parents = max(1, count // 1000)  # the shape: 1,000 children under each parent
        r = zk_load(args, srv, ["-o", "createseq", "-b", 100, "-n", 16, "-k", 16, "-w", 0, "-d", 600,
                                "--max-ops", count, "--root", "/mem", "--parents", parents],
                    "memory create %d (%d parents)" % (count, parents), kind, tags={"part": "memory-fill"})
        took = time.time() - t0
        time.sleep(2)
        after = rss_kib(pid)
        # Read again once the server has been idle a while: housekeeping that waits for a pause in
        # the writes (zkraft gives its heap's free pages back 1 s into one) has run by then, and a
        # JVM's collector may have.
        time.sleep(SETTLED_AFTER_S - 2)
        settled = rss_kib(pid)
        peak = rss_kib(pid, "VmHWM")
        stat = four_letter(srv[0].port, "mntr")
        znodes = [l for l in stat.splitlines() if "znode_count" in l]
        heap = ""
        if kind == "zookeeper" and shutil.which("jcmd"):
            heap = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True).stdout
            print(heap.strip(), flush=True)
        rec = {"label": "memory", "part": "memory", "kind": base_kind(kind), "nodes": count, "rss_before_kib": before, "rss_after_kib": after,
               "rss_settled_kib": settled, "rss_peak_kib": peak, "created_ok": r["ok"], "seconds": took, "mntr": znodes,
               "heap": ZK_HEAP if kind == "zookeeper" else None, "heap_info": heap}
        record(args, rec)
        out = rec
        print("%-10s memory: RSS %.1f MiB before, %.1f MiB 2 s after %d creates of 100 B (%.0f s), %.1f MiB %d s "
              "after, peak %.1f MiB %s" % (kind, before / 1024, after / 1024, r["ok"], took, settled / 1024,
                                           SETTLED_AFTER_S, peak / 1024, znodes), flush=True)
    finally:
        stop_all(srv, args.keep_data)
    return out


def run_restart(args, kind):
    """restart_bench.py on --memory-nodes znodes; its median restart-to-serving time."""
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "restart_bench.py"), "--zkraft", args.zkraft, "--zk-load", args.zk_load,
           "--kind", base_kind(kind), "--work", os.path.join(args.work, "restart"), "--znodes", str(args.memory_nodes),
           "--runs", str(args.restart_runs)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    m = re.search(r"median ([\d.]+) s, min ([\d.]+), max ([\d.]+)", out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError("restart_bench failed: %s\n%s%s" % (" ".join(cmd), out.stdout, out.stderr))
    rec = {"part": "restart", "kind": base_kind(kind), "nodes": args.memory_nodes, "median_s": float(m.group(1)),
           "min_s": float(m.group(2)), "max_s": float(m.group(3)), "output": out.stdout}
    record(args, rec)
    print("%-10s restart to serving %d znodes: median %.3f s [%.3f-%.3f] over %d runs"
          % (base_kind(kind), args.memory_nodes, rec["median_s"], rec["min_s"], rec["max_s"], args.restart_runs),
          flush=True)
    return rec
