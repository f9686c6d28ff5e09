#!/usr/bin/python3
"""zkraft only: the AdminServer's snapshot and restore commands with credentials (refused without
them: test_admin.py). A snapshot is allowed by the ACL of "/" and carries its bytes and last_zxid
header; restoring it into a fresh server gives the same tree (compared with Kazoo: data, ACLs,
every stat field); a body that is not a state is refused (500); the rate limits hold; and in an
ensemble a restore goes through the leader and reaches every member (a follower answers 503
naming the leader).

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_admin_snapshot.py
"""

import http.client
import json
import logging
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import admin_get_json as get_json, admin_request as request  # noqa: E402
from harness import start_with_admin, wait_for_value as wait_for  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


def post(port, path, body, auth=None, timeout=30.0):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/octet-stream"}
        if auth:
            headers["Authorization"] = auth
        c.request("POST", path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


def take_snapshot(port, auth):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", "/commands/snapshot", headers={"Authorization": auth} if auth else {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def tree_of(client, path="/"):
    """Every znode under `path`: data, ACLs and the stat fields a restore must keep."""
    out = {}
    data, stat = client.get(path)
    acls, _ = client.get_acls(path)
    out[path] = (data, sorted((a.perms, a.id.scheme, a.id.id) for a in acls),
                 (stat.czxid, stat.mzxid, stat.pzxid, stat.ctime, stat.mtime, stat.version,
                  stat.cversion, stat.aversion, stat.ephemeralOwner, stat.dataLength, stat.numChildren))
    for child in client.get_children(path):
        out.update(tree_of(client, (path.rstrip("/") + "/" + child)))
    return out


def fill(client):
    from kazoo.security import make_digest_acl
    client.add_auth("digest", "bob:pw")
    client.create("/app/config", b"x" * 300, makepath=True)
    for i in range(20):
        client.create("/app/items/item-", b"%d" % i, sequence=True, makepath=True)
    client.set("/app/config", b"second version")
    client.create("/app/locked", b"secret", acl=[make_digest_acl("bob", "pw", all=True)])
    client.create("/app/eph", b"e", ephemeral=True)
    client.create("/app/container", b"")
    client.create("/app/container/child", b"c")


class SnapshotAndRestore(unittest.TestCase):
    """zkraft only: snapshot a filled tree over HTTP with credentials, restore it into a fresh
    server, and compare the two trees with Kazoo (data, ACLs, every stat field); refused without
    credentials; an input that is not a state is refused (500) and the rate limit holds."""

    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft's own endpoints")
        self.servers, self.clients = [], []

    def tearDown(self):
        for c in self.clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass
        for s in self.servers:
            s.close()

    def client(self, srv):
        c = KazooClient(hosts=srv.hosts, timeout=10.0)
        c.start(timeout=15)
        self.clients.append(c)
        return c

    def test_snapshot_with_credentials_follows_the_root_acl(self):
        # A server of its own: the test changes the ACL of "/".
        from kazoo.security import make_digest_acl
        srv = start_with_admin(name="admin-snap")
        try:
            c = KazooClient(hosts=srv.hosts, timeout=10.0)
            c.start(timeout=15)
            c.create("/snap", b"v" * 100)
            port = srv.admin_port
            zxid = "0x%x" % c.exists("/snap").mzxid

            def snap(auth, path="/commands/snapshot"):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                try:
                    conn.request("GET", path, headers={"Authorization": auth})
                    r = conn.getresponse()
                    return r.status, dict(r.getheaders()), r.read()
                finally:
                    conn.close()

            status, headers, body = snap("digest bob:pw")  # "/" is world:anyone:cdrwa
            self.assertEqual(status, 200)
            self.assertEqual(headers["Content-Type"], "application/octet-stream")
            self.assertEqual(headers["last_zxid"], zxid)
            self.assertEqual(int(headers["snapshot_size"]), len(body))
            self.assertGreater(len(body), 100)
            self.assertEqual(snap("digest bob:pw")[0], 429)  # one per 300 ms, as ZooKeeper
            time.sleep(0.35)
            status, headers, body = snap("digest bob:pw", "/commands/snapshot?streaming=false")
            self.assertEqual((status, json.loads(body)), (200, {"command": "snapshot", "error": None}))
            # Only alice may do everything on "/" now; ip is not enough either.
            c.add_auth("digest", "alice:pw")
            c.set_acls("/", [make_digest_acl("alice", "pw", all=True)])
            self.assertEqual(snap("digest bob:pw")[0:3:2], (403, b'{\n  "command": "snapshot",\n  "error": "Not authorized"\n}'))
            self.assertEqual(snap("ip")[0], 403)
            time.sleep(0.35)
            self.assertEqual(snap("digest alice:pw")[0], 200)
            self.assertEqual(snap("sasl alice")[0], 401)
            c.stop()
            c.close()
        finally:
            srv.close()

    def test_restore_into_a_fresh_server_gives_the_same_tree(self):
        src = start_with_admin(name="snap-src")
        self.servers.append(src)
        a = self.client(src)
        fill(a)
        want = tree_of(a)
        status, headers, state = take_snapshot(src.admin_port, "digest bob:pw")
        self.assertEqual(status, 200)
        self.assertEqual(int(headers["snapshot_size"]), len(state))
        self.assertEqual(headers["last_zxid"], "0x%x" % a.exists("/app/container/child").mzxid)

        dst = start_with_admin(name="restore-dst")
        self.servers.append(dst)
        b = self.client(dst)
        b.create("/before-restore", b"goes away")
        port = dst.admin_port
        self.assertEqual(post(port, "/commands/restore", state)[0], 401)  # no credentials
        self.assertEqual(post(port, "/commands/restore", state, "sasl bob")[0], 401)
        status, body = post(port, "/commands/restore", state, "digest bob:pw")
        self.assertEqual(status, 200, body)
        answer = json.loads(body)
        self.assertEqual(sorted(answer), ["command", "error", "last_zxid"])
        self.assertEqual((answer["command"], answer["error"]), ("restore", None))
        self.assertIsInstance(answer["last_zxid"], int)
        # ZooKeeper's RateLimiter: one restore per five minutes.
        self.assertEqual(post(port, "/commands/restore", state, "digest bob:pw")[0], 429)

        c = self.client(dst)
        # The locked node's ACL came along: only bob reads it.
        from kazoo.exceptions import NoAuthError
        with self.assertRaises(NoAuthError):
            c.get("/app/locked")
        c.add_auth("digest", "bob:pw")
        got = tree_of(c)
        self.assertEqual(sorted(got), sorted(want))
        for path in want:
            self.assertEqual(got[path], want[path], path)
        self.assertIsNone(c.exists("/before-restore"))
        self.assertEqual(len([p for p in got if p.startswith("/app/items/")]), 20)
        # The restored server takes writes; zxids go on from the log, past the restore's.
        c.create("/after", b"new")
        self.assertGreater(c.exists("/after").czxid, answer["last_zxid"])
        # The source's session came along with its ephemeral: it expires here in its own time
        # (the source's client is still alive, on the source).
        self.assertIsNotNone(c.exists("/app/eph"))
        counts = [get_json(s.admin_port, "/commands/monitor")[2] for s in (src, dst)]
        self.assertEqual(counts[1]["znode_count"], counts[0]["znode_count"] + 1)  # and /after
        self.assertEqual(counts[1]["ephemerals_count"], counts[0]["ephemerals_count"])

    def test_a_body_that_is_not_a_state_is_refused(self):
        srv = start_with_admin(name="restore-bad")
        self.servers.append(srv)
        status, body = post(srv.admin_port, "/commands/restore", b"Invalid snapshot data", "digest bob:pw")
        self.assertEqual(status, 500, body)
        self.assertEqual(json.loads(body)["command"], "restore")
        status, body = post(srv.admin_port, "/commands/restore", b"", "digest bob:pw")
        self.assertEqual(status, 400, body)
        self.assertEqual(request(srv.admin_port, "GET", "/commands/restore",
                                 headers={"Authorization": "digest bob:pw"})[0], 405)


class EnsembleRestore(unittest.TestCase):
    """zkraft only: a 3-server ensemble with an AdminServer on every member; a restore is one log
    entry, proposed by the leader, applied by every member."""

    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft's own endpoints")
        import ensemble
        self.ens = ensemble.with_admin_ports(ensemble.Ensemble(3, name="adm"))

    def tearDown(self):
        self.ens.close()

    def test_a_restore_goes_through_the_leader_and_reaches_every_member(self):
        for m in self.ens.members:
            m.launch()
        for m in self.ens.members:
            ok = wait_for(lambda: request(m.admin_port, "GET", "/health", timeout=2)[0] == 200, 30)
            self.assertTrue(ok, m.log_tail(20))
        leader_id = get_json(self.ens.members[0].admin_port, "/commands/leader")[2]["leader_id"]
        leader = next(m for m in self.ens.members if m.myid == leader_id)
        follower = next(m for m in self.ens.members if m.myid != leader_id)
        c = KazooClient(hosts=leader.hosts, timeout=10.0)
        c.start(timeout=15)
        try:
            c.create("/in-snapshot", b"1")
            status, _, state = take_snapshot(leader.admin_port, "digest bob:pw")
            self.assertEqual(status, 200)
            c.create("/after-snapshot", b"2")
        finally:
            c.stop()
            c.close()
        # A member that is not the leader says where to send it (the restore is one log entry).
        status, body = post(follower.admin_port, "/commands/restore", state, "digest bob:pw")
        self.assertEqual(status, 503, body)
        self.assertIn("leader (server %d)" % leader_id, json.loads(body)["error"])
        status, body = post(leader.admin_port, "/commands/restore", state, "digest bob:pw")
        self.assertEqual(status, 200, body)
        for m in self.ens.members:
            k = KazooClient(hosts=m.hosts, timeout=10.0)
            k.start(timeout=15)
            try:
                k.sync("/")
                self.assertIsNotNone(k.exists("/in-snapshot"), m.myid)
                self.assertIsNone(k.exists("/after-snapshot"), m.myid)
            finally:
                k.stop()
                k.close()


if __name__ == "__main__":
    harness.run_suite()
