#!/usr/bin/env python3
"""zkraft and Apache ZooKeeper 3.8 side by side on this machine (issue 8, "The benchmark").

  compare.py --zk-load BUILD/tools/load_bench/zk_load --zkraft BUILD/server/zkraft-server --work DIR
             [--only limits,standalone,ensemble,snapshot,failover,memory,restart] [--rounds N]
             [--ops create,createseq,...] [--shapes 1x1,16x32,...] [--kinds zkraft,zookeeper] [--quick]

Parts, in the order given by --only (default: all of them):
  limits      this machine's fsyncs per second of small appends and loopback round trips (first)
  standalone  every --ops at every --shapes (SESSIONSxINFLIGHT) against one server
  ensemble    the same against a 3-server ensemble (sessions spread over the members)
  snapshot    64x32 setData on a 3-server ensemble holding --tree-nodes znodes, while snapshots
              are taken (snapCount = --snap-count): write p999 of requests in flight during a
              snapshot against the p999 of the same fill and load on a fresh ensemble with
              snapshots off (the target's "without one"; --no-snapshot-reference skips that
              run) and against the requests outside snapshots, and whether the leader changed
  failover    the leader killed (or SIGSTOPped) under 8x1 writes: kill to first write after
  memory      RSS of a standalone server after --memory-nodes znodes of 100 B
  restart     restart_bench.py: restart to serving --memory-nodes znodes
Each of standalone, ensemble, snapshot, failover runs --rounds times; the kinds alternate their
order from round to round (round 1 as --kinds, round 2 reversed, ...). At the end a summary table
per part: ratio kind / ZooKeeper per round, median [range]; ops/s, p50/p99/p999 and server CPU per
op (user + system from /proc, from zk_load's setup end to its exit) as medians. The table is also
written to DIR/summary.md and every result as JSON to DIR/results.jsonl.

Ops (zk_load -o): create (persistent, new names), createseq, set, get, exists, list (getChildren
of a node with 100 children), delete (of nodes made per session before the run: the pool is sized
from the shape and the duration, and the window ends when a pool runs out), mixed (create 1%, set
8%, get 45%, list 45%, delete 1%; --mix), churn (connect, create an ephemeral, close) and watch
(W = SESSIONS watchers of one node, one writer; the time until all W events arrived). churn and
watch run one cycle at a time per session, so shapes with in-flight > 1 run as SESSIONSx1 and a
shape that repeats is run once.

A kind is zkraft, baseline (the --baseline binary: an older zkraft, to compare builds) or
zookeeper, optionally followed by @key=value zoo.cfg lines for that run, e.g.
--kinds zkraft@zkraft.networkThreads=1,zookeeper (ZooKeeper ignores zkraft.* keys).

Every server listens on 127.0.0.1 on ports picked by binding port 0, keeps its data under DIR,
fsyncs (zkraft's default; ZooKeeper's forceSync default yes) and is stopped by the PID this script
started. ZooKeeper runs with the heap zkServer.sh uses by default (-Xmx1000m) and the JVM's
default GC. --quick runs every case for about a second, on small trees (a smoke test, not a
figure).
"""

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_limits  # noqa: E402
import bench_snapshot  # noqa: E402
import bench_summary  # noqa: E402
from bench_parts import SETTLED_AFTER_S, base_kind, run_failover, run_memory, run_restart  # noqa: E402
from bench_run import record, zk_load  # noqa: E402
from bench_servers import ensemble, loadavg, standalone, stop_all  # noqa: E402

ALL_OPS = "create,createseq,set,get,exists,list,delete,mixed,churn,watch"
ALL_SHAPES = "1x1,16x1,64x1,16x32,64x32"
ALL_PARTS = "limits,standalone,ensemble,snapshot,failover,memory,restart"


def shapes_for(op, shapes):
    """[(sessions, inflight)] an op runs at: churn and watch only at in-flight 1, each once."""
    out = []
    for shape in shapes:
        n, k = (int(x) for x in shape.split("x"))
        if op in ("churn", "watch"):
            k = 1
        if (n, k) not in out:
            out.append((n, k))
    return out


def delete_pool(n, k, seconds):
    """Nodes per session for a delete run: enough for about `seconds` at a rate that grows with the
    requests in flight (a guess; zk_load cuts the window when a pool runs out and says so).
    Deletes run without warm-up (run_matrix): on a fast disk a small pool ran out during the
    warm-up and left an empty window (the clean-clone CI run at da4c8df, 5,440 fsyncs/s)."""
    total = min(300000, max(20000, 5000 * n * k)) * seconds / 10.0
    return max(100, int(total / n))


