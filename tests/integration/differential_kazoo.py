"""The differential test's Kazoo script (run_script) and its transcript: two kazoo sessions doing
CRUD, errors, multi, ephemerals, the Stat, data and ACL of every node, negotiated session timeouts,
normalised so that two servers' runs compare equal (test_differential.py explains the rules)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zkwire  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import KazooException  # noqa: E402


STAT_FIELDS = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
               "ephemeralOwner", "dataLength", "numChildren", "pzxid")


class Transcript:
    """Records each step as a JSON-able value; stats are kept raw until normalise()."""

    def __init__(self):
        self.steps = []

    def stat(self, st):
        return {"__stat__": [getattr(st, f) for f in STAT_FIELDS]}

    def value(self, v):
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, bytes):
            return "b:" + v.decode("latin-1")
        if hasattr(v, "czxid") and hasattr(v, "pzxid"):
            return self.stat(v)
        if isinstance(v, Exception):
            return "error:" + type(v).__name__
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if hasattr(v, "perms") and hasattr(v, "id"):
            return ["acl", v.perms, v.id.scheme, v.id.id]
        return repr(v)

    def do(self, label, fn):
        try:
            out = fn()
        except KazooException as e:
            out = e
        self.steps.append([label, self.value(out)])
        return out

    def normalise(self, sessions):
        zxids = set()

        def collect(v):
            if isinstance(v, dict):
                s = v["__stat__"]
                for i in (0, 1, 10):
                    if s[i]:
                        zxids.add(s[i])
            elif isinstance(v, list):
                for x in v:
                    collect(x)

        collect(self.steps)
        rank = {z: "z%d" % (i + 1) for i, z in enumerate(sorted(zxids))}
        sess = {sid: "s%d" % (i + 1) for i, sid in enumerate(sessions)}

        def norm(v):
            if isinstance(v, dict):
                s = v["__stat__"]
                out = dict(zip(STAT_FIELDS, s))
                for f in ("czxid", "mzxid", "pzxid"):
                    out[f] = rank.get(out[f], 0)
                out["ctime"] = out["mtime"] = "t"
                eo = out["ephemeralOwner"]
                out["ephemeralOwner"] = 0 if eo == 0 else sess.get(eo, "s?")
                return out
            if isinstance(v, list):
                return [norm(x) for x in v]
            return v

        return [json.dumps(norm(step), sort_keys=True) for step in self.steps]


def walk(zk, path, tr):
    """Record data, stat and ACL of every node under path, depth-first in sorted order."""
    data, st = zk.get(path)
    tr.steps.append(["node " + path, [tr.value(data), tr.stat(st), tr.value(zk.get_acls(path)[0])]])
    for child in sorted(zk.get_children(path)):
        walk(zk, (path.rstrip("/") + "/" + child), tr)


def run_script(server):
    tr = Transcript()
    a = KazooClient(hosts=server.hosts, timeout=30.0)
    b = KazooClient(hosts=server.hosts, timeout=30.0)
    a.start(timeout=20)
    b.start(timeout=20)
    sessions = [a.client_id[0], b.client_id[0]]
    try:
        tr.do("fresh /", lambda: a.exists("/"))
        tr.do("fresh /zookeeper", lambda: a.exists("/zookeeper"))
        tr.do("create2 /d", lambda: a.create("/d", b"root", include_data=True))
        tr.do("create /d/a", lambda: a.create("/d/a", b"1"))
        tr.do("create seq /d/a/x-", lambda: a.create("/d/a/x-", b"", sequence=True, include_data=True))
        tr.do("create eph /d/eph (s2)", lambda: b.create("/d/eph", b"e", ephemeral=True, include_data=True))
        tr.do("create eph seq /d/a/es- (s2)", lambda: b.create("/d/a/es-", ephemeral=True, sequence=True))
        tr.do("set /d/a", lambda: a.set("/d/a", b"22"))
        tr.do("set /d/a v1", lambda: a.set("/d/a", b"333", version=1))
        tr.do("set /d/a v0 (bad version)", lambda: a.set("/d/a", b"x", version=0))
        tr.do("create /d/a again", lambda: a.create("/d/a"))
        tr.do("delete /d/a (not empty)", lambda: a.delete("/d/a"))
        tr.do("delete /d/nope", lambda: a.delete("/d/nope"))
        tr.do("create under ephemeral", lambda: a.create("/d/eph/child"))
        tr.do("create missing parent", lambda: a.create("/d/no/parent"))
        tr.do("get /d/nope", lambda: a.get("/d/nope"))
        tr.do("exists /d/nope", lambda: a.exists("/d/nope"))
        tr.do("children /d/a", lambda: sorted(a.get_children("/d/a")))
        tr.do("children2 /d/a", lambda: (lambda r: [sorted(r[0]), r[1]])(a.get_children("/d/a", include_data=True)))

        def ok_multi():
            t = a.transaction()
            t.create("/d/m1", b"m")
            t.create("/d/m2", b"x")
            t.set_data("/d", b"r2", version=0)
            t.check("/d/a", 2)
            t.delete("/d/a/x-0000000000")
            return t.commit()

        def bad_multi():
            t = a.transaction()
            t.create("/d/m3")
            t.set_data("/d/m1", b"q")
            t.delete("/d/missing")
            t.create("/d/m4")
            return t.commit()

        tr.do("multi ok", ok_multi)
        tr.do("multi failing", bad_multi)
        tr.do("create seq /d/a/y-", lambda: a.create("/d/a/y-", sequence=True))
        tr.do("delete /d/m1", lambda: a.delete("/d/m1"))
        tr.do("set empty /d/m2", lambda: a.set("/d/m2", b""))
        tr.do("set_acls /d/m2", lambda: a.set_acls("/d/m2", a.get_acls("/d/m2")[0], version=0))
        tr.do("sync", lambda: a.sync("/d"))
        walk(a, "/", tr)
        tr.do("close s2", lambda: b.stop())
        tr.do("after close /d/eph", lambda: a.exists("/d/eph"))
        tr.do("create /d/after", lambda: a.create("/d/after", include_data=True))
        walk(a, "/d", tr)
        tr.do("stat /", lambda: a.exists("/"))
    finally:
        for c in (a, b):
            try:
                c.stop()
                c.close()
            except Exception:
                pass
    # negotiated session timeouts (min 1000, max 60000 in the harness config)
    for asked in (10, 1000, 4321, 60000, 10**7):
        raw = zkwire.RawSession(server.host, server.port, timeout_ms=asked)
        tr.steps.append(["negotiate %d" % asked, raw.timeout_ms])
        raw.close_session()
    return tr.normalise(sessions)
