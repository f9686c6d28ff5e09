"""Checkers for the chaos workloads other than the register (linearizability.py). Each is pure:
operations in (dicts from history.py: f, type ok/fail/info, invoke, complete, value, process),
a verdict out: {"valid": bool, "violations": [...], "lost": [...], ...}. "lost" lists
acknowledged writes missing from a final read: lost acknowledgements, which are also violations.

Times are CLOCK_MONOTONIC seconds, shared by every process on the machine.
"""

INF = float("inf")


def _ok(ops, f):
    return [o for o in ops if o["f"] == f and o["type"] == "ok"]


def _verdict(violations, lost=(), **extra):
    return dict(extra, valid=not violations and not lost, violations=list(violations), lost=list(lost))


def unique_ids(ops):
    """Sequential-node ids: f "id" returns the created name's sequence number; f "final" (ok)
    is the list of sequence numbers present at the end. No id is handed out twice; an id
    acknowledged before another was requested is smaller (the counter is linearizable); every
    acknowledged id is still there at the end."""
    ids = _ok(ops, "id")
    violations, seen = [], {}
    for o in ids:
        if o["value"] in seen:
            violations.append({"what": "duplicate id", "id": o["value"], "ops": [seen[o["value"]], o]})
        seen[o["value"]] = o
    by_complete = sorted(ids, key=lambda o: o["complete"])
    by_invoke = sorted(ids, key=lambda o: o["invoke"])
    # For each op b, every a completed before b was invoked must have a smaller id: compare b
    # with the largest id among those a (a running maximum over completions).
    j, best = 0, None
    for b in by_invoke:
        while j < len(by_complete) and by_complete[j]["complete"] < b["invoke"]:
            if best is None or by_complete[j]["value"] > best["value"]:
                best = by_complete[j]
            j += 1
        if best is not None and best["value"] >= b["value"]:
            violations.append({"what": "id order contradicts real time", "earlier": best, "later": b})
    lost = []
    finals = _ok(ops, "final")
    if finals:
        present = set(finals[-1]["value"])
        lost = [o for o in ids if o["value"] not in present]
    return _verdict(violations, lost, acknowledged=len(ids), final_read=bool(finals))


def grow_only_set(ops):
    """f "add" (value: element, unique per attempt), f "read" (value: list of elements, after a
    sync), f "final" (the last read). A read contains every element whose add was acknowledged
    before the read was invoked, and nothing that no add had been invoked for before the read
    returned; the final read contains every acknowledged add."""
    adds = [o for o in ops if o["f"] == "add" and o["type"] in ("ok", "info")]
    ok_adds = [o for o in adds if o["type"] == "ok"]
    violations = []
    for r in _ok(ops, "read") + _ok(ops, "final"):
        seen = set(r["value"])
        missing = [o["value"] for o in ok_adds if o["complete"] < r["invoke"] and o["value"] not in seen]
        if missing:
            violations.append({"what": "read misses acknowledged adds", "read": r, "missing": missing})
        possible = {o["value"] for o in adds if o["invoke"] < r["complete"]}
        phantom = sorted(seen - possible, key=str)
        if phantom:
            violations.append({"what": "read has elements never added", "read": r, "phantom": phantom})
    finals = _ok(ops, "final")
    lost = []
    if finals:
        present = set(finals[-1]["value"])
        lost = [o for o in ok_adds if o["value"] not in present]
    return _verdict(violations, lost, acknowledged=len(ok_adds), final_read=bool(finals))


def counter(ops):
    """f "add" (value: a positive delta; fail = certainly not applied, info = applied at most
    once), f "read"/"final" (value: the counter). A read lies between the sum of the adds
    acknowledged before it was invoked and the sum of the adds (acknowledged or not) invoked
    before it returned. A final read below the acknowledged total means lost acknowledgements."""
    adds = [o for o in ops if o["f"] == "add" and o["type"] in ("ok", "info")]
    if any(o["value"] <= 0 for o in adds):
        raise ValueError("counter deltas must be positive")
    violations = []
    for r in _ok(ops, "read") + _ok(ops, "final"):
        low = sum(o["value"] for o in adds if o["type"] == "ok" and o["complete"] < r["invoke"])
        high = sum(o["value"] for o in adds if o["invoke"] < r["complete"])
        if not low <= r["value"] <= high:
            violations.append({"what": "counter read out of bounds", "read": r, "low": low, "high": high})
    finals = _ok(ops, "final")
    lost = []
    if finals:
        acked = sum(o["value"] for o in adds if o["type"] == "ok")
        if finals[-1]["value"] < acked:
            lost = [{"what": "counter below acknowledged total", "final": finals[-1]["value"], "acked": acked}]
    return _verdict(violations, lost, acknowledged=sum(1 for o in adds if o["type"] == "ok"),
                    final_read=bool(finals))


def _paused(faults, process, start, end):
    """True if the client process was stopped, killed or its session expired by the driver
    during [start, end]."""
    for f in faults:
        if f.get("process") == process and f["start"] <= end and f.get("end", INF) >= start:
            return True
    return False


