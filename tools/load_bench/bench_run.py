"""One zk_load call against running servers, with the servers' CPU time per op from /proc, printed
as one line and appended as JSON to WORK/results.jsonl."""

import json
import os
import subprocess
import threading
import time

from bench_servers import cpu_seconds, hosts, loadavg, thread_cpu_seconds


def zk_load(args, servers, extra, label, kind, tags=None):
    cmd = [args.zk_load, "--json", "-s", hosts(servers)] + [str(x) for x in extra]
    la = loadavg()
    live = [s for s in servers if s.running()]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # CPU is counted from zk_load's "clocks start" (after its setup: pools, own nodes) to its exit.
    mark = {}
    err_lines = []

    def read_stderr():
        for line in p.stderr:
            if "clocks start" in line and not mark:
                mark["cpu"] = sum(cpu_seconds(s.proc.pid) for s in live)
                mark["threads"] = [thread_cpu_seconds(s.proc.pid) for s in live]
                mark["t"] = time.time()
            else:
                err_lines.append(line)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        stdout = p.stdout.read()
        p.wait(timeout=900)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    end_t = time.time()
    cpu_after = sum(cpu_seconds(s.proc.pid) for s in live)
    threads_after = [thread_cpu_seconds(s.proc.pid) for s in live]
    reader.join()
    if p.returncode != 0 or not mark:
        raise RuntimeError("zk_load failed: %s\n%s" % (" ".join(cmd), "".join(err_lines)))
    elapsed = end_t - mark["t"]
    cpu = cpu_after - mark["cpu"]
    threads_before = mark["threads"]
    r = json.loads(stdout)
    ops = r["ops_per_s"] * elapsed
    by_thread = {}
    for before, after in zip(threads_before, threads_after):
        for name, secs in after.items():
            group = "zk-net" if name.startswith("zk-net-") else name
            by_thread[group] = by_thread.get(group, 0.0) + secs - before.get(name, 0.0)
    r["thread_cpu_us_per_op"] = {n: round(v * 1e6 / ops, 2) for n, v in sorted(by_thread.items()) if ops and v > 0.05}
    r.update(tags or {})
    r.update({"label": label, "kind": kind, "loadavg_before": la, "loadavg_after": loadavg(),
              "server_cpu_s": cpu, "server_cpu_us_per_op": cpu * 1e6 / ops if ops else None,
              "command": " ".join(cmd)})
    record(args, r)
    lat = r["latency_ms"]
    print("%-10s %-28s %9.0f ops/s  p50 %7.2f  p99 %7.2f  p999 %7.2f  max %7.2f ms  cpu/op %6.1f us  err %d  connfail %d  load %s"
          % (kind, label, r["ops_per_s"], lat["p50"], lat["p99"], lat["p999"], lat["max"],
             r["server_cpu_us_per_op"] or 0, r["error_replies"], r["connection_failures"], la), flush=True)
    if r["thread_cpu_us_per_op"] and not kind.startswith("zookeeper"):
        print("%-10s %-28s cpu us/op by thread: %s" % ("", "", "  ".join(
            "%s %.1f" % kv for kv in r["thread_cpu_us_per_op"].items())), flush=True)
    return r


def record(args, r):
    with open(os.path.join(args.work, "results.jsonl"), "a") as f:
        f.write(json.dumps(r) + "\n")
