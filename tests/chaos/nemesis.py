"""The fault schedule of one chaos run, drawn from its seed, and the faults themselves.

Faults on servers: kill -9 (leader, follower, any) then restart; SIGSTOP then SIGCONT; a
partition (isolate one, isolate the leader, a bridge where two halves share one server, a ring
on 5, a random minority/majority split); kill -9, wipe the data directory, restart; kill -9
and restart in a time namespace whose CLOCK_MONOTONIC is ahead by minutes to hours (a clock
jump); a data disk that fills (its tmpfs) and is freed. On clients: kill -9 of a lock or
ephemeral-owner process (a replacement starts), and SIGSTOP of one for longer than its session
timeout.

The seed fixes the kinds, durations and gaps; which server is "the leader" is whatever the
ensemble says at that moment, so a replay repeats the schedule, not every interleaving.
Overlap: a new fault may start while others run, but at most one partition at a time, at most
(n-1)/2 servers down or stopped or with a full disk at once, and a wipe only when nothing else
is happening to the servers (Raft forgets a vote with its disk: wiping more is a different
promise). Every fault is logged with its start and end times (faults.jsonl).
"""

import json
import random
import signal
import time

SERVER_KINDS = [  # (kind, weight)
    ("kill_leader", 3), ("kill_follower", 2), ("kill_any", 2), ("pause_server", 3),
    ("isolate_one", 2), ("isolate_leader", 3), ("bridge", 2), ("ring", 1), ("split", 1),
    ("wipe", 1), ("clock_jump", 1), ("disk_full", 1)]
CLIENT_KINDS = [("kill_client", 2), ("pause_client", 2)]
PARTITIONS = {"isolate_one", "isolate_leader", "bridge", "ring", "split"}
DOWN = {"kill_leader", "kill_follower", "kill_any", "pause_server", "wipe", "clock_jump", "disk_full"}