def fenced_lock(ops, store_log, client_faults=()):
    """The lock workload. ops per process: f "acquire" (ok value: the fencing token, the lock
    node's sequence number), f "release", f "state" (a connection state change: value the
    state), f "write" (value: [token, accepted?]). store_log: the store's own record of writes
    in the order it serialised them: {"token", "accepted", "time", "process"}. The store
    rejects a token lower than the highest it accepted.

    Violations: a token granted twice; the store accepting a token lower than one it accepted
    before (its promise); a write the store accepted from a holder whose token was not granted;
    and two clean holds overlapping in real time. A hold runs from the acquire's return to the
    release's invocation; it is clean when its process saw no connection state change and was
    not stopped or killed by the driver from the acquire's invocation to the release's return
    (an unclean holder may legitimately outlive its lock: that is what the fencing token is
    for, and the store's rejections of its writes are counted, not flagged)."""
    violations = []
    grants = {}
    for o in _ok(ops, "acquire"):
        if o["value"] in grants:
            violations.append({"what": "token granted twice", "token": o["value"], "ops": [grants[o["value"]], o]})
        grants[o["value"]] = o
    top = None
    for w in store_log:
        if not w["accepted"]:
            continue
        if top is not None and w["token"] < top:
            violations.append({"what": "store accepted an older token", "write": w, "highest": top})
        if w["token"] not in grants:
            violations.append({"what": "accepted write with a token never granted", "write": w})
        top = w["token"] if top is None else max(top, w["token"])
    holds = []
    by_proc = {}
    for o in ops:
        by_proc.setdefault(o["process"], []).append(o)
    for proc, pops in by_proc.items():
        pops.sort(key=lambda o: o["invoke"])
        states = [o["invoke"] for o in pops if o["f"] == "state"]
        for i, a in enumerate(pops):
            if a["f"] != "acquire" or a["type"] != "ok":
                continue
            rel = next((r for r in pops[i + 1:] if r["f"] == "release"), None)
            end = rel["invoke"] if rel else INF
            clean = (rel is not None and rel["type"] == "ok"
                     and not any(a["invoke"] <= t <= rel["complete"] for t in states)
                     and not _paused(client_faults, proc, a["invoke"], rel["complete"]))
            holds.append({"process": proc, "token": a["value"], "start": a["complete"], "end": end,
                          "clean": clean})
    clean = sorted((h for h in holds if h["clean"]), key=lambda h: h["start"])
    for i, h in enumerate(clean):
        for g in clean[i + 1:]:
            if g["start"] >= h["end"]:
                break
            violations.append({"what": "two clean holds overlap", "holds": [h, g]})
    rejected = sum(1 for w in store_log if not w["accepted"])
    return _verdict(violations, holds=len(holds), clean_holds=len(clean),
                    accepted_writes=sum(1 for w in store_log if w["accepted"]), rejected_writes=rejected)


def ephemerals(ops, deaths, server_faults, session_timeout, margin):
    """The ephemeral workload. ops: f "create" by an owner (value: path; "session": the
    session id that made it), f "check" by the owner (value: [path, present?], "session": the
    session it ran on), f "observe"/"final" by an observer (value: the children of the parent,
    read after a sync; names are paths without the parent).

    deaths: [{"process", "start", "resumed"}]: the driver killed (kill -9) or stopped (SIGSTOP,
    for longer than session_timeout + margin, "resumed" when SIGCONT came) the owner at start. server_faults: [{"start", "end"}] of
    faults on servers; while one is active the deadline moves (an election renews sessions).

    Violations: an owner's check found its node absent while the session that made it still
    answered (premature removal); a node of a dead owner present in an observation invoked
    after its deadline (the death, plus session_timeout + margin, pushed past server faults);
    a node of a dead owner present in the final read."""
    violations = []
    creates = [o for o in ops if o["f"] == "create" and o["type"] in ("ok", "info")]
    made_by = {o["value"]: o for o in creates if o["type"] == "ok"}
    for c in _ok(ops, "check"):
        path, present = c["value"]
        m = made_by.get(path)
        if not present and m and m["session"] == c["session"] and c["invoke"] > m["complete"]:
            violations.append({"what": "ephemeral gone while its session lives", "check": c, "create": m})
    observations = sorted(_ok(ops, "observe") + _ok(ops, "final"), key=lambda o: o["invoke"])
    finals = _ok(ops, "final")
    checked, cleanup = 0, []  # cleanup: seconds from a death to the first read without its nodes
    for d in deaths:
        mine = [o["value"] for o in creates if o["process"] == d["process"] and o["invoke"] < d["start"]]
        if not mine:
            continue
        deadline = d["start"] + session_timeout + margin
        moved = True
        while moved:
            moved = False
            for f in server_faults:
                if f["start"] <= deadline and f.get("end", INF) + session_timeout + margin > deadline:
                    deadline = f.get("end", INF) + session_timeout + margin
                    moved = True
        if d.get("resumed") is not None and d["resumed"] < deadline:
            continue  # a stopped owner woke before the moved deadline: its session may live on
        checked += 1
        gone = next((o for o in observations if o["invoke"] >= d["start"] and
                     not {p.rsplit("/", 1)[-1] for p in mine} & set(o["value"])), None)
        if gone:
            cleanup.append(round(gone["complete"] - d["start"], 2))
        for obs in observations:
            if obs["invoke"] < deadline:
                continue
            seen = set(obs["value"])
            late = [p for p in mine if p.rsplit("/", 1)[-1] in seen]
            if late:
                violations.append({"what": "ephemeral outlived its dead session", "death": d,
                                   "deadline": deadline, "observation": obs, "paths": late})
                break
        if finals:
            seen = set(finals[-1]["value"])
            left = [p for p in mine if p.rsplit("/", 1)[-1] in seen]
            if left:
                violations.append({"what": "ephemeral of a dead session in the final read", "death": d,
                                   "paths": left})
    return _verdict(violations, deaths_checked=checked, created=len(made_by),
                    max_cleanup_s=max(cleanup) if cleanup else None)