def run_matrix(args, kind, rnd, mode_name):
    """Every op at every shape against one server (standalone) or a 3-server ensemble."""
    name = "%s-%s-r%d" % (mode_name, re.sub(r"[^A-Za-z0-9_.-]", "_", kind), rnd)
    servers = standalone(kind, args, name) if mode_name == "standalone" else ensemble(kind, args, name)
    out = []
    try:
        w, d = args.warmup, args.duration
        for op in args.ops.split(","):
            for n, k in shapes_for(op, args.shapes.split(",")):
                extra = ["-o", op, "-b", 100, "-n", n, "-k", k, "-w", 0 if op == "delete" else w, "-d", d]
                if op == "delete":
                    extra += ["--pool", delete_pool(n, k, d)]
                shape = "%dx%d" % (n, k)
                label = "%s %s %s r%d" % (mode_name, op, shape, rnd)
                tags = {"part": "matrix", "mode": mode_name, "op": op, "shape": shape, "round": rnd}
                try:
                    out.append(zk_load(args, servers, extra, label, kind, tags=tags))
                except RuntimeError as e:
                    # One case that cannot run (ZooKeeper's overloaded ensemble timed out zk_load's
                    # setup on 2026-12-07) is reported and the run goes on with the next: a full
                    # run takes most of an hour.
                    reason = " ".join(str(e).split())[:300]
                    print("%-10s %-28s FAILED: %s" % (kind, label, reason), flush=True)
                    r = dict(tags, label=label, kind=kind, ok=0, failed=reason)
                    record(args, r)
                    out.append(r)
    finally:
        stop_all(servers, args.keep_data)
    return out


def snapshot_load(args, kind, cfg, name, rnd, part):
    """Starts a 3-server ensemble of `kind` with the zoo.cfg lines `cfg` ("@key=value..."),
    fills it with --tree-nodes znodes and runs 64x32 setData for --snapshot-duration s with a
    latency timeline. Returns (members, fill, fill_s, load result, timeline points, the server
    logs' sizes before the load, the poller); snapshot_windows() stops the members."""
    members = ensemble(kind + cfg, args, name)
    try:
        t0 = time.time()
        fill = zk_load(args, members, ["-o", "createseq", "-b", 100, "-n", 16, "-k", 32, "-w", 0, "-d", 3600,
                                       "--max-ops", args.tree_nodes, "--root", "/tree"],
                       "%s tree %d r%d" % (part, args.tree_nodes, rnd), kind,
                       tags={"part": part + "-fill", "round": rnd})
        fill_s = time.time() - t0
        zk = members[0].kind == "zookeeper"
        offsets = {m.dir: os.path.getsize(os.path.join(m.dir, "server.log")) for m in members}
        poller = bench_snapshot.Poller(members, watch_files=zk)
        poller.before = bench_snapshot.existing_snapshot_files(members) if zk else set()
        timeline = os.path.join(args.work, "%s-latency.txt" % name)
        poller.start()
        try:
            r = zk_load(args, members, ["-o", "set", "-b", 100, "-n", 64, "-k", 32, "-w", args.warmup,
                                        "-d", args.snapshot_duration, "--latency-timeline", timeline],
                        "%s 64x32 set r%d" % (part, rnd), kind, tags={"part": part + "-load", "round": rnd})
        finally:
            poller.stop()
        with open(timeline) as f:
            points = [(int(a) / 1e6, int(b) / 1e6) for a, b in (line.split() for line in f if line.strip())]
    except BaseException:
        stop_all(members, args.keep_data)
        raise
    return members, fill, fill_s, r, points, offsets, poller


def snapshot_windows(args, members, offsets, poller, points):
    """The snapshots taken while the load ran, as [(from, to)], from zkraft's log lines or
    ZooKeeper's snapshot files; stops the members (stop_all)."""
    try:
        if members[0].kind == "zookeeper":
            windows = poller.file_windows(poller.before)
        else:
            windows = sorted(w for m in members for w in bench_snapshot.zkraft_windows(
                os.path.join(m.dir, "server.log"), offsets[m.dir]))
    finally:
        stop_all(members, args.keep_data)
    if points:
        lo, hi = points[0][0], points[-1][0]
        windows = [w for w in windows if w[1] >= lo - 1 and w[0] <= hi]
    return windows