class Nemesis:
    """Starts and ends faults on a Cluster and on client processes (via the driver's
    callbacks). step() is called often; it ends faults whose time is up and starts the next
    one when its time comes."""

    def __init__(self, seed, cluster, clients, log_path, session_timeout, margin, kinds=None,
                 sequence=None):
        self.rnd = random.Random(seed)
        self.cluster, self.clients = cluster, clients
        self.session_timeout, self.margin = session_timeout, margin
        self.log_file = open(log_path, "a")
        self.active, self.done = [], []
        self.next_at = time.monotonic() + 2.0
        weights = SERVER_KINDS + CLIENT_KINDS
        if kinds is not None:
            weights = [(k, w) for k, w in weights if k in kinds]
        self.kinds = [k for k, _ in weights]
        self.weights = [w for _, w in weights]
        # sequence: these kinds in this order, one after another, short (the CI set, so that a
        # few short runs surely cover every kind); a fault that cannot start yet is retried
        self.sequence, self.position = list(sequence or []), 0

    def log(self, rec):
        self.log_file.write(json.dumps(rec) + "\n")
        self.log_file.flush()
        end = rec.get("end")
        print("  fault %-14s %-10s start %8.2f%s %s" % (
            rec["kind"], rec.get("target", ""), rec["start"],
            "  end %8.2f" % end if end else "", rec.get("detail", "")), flush=True)

    # -- choosing -------------------------------------------------------------------------

    def busy_servers(self):
        return {s for f in self.active if f["kind"] in DOWN for s in f["servers"]}

    def step(self, now):
        for f in [f for f in self.active if f["end"] <= now]:
            self.end(f)
        if now < self.next_at or not (self.kinds or self.sequence):
            return
        if self.sequence:
            if self.position >= len(self.sequence):
                return
            kind = self.sequence[self.position]
            duration = self.rnd.uniform(1.5, 3.0)
            if self.begin(kind, duration, now):
                self.position += 1
                self.next_at = now + duration + self.rnd.uniform(0.5, 1.0)
            else:
                self.next_at = now + 0.3
            return
        kind = self.rnd.choices(self.kinds, self.weights)[0]
        duration = self.rnd.uniform(1.5, 6.0)
        overlap = self.rnd.random() < 0.4
        self.next_at = now + (duration * self.rnd.uniform(0.2, 0.8) if overlap else
                              duration + self.rnd.uniform(0.5, 2.0))
        self.begin(kind, duration, now)

    def pick_server(self, kind):
        c = self.cluster
        free = [i for i in c.ids if i not in self.busy_servers() and c.running(i)]
        if kind in ("kill_leader", "isolate_leader"):
            lead = c.leader()
            return lead if lead in free else None
        if kind == "kill_follower":
            lead = c.leader()
            free = [i for i in free if i != lead]
        return self.rnd.choice(free) if free else None

    def begin(self, kind, duration, now):
        c = self.cluster
        if kind in PARTITIONS and any(f["kind"] in PARTITIONS for f in self.active):
            return False
        if kind in DOWN and len(self.busy_servers()) >= (c.n - 1) // 2:
            return False
        if kind == "wipe" and any(f["kind"] in DOWN or f["kind"] in PARTITIONS for f in self.active):
            return False
        f = {"kind": kind, "start": now, "end": now + duration, "servers": []}
        if kind in ("kill_leader", "kill_follower", "kill_any", "wipe", "clock_jump"):
            i = self.pick_server(kind)
            if i is None:
                return False
            c.kill9(i)
            if kind == "wipe":
                c.wipe(i)
            f.update(servers=[i], target="s%d" % i)
            if kind == "clock_jump":
                # backwards only as far as the machine's uptime allows (a clock stays >= 0)
                back = min(7200, int(time.monotonic()) - 60)
                f["offset"] = (-self.rnd.randrange(60, back) if back > 120 and self.rnd.random() < 0.5
                               else self.rnd.randrange(120, 7200))
                f["detail"] = "restart with CLOCK_MONOTONIC %+d s" % f["offset"]
                # the jump is the restart itself: no down time beyond a short pause
                f["end"] = now + 0.5
        elif kind == "pause_server":
            i = self.pick_server(kind)
            if i is None:
                return False
            if self.rnd.random() < 0.4:
                duration = self.session_timeout + self.margin + self.rnd.uniform(0.5, 3.0)
                f["end"] = now + duration
            c.signal(i, signal.SIGSTOP)
            f.update(servers=[i], target="s%d" % i)
        elif kind == "disk_full":
            i = self.pick_server(kind)
            if i is None:
                return False
            c.fill_disk(i)
            f.update(servers=[i], target="s%d" % i)
        elif kind in PARTITIONS:
            ids = list(c.ids)
            if kind in ("isolate_one", "isolate_leader"):
                i = c.leader() if kind == "isolate_leader" else self.rnd.choice(ids)
                if i is None:
                    return False
                pairs = [(i, j) for j in ids if j != i]
                f["target"] = "s%d" % i
            elif kind == "bridge":
                self.rnd.shuffle(ids)
                mid = len(ids) // 2
                a, hub, b = ids[:mid], ids[mid], ids[mid + 1:]
                pairs = [(x, y) for x in a for y in b]
                f["target"] = "%s|%d|%s" % (a, hub, b)
            elif kind == "ring":
                if c.n < 5:
                    return False
                self.rnd.shuffle(ids)
                adjacent = {frozenset((ids[k], ids[(k + 1) % len(ids)])) for k in range(len(ids))}
                pairs = [(x, y) for x in ids for y in ids if x < y and frozenset((x, y)) not in adjacent]
                f["target"] = "ring%s" % ids
            else:
                self.rnd.shuffle(ids)
                k = self.rnd.randrange(1, (c.n - 1) // 2 + 1)
                pairs = [(x, y) for x in ids[:k] for y in ids[k:]]
                f["target"] = "%s|%s" % (ids[:k], ids[k:])
            c.cut(pairs)
            f["pairs"] = pairs
        elif kind in ("kill_client", "pause_client"):
            name = self.clients.pick(self.rnd, holder_first=kind == "pause_client")
            if name is None:
                return False
            f.update(target=name, process=name)
            if kind == "kill_client":
                self.clients.kill(name)
                f["end"] = now + 0.5  # the replacement starts when the fault ends
            else:
                f["end"] = now + self.session_timeout + self.margin + self.rnd.uniform(0.5, 2.0)
                self.clients.stop(name)
        self.active.append(f)
        self.log({k: v for k, v in f.items() if k not in ("pairs",)} | {"end": None, "event": "begin"})
        return True

    def end(self, f):
        c = self.cluster
        kind = f["kind"]
        if kind in ("kill_leader", "kill_follower", "kill_any", "wipe"):
            c.start(f["servers"][0])
        elif kind == "clock_jump":
            c.start(f["servers"][0], clock_offset=f["offset"])
        elif kind == "pause_server":
            c.signal(f["servers"][0], signal.SIGCONT)
        elif kind == "disk_full":
            c.free_disk(f["servers"][0])
            if not c.running(f["servers"][0]):
                f["detail"] = "server exited while the disk was full (%s)" % c.procs[f["servers"][0]].returncode
                c.start(f["servers"][0])
        elif kind in PARTITIONS:
            c.heal_network()
        elif kind == "kill_client":
            self.clients.replace(f["process"])
        elif kind == "pause_client":
            self.clients.cont(f["process"])
        f["end"] = time.monotonic()
        self.active.remove(f)
        self.done.append(f)
        self.log({k: v for k, v in f.items() if k not in ("pairs",)} | {"event": "end"})

    def heal_all(self):
        for f in list(self.active):
            self.end(f)
        self.cluster.heal_network()
        for i in self.cluster.ids:
            if not self.cluster.running(i):
                self.cluster.start(i)
            self.cluster.signal(i, signal.SIGCONT)
