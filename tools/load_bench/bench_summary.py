"""Summary tables of compare.py's runs (pure: no I/O, tested by bench_summary_test.py).

A figure is one (mode, op, shape). For it, each kind has one result per round; the ratio of a kind
to the reference kind (ZooKeeper) is taken round by round, between the two results of the same
round (the servers ran back to back, so the machine's load was most alike), and reported as the
median with the range over rounds. Latencies and CPU per op are medians over rounds.
"""

import statistics


def median_range(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def fmt_ratio(mr):
    if mr is None:
        return "n/a"
    med, lo, hi = mr
    if lo == hi:
        return "%.2fx" % med
    return "%.2fx [%.2f-%.2f]" % (med, lo, hi)


def fmt_num(v, digits=0):
    if v is None:
        return "n/a"
    if digits == 0:
        return "{:,.0f}".format(v)
    return "{:,.{d}f}".format(v, d=digits)


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def _lat(r, q):
    return (r.get("latency_ms") or {}).get(q)


def figure_rows(results, reference="zookeeper"):
    """results: dicts with mode, op, shape, kind, round, ops_per_s, latency_ms {p50, p99, p999},
    server_cpu_us_per_op, error_replies, connection_failures. Returns one row (a dict) per figure
    and non-reference kind, in the order the figures first appear. A run that failed (a record
    with "failed": zk_load's error) has no figures: it is left out of the medians and ratios and
    counted in the row's "failed_runs"."""
    figures, by, failed = [], {}, {}
    for r in results:
        key = (r["mode"], r["op"], r["shape"])
        if key not in by:
            figures.append(key)
            by[key] = {}
        if r.get("failed"):
            failed[key] = failed.get(key, 0) + 1
            by[key].setdefault(r["kind"], {})
            continue
        by[key].setdefault(r["kind"], {})[r["round"]] = r
    rows = []
    for key in figures:
        kinds = by[key]
        ref = kinds.get(reference, {})
        for kind, rounds in kinds.items():
            if kind == reference:
                continue
            pairs = [(rounds[n], ref[n]) for n in sorted(rounds) if n in ref]
            row = {"figure": "%s %s %s" % key, "kind": kind, "rounds": len(rounds),
                   "paired_rounds": len(pairs),
                   "ops": median_range([r["ops_per_s"] for r in rounds.values()]),
                   "ref_ops": median_range([r["ops_per_s"] for r in ref.values()]),
                   "ops_ratio": median_range([_ratio(a["ops_per_s"], b["ops_per_s"]) for a, b in pairs]),
                   "cpu": median_range([r.get("server_cpu_us_per_op") for r in rounds.values()]),
                   "ref_cpu": median_range([r.get("server_cpu_us_per_op") for r in ref.values()]),
                   "cpu_ratio": median_range([_ratio(a.get("server_cpu_us_per_op"), b.get("server_cpu_us_per_op"))
                                              for a, b in pairs]),
                   "errors": sum(r.get("error_replies", 0) + r.get("connection_failures", 0)
                                 for r in list(rounds.values()) + list(ref.values())),
                   "failed_runs": failed.get(key, 0)}
            for q in ("p50", "p99", "p999"):
                row[q] = median_range([_lat(r, q) for r in rounds.values()])
                row["ref_" + q] = median_range([_lat(r, q) for r in ref.values()])
                row[q + "_ratio"] = median_range([_ratio(_lat(a, q), _lat(b, q)) for a, b in pairs])
            rows.append(row)
    return rows


def _med(mr, digits=0):
    return fmt_num(mr[0] if mr else None, digits)


def format_table(rows, reference="zookeeper"):
    """Markdown: ops/s and latencies as 'kind / reference' medians, ratios as median [range]."""
    out = ["| figure | kind | ops/s kind / %s | ops ratio | p50 ms | p99 ms (ratio) | p999 ms (ratio) | "
           "server CPU us/op (ratio) | rounds | errors |" % reference,
           "|---|---|---:|---|---|---|---|---|---:|---:|"]
    for r in rows:
        errors = "%d" % r["errors"] + (" (%d runs failed)" % r["failed_runs"] if r.get("failed_runs") else "")
        out.append("| %s | %s | %s / %s | %s | %s / %s | %s / %s (%s) | %s / %s (%s) | %s / %s (%s) | %d | %s |" % (
            r["figure"], r["kind"], _med(r["ops"]), _med(r["ref_ops"]), fmt_ratio(r["ops_ratio"]),
            _med(r["p50"], 2), _med(r["ref_p50"], 2),
            _med(r["p99"], 2), _med(r["ref_p99"], 2), fmt_ratio(r["p99_ratio"]),
            _med(r["p999"], 2), _med(r["ref_p999"], 2), fmt_ratio(r["p999_ratio"]),
            _med(r["cpu"], 1), _med(r["ref_cpu"], 1), fmt_ratio(r["cpu_ratio"]),
            r["paired_rounds"], errors))
    return out


def overlaps(start, end, windows):
    """Whether [start, end] meets any (from, to) window."""
    return any(start <= w_to and end >= w_from for w_from, w_to in windows)


def union_length(windows):
    """Total time covered by (from, to) windows that may overlap."""
    total, end = 0.0, None
    for lo, hi in sorted(windows):
        if end is None or lo > end:
            total += hi - lo
            end = hi
        elif hi > end:
            total += hi - end
            end = hi
    return total


def split_by_windows(timeline, windows):
    """timeline: (completion_s, latency_s) pairs. Returns (latencies of requests in flight during a
    window, latencies of the others)."""
    inside, outside = [], []
    for done, lat in timeline:
        (inside if overlaps(done - lat, done, windows) else outside).append(lat)
    return inside, outside


def nearest_rank(values, q):
    if not values:
        return None
    v = sorted(values)
    rank = max(1, min(len(v), -(-int(q * 1000 * len(v)) // 1000)))
    return v[rank - 1]


def failures(results):
    """What makes a smoke run fail: a matrix case with error replies, connection failures or no
    successful op, and a snapshot run that saw no snapshot. One line each."""
    bad = ["%s %s: ok %s, error replies %s, connection failures %s"
           % (r["kind"], r.get("label"), r.get("ok"), r.get("error_replies"), r.get("connection_failures"))
           for r in results if r.get("part") == "matrix" and not r.get("failed")
           and (not r.get("ok") or r.get("error_replies") or r.get("connection_failures"))]
    bad += ["%s %s: failed: %s" % (r["kind"], r.get("label"), r["failed"])
            for r in results if r.get("part") == "matrix" and r.get("failed")]
    bad += ["%s snapshot r%d: no snapshot seen during the load" % (r["kind"], r["round"])
            for r in results if r.get("part") == "snapshot" and not r["snapshot_windows"]]
    return bad