def run_snapshot(args, kind, rnd):
    """64x32 setData on a 3-server ensemble holding --tree-nodes znodes while snapshots happen,
    then (unless --no-snapshot-reference) the same with snapshots off: the p999 "without one"."""
    name = "snap-%s-r%d" % (base_kind(kind), rnd)
    members, fill, fill_s, r, points, offsets, poller = snapshot_load(
        args, kind, "@snapCount=%d" % args.snap_count, name, rnd, "snapshot")
    windows = snapshot_windows(args, members, offsets, poller, points)
    inside, outside = bench_summary.split_by_windows(points, windows)
    p_in = bench_summary.nearest_rank(inside, 0.999)
    p_out = bench_summary.nearest_rank(outside, 0.999)
    p_all = bench_summary.nearest_rank([lat for _, lat in points], 0.999)
    p_without, ops_without, ref_windows = None, None, []
    if args.snapshot_reference:
        # snapSizeLimitInKb=-1: neither server's byte trigger (ZooKeeper's 4 GiB, zkraft's 64 MiB)
        # takes a snapshot either.
        ref_members, _, _, ref_r, ref_points, ref_offsets, ref_poller = snapshot_load(
            args, kind, "@snapCount=100000000@snapSizeLimitInKb=-1", "snapref-%s-r%d" % (base_kind(kind), rnd),
            rnd, "snapshot-reference")
        ref_windows = snapshot_windows(args, ref_members, ref_offsets, ref_poller, ref_points)
        if ref_windows:
            print("%s snapshot r%d: the run with snapshots off took %d snapshots" % (kind, rnd, len(ref_windows)))
        p_without = bench_summary.nearest_rank([lat for _, lat in ref_points], 0.999)
        ops_without = ref_r["ops_per_s"]
    rec = {"part": "snapshot", "kind": base_kind(kind), "round": rnd, "tree_nodes": args.tree_nodes,
           "fill_s": fill_s, "fill_ok": fill["ok"], "snap_count": args.snap_count,
           "snapshot_windows": [[a, b] for a, b in windows],
           "snapshot_window_s": bench_summary.union_length(windows),
           "requests_during_snapshots": len(inside), "requests_outside": len(outside),
           "p999_during_ms": p_in * 1e3 if p_in is not None else None,
           "p999_outside_ms": p_out * 1e3 if p_out is not None else None,
           "p999_whole_load_ms": p_all * 1e3 if p_all is not None else None,
           "p999_without_snapshots_ms": p_without * 1e3 if p_without is not None else None,
           "snapshots_in_reference": len(ref_windows) if args.snapshot_reference else None,
           "ops_per_s_without_snapshots": ops_without,
           "leader_changed": poller.leader_changed(), "leaders_seen": poller.leaders,
           "no_leader_polls": poller.no_leader_polls, "mode_polls": poller.mode_polls,
           "ops_per_s": r["ops_per_s"], "connection_failures": r["connection_failures"],
           "error_replies": r["error_replies"]}
    record(args, rec)
    print("%-10s snapshot r%d: %d snapshots (%.1f s of %.1f s) under 64x32 set, write p999 %s ms during vs %s ms "
          "outside (%d / %d requests), %s ms with snapshots off; leader changed: %s, no serving leader in %d of %d "
          "srvr polls, connfail %d; tree of %d filled in %.1f s"
          % (base_kind(kind), rnd, len(windows), rec["snapshot_window_s"], args.snapshot_duration,
             bench_summary.fmt_num(rec["p999_during_ms"], 2), bench_summary.fmt_num(rec["p999_outside_ms"], 2),
             len(inside), len(outside), bench_summary.fmt_num(rec["p999_without_snapshots_ms"], 2),
             "yes" if rec["leader_changed"] else "no", rec["no_leader_polls"],
             rec["mode_polls"], r["connection_failures"],
             fill["ok"], fill_s), flush=True)
    return rec


def ratio_line(label, per_kind, unit, fmt="%.1f", reference="zookeeper"):
    """'label: zkraft 12.3 [10.1-14.0] unit, zookeeper ... ; ratio 0.50x' from {kind: [values]}."""
    parts, meds = [], {}
    for kind, values in per_kind.items():
        mr = bench_summary.median_range(values)
        if mr is None:
            parts.append("%s n/a" % kind)
            continue
        meds[kind] = mr[0]
        parts.append(("%s " + fmt + " [" + fmt + "-" + fmt + "] %s") % (kind, mr[0], mr[1], mr[2], unit))
    ratios = ["%s/%s %.2fx" % (k, reference, v / meds[reference]) for k, v in meds.items()
              if k != reference and meds.get(reference)]
    return "- %s: %s%s" % (label, ", ".join(parts), ("; " + ", ".join(ratios)) if ratios else "")