def watches(ops):
    """The watch workload. Writer ops: f "set" (value: node; ok has "mzxid"). Watcher ops:
    f "register" (ok: a get with a one-shot data watch; "node", "mzxid" seen, "reg" an id,
    "epoch" the connection epoch), f "event" ("reg", "node", "etype", "epoch", "seq": delivery
    order), f "state" (a connection state change: value the state; any change ends the
    client's watches), f "done" (the watcher stopped waiting, at invoke).

    Violations, for data-change events of registrations made on a live session:
      - a registration delivered more than once;
      - after an event, the watcher's next read of that node shows no newer mzxid;
      - an acknowledged change newer than the registration, and no event by "done" although the
        connection never changed state after the registration;
      - events out of zxid order: e1 delivered before e2, both registered and delivered in one
        connection epoch, yet e1's change is certainly after e2's (e1's registered
        mzxid is at least the mzxid of the first acknowledged change after e2's registration)."""
    violations = []
    regs = {o["reg"]: o for o in ops if o["f"] == "register" and o["type"] == "ok"}
    events = sorted((o for o in ops if o["f"] == "event"), key=lambda o: o["seq"])
    data_events = [e for e in events if e["etype"] in ("CHANGED", "DELETED", "CREATED")]
    # Kazoo (2.8) drops every data watch when its connection is lost (SUSPENDED: it fires them
    # with type NONE and sends no SetWatches on reconnect), so any state change ends the
    # registrations made before it.
    lost_at = [o["invoke"] for o in ops if o["f"] == "state"]
    done = [o["invoke"] for o in ops if o["f"] == "done"]
    done_t = max(done) if done else None
    sets = {}
    for o in ops:
        if o["f"] == "set" and o["type"] == "ok":
            sets.setdefault(o["value"], []).append(o)
    for node in sets:
        sets[node].sort(key=lambda o: o["mzxid"])

    def first_change_after(node, z):
        return next((s for s in sets.get(node, ()) if s["mzxid"] > z), None)

    fired = {}
    for e in data_events:
        if e["reg"] in fired:
            violations.append({"what": "watch delivered twice", "event": e, "first": fired[e["reg"]]})
        else:
            fired[e["reg"]] = e
    regs_by_node = {}
    for r in regs.values():
        regs_by_node.setdefault(r["node"], []).append(r)
    for node in regs_by_node:
        regs_by_node[node].sort(key=lambda r: r["invoke"])
    for rid, e in fired.items():
        r = regs.get(rid)
        if r is None or e["etype"] != "CHANGED":
            continue
        later = [x for x in regs_by_node[r["node"]] if x["invoke"] > e["invoke"]]
        if later and later[0]["mzxid"] <= r["mzxid"]:
            violations.append({"what": "event without a newer change visible after it", "register": r,
                               "event": e, "next_read": later[0]})
    if done_t is not None:
        for rid, r in regs.items():
            if rid in fired or any(t >= r["invoke"] for t in lost_at):
                continue
            s = first_change_after(r["node"], r["mzxid"])
            if s and s["complete"] < done_t - 2.0:
                violations.append({"what": "watch never delivered", "register": r, "change": s})
    for i, e2 in enumerate(data_events):
        r2 = regs.get(e2["reg"])
        # Only events registered and delivered on one connection: across a reconnect the new
        # server's stream (and SetWatches) promise no order relative to the old one's.
        if r2 is None or r2["epoch"] != e2["epoch"]:
            continue
        s2 = first_change_after(r2["node"], r2["mzxid"])
        if s2 is None:
            continue
        for e1 in data_events[:i]:
            r1 = regs.get(e1["reg"])
            if r1 is None or not r1["epoch"] == e1["epoch"] == e2["epoch"]:
                continue
            if r1["mzxid"] >= s2["mzxid"]:
                violations.append({"what": "watch events out of zxid order", "first": e1, "second": e2,
                                   "first_registered_at": r1["mzxid"], "second_change": s2["mzxid"]})
    return _verdict(violations, registrations=len(regs), events=len(data_events))