def summary(args, results, limits_lines):
    out = ["# compare.py summary, %s UTC" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()), ""]
    out += ["- " + line for line in limits_lines]
    out.append("- loadavg at start %s, at end %s; rounds %d; warm-up %.1f s, measured %.1f s per case%s"
               % (args.loadavg_start, loadavg(), args.rounds, args.warmup, args.duration,
                  " (--quick: smoke figures, not for comparison)" if args.quick else ""))
    matrix = [r for r in results if r.get("part") == "matrix"]
    if matrix:
        out += ["", "## Ops x shapes (ratio = kind / zookeeper, per round; median [range])", ""]
        out += bench_summary.format_table(bench_summary.figure_rows(matrix))
    extra = []
    snaps = [r for r in results if r.get("part") == "snapshot"]
    if snaps:
        kinds = list(dict.fromkeys(r["kind"] for r in snaps))
        extra.append(ratio_line("snapshot, write p999 during snapshots (ms)",
                                {k: [r["p999_during_ms"] for r in snaps if r["kind"] == k] for k in kinds}, "ms"))
        extra.append(ratio_line("snapshot, write p999 outside snapshots (ms)",
                                {k: [r["p999_outside_ms"] for r in snaps if r["kind"] == k] for k in kinds}, "ms"))
        for k in kinds:
            mine = [r for r in snaps if r["kind"] == k]
            during = [r["p999_during_ms"] / r["p999_outside_ms"] for r in mine
                      if r["p999_during_ms"] is not None and r["p999_outside_ms"]]
            without = [r["p999_during_ms"] / r["p999_without_snapshots_ms"] for r in mine
                       if r["p999_during_ms"] is not None and r.get("p999_without_snapshots_ms")]
            extra.append("- snapshot, %s: p999 during snapshots / p999 of the same load with snapshots off %s "
                         "(target: at most 2x); during/outside p999 %s; snapshots seen %s; leader "
                         "changed in %d of %d runs; runs with a srvr poll finding no serving leader: %d"
                         % (k, bench_summary.fmt_ratio(bench_summary.median_range(without)),
                            bench_summary.fmt_ratio(bench_summary.median_range(during)),
                            [len(r["snapshot_windows"]) for r in mine],
                            sum(1 for r in mine if r["leader_changed"]), len(mine),
                            sum(1 for r in mine if r.get("no_leader_polls"))))
    fo = [r for r in results if r.get("part") == "failover"]
    if fo:
        kinds = list(dict.fromkeys(r["kind"] for r in fo))
        extra.append(ratio_line("leader kill (SIG%s), kill to first write after the outage" % args.failover_signal,
                                {k: [r["kill_to_first_write_ms"] for r in fo if r["kind"] == k] for k in kinds}, "ms"))
    mem = [r for r in results if r.get("part") == "memory"]
    if mem:
        kinds = list(dict.fromkeys(r["kind"] for r in mem))
        extra.append(ratio_line("RSS 2 s after %d znodes of 100 B" % args.memory_nodes,
                                {k: [r["rss_after_kib"] / 1024 for r in mem if r["kind"] == k] for k in kinds}, "MiB"))
        extra.append(ratio_line("RSS %d s after them (idle)" % SETTLED_AFTER_S,
                                {k: [r.get("rss_settled_kib", 0) / 1024 for r in mem if r["kind"] == k] for k in kinds},
                                "MiB"))
        extra.append(ratio_line("peak RSS (VmHWM) during that fill",
                                {k: [r.get("rss_peak_kib", 0) / 1024 for r in mem if r["kind"] == k] for k in kinds}, "MiB"))
    rs = [r for r in results if r.get("part") == "restart"]
    if rs:
        kinds = list(dict.fromkeys(r["kind"] for r in rs))
        extra.append(ratio_line("restart to serving %d znodes (median of %d runs)" % (args.memory_nodes, args.restart_runs),
                                {k: [r["median_s"] for r in rs if r["kind"] == k] for k in kinds}, "s", fmt="%.3f"))
    if extra:
        out += ["", "## Snapshot, failover, memory, restart", ""] + extra
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zk-load", required=True)
    ap.add_argument("--zkraft", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default=ALL_PARTS, help="parts, in order (default: %s)" % ALL_PARTS)
    ap.add_argument("--kinds", default="zkraft,zookeeper")
    ap.add_argument("--baseline", help="an older zkraft-server binary, run as kind 'baseline'")
    ap.add_argument("--ops", default=ALL_OPS, help="zk_load ops (default: %s)" % ALL_OPS)
    ap.add_argument("--shapes", default=ALL_SHAPES, help="SESSIONSxINFLIGHT (default: %s)" % ALL_SHAPES)
    ap.add_argument("--rounds", type=int, default=3, help="repetitions, the kinds' order alternating")
    ap.add_argument("--quick", action="store_true", help="every case for about 1 s, small trees: a smoke test")
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--duration", type=float, default=8)
    ap.add_argument("--tree-nodes", type=int, default=1000000, help="snapshot: znodes in the tree first")
    ap.add_argument("--snap-count", type=int, default=100000, help="snapshot: snapCount of both servers")
    ap.add_argument("--snapshot-duration", type=float, default=30, help="snapshot: seconds of 64x32 setData")
    ap.add_argument("--keep-data", action="store_true",
                    help="keep each server's data directory after its case (by default only its zoo.cfg and "
                         "server.log stay: one snapshot round leaves ~1.2 GB)")
    ap.add_argument("--no-snapshot-reference", dest="snapshot_reference", action="store_false",
                    help="snapshot: skip the second run with snapshots off (the p999 'without one')")
    ap.add_argument("--memory-nodes", type=int, default=1000000, help="memory and restart: znodes of 100 B")
    ap.add_argument("--restart-runs", type=int, default=3)
    ap.add_argument("--limits-seconds", type=float, default=3)
    ap.add_argument("--failover-duration", type=float, default=15)
    ap.add_argument("--failover-kill-after", type=float, default=5)
    ap.add_argument("--failover-runs", type=int, default=1, help="leader kills per round and kind")
    ap.add_argument("--fail-on-errors", action="store_true",
                    help="exit 1 if a case had error replies, connection failures or no op at all, or a "
                         "snapshot run saw no snapshot (for the ctest smoke run)")
    ap.add_argument("--failover-signal", choices=["KILL", "STOP"], default="KILL",
                    help="KILL: kill -9 the leader; STOP: freeze it with SIGSTOP (no socket is closed)")
    args = ap.parse_args()
    if args.quick:
        given = set(a.split("=")[0] for a in sys.argv[1:])
        for flag, value in [("--warmup", 0.3), ("--duration", 1.0), ("--tree-nodes", 20000), ("--snap-count", 20000),
                            ("--snapshot-duration", 3.0), ("--memory-nodes", 20000), ("--restart-runs", 1),
                            ("--limits-seconds", 0.5), ("--failover-duration", 5.0), ("--failover-kill-after", 1.5),
                            ("--rounds", 1)]:
            if flag not in given:
                setattr(args, flag[2:].replace("-", "_"), value)
    # Servers run in their own directories: binaries by absolute path.
    args.zkraft = os.path.abspath(args.zkraft)
    args.zk_load = os.path.abspath(args.zk_load)
    args.work = os.path.abspath(args.work)
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
    os.makedirs(args.work, exist_ok=True)
    args.loadavg_start = loadavg()
    print("loadavg at start: %s" % args.loadavg_start, flush=True)
    kinds = args.kinds.split(",")
    results, limits_lines = [], []
    for part in args.only.split(","):
        if part == "limits":
            rec, limits_lines = bench_limits.measure(args.work, args.limits_seconds)
            rec["part"] = "limits"
            record(args, rec)
            print("\n".join(limits_lines), flush=True)
            continue
        if part not in ALL_PARTS.split(","):
            raise SystemExit("unknown part %r (parts: %s)" % (part, ALL_PARTS))
        rounds = 1 if part in ("memory", "restart") else args.rounds
        for rnd in range(1, rounds + 1):
            order = kinds if rnd % 2 == 1 else list(reversed(kinds))
            for kind in order:
                if part in ("standalone", "ensemble"):
                    results += run_matrix(args, kind, rnd, part if part == "standalone" else "ensemble3")
                elif part == "snapshot":
                    results.append(run_snapshot(args, kind, rnd))
                elif part == "failover":
                    results += run_failover(args, kind, rnd, args.failover_runs)
                elif part == "memory":
                    results.append(run_memory(args, kind, args.memory_nodes))
                elif part == "restart":
                    results.append(run_restart(args, kind))
    for r in results:
        r["kind"] = base_kind(r["kind"]) if r.get("part") != "matrix" else r["kind"]
    table = summary(args, results, limits_lines)
    with open(os.path.join(args.work, "summary.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    print("\n" + "\n".join(table), flush=True)
    if args.fail_on_errors:
        bad = bench_summary.failures(results)
        if bad:
            print("FAILED:\n  " + "\n  ".join(bad), flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
