#!/usr/bin/python3
"""The HTTP AdminServer against Apache ZooKeeper 3.8's (Debian's zookeeper with its AdminServer
on: the Jetty 9 jars its manifest names plus servlet-api.jar). Both servers get the same load
(two kazoo sessions, znodes, an ephemeral, watches); then, for every command:

  - the same command list at /commands (zkraft behaves as 3.9.4, which adds snapshot and restore:
    the rest must be identical, links and order);
  - for each command ZooKeeper 3.8 lists, under its primary name and one alias: the same status
    code, the same "command" and "error", the same keys with the same JSON types, nested objects
    and lists compared the same way (values compared by type; objects keyed by ids or times are
    compared by the form of their keys). The counts that follow from the load (znodes,
    ephemerals, watches, sessions, connections) must be equal. `monitor` is compared on the keys
    both have (3.8 adds its metrics provider's hundreds of gauges); `environment` and
    `system_properties` describe a JVM in 3.8: same keys for environment, text values for both;
  - the same refusals: an unknown command, PUT/DELETE (405), TRACE (403), POST to a GET command
    (405: 3.8 has no POST; 3.9.4 has one for restore), a path outside the command URL (404).

zkraft only: /health and /ready, snapshot/restore refused without credentials, the idle timeout,
the admin port answering while the client port is kept busy, and a 3-server ensemble (health
503 without a quorum, 200 with one; the members agree on leader, voting view and Raft leader).
Snapshot and restore with credentials: test_admin_snapshot.py.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_admin.py
"""

import json
import logging
import os
import re
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import admin_get_json as get_json, admin_request as request  # noqa: E402
from harness import start_with_admin, wait_for_value as wait_for  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

ADDED_IN_39 = {"snapshot", "restore"}
# alias -> primary (Commands.java); one alias per command that has one.
ALIASES = {"stat": "stats", "srvr": "server_stats", "mntr": "monitor", "cons": "connections",
           "conf": "configuration", "envi": "environment", "crst": "connection_stat_reset",
           "srst": "stat_reset", "gtmk": "get_trace_mask", "stmk": "set_trace_mask",
           "isro": "is_read_only", "icfg": "initial_configuration", "lsnp": "last_snapshot",
           "lead": "leader", "orst": "observer_connection_stat_reset", "obsr": "observers",
           "sysp": "system_properties", "wchc": "watches", "wchp": "watches_by_path",
           "wchs": "watch_summary"}
# Resets go last so the figures of the other commands are not zeroed under them.
LAST = ("connection_stat_reset", "stat_reset", "set_trace_mask")
# Objects whose keys are ids, times or paths: compared by the form of their keys.
MAPS = {"session_id_to_watched_paths", "path_to_session_ids", "expiry_time_to_session_ids",
        "session_id_to_ephemeral_paths", "current_config"}
# Figures the identical load makes identical: (command, path to the value).
EQUAL_COUNTS = [("stats", ("node_count",)), ("server_stats", ("server_stats", "num_alive_client_connections")),
                ("monitor", ("znode_count",)), ("monitor", ("ephemerals_count",)),
                ("monitor", ("watch_count",)), ("monitor", ("global_sessions",)),
                ("monitor", ("num_alive_connections",)), ("watch_summary", ("num_connections",)),
                ("watch_summary", ("num_paths",)), ("watch_summary", ("num_total_watches",))]


ZKRAFT_ONLY = {"test_health_and_ready", "test_snapshot_and_restore_are_refused_without_credentials",
               "test_admin_port_answers_while_the_client_port_is_busy",
               "test_an_idle_connection_is_closed"}


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, list):
        return "list"
    return "object"


def key_form(k):
    return "number" if re.fullmatch(r"-?\d+", k) else "path" if k.startswith("/") else "text"


def shape(v, name=""):
    """The JSON value with every scalar replaced by its type; lists by the shape of their first
    element; id-keyed objects by the forms of their keys and the shape of their first value."""
    t = kind(v)
    if t == "list":
        return ["list", shape(v[0], name) if v else "empty"]
    if t == "object":
        if name in MAPS:
            # The shapes of all values; an empty list only counts when nothing else is there
            # (ZooKeeper's expiry queue keeps an emptied bucket for a while).
            values = {json.dumps(shape(x, "")) for x in v.values()}
            if len(values) > 1:
                values.discard(json.dumps(["list", "empty"]))
            return ["map", sorted({key_form(k) for k in v}), sorted(values)]
        return {k: shape(x, k) for k, x in v.items()}
    return t


def apply_load(srv):
    """Two sessions: znodes, an ephemeral, a data watch and a child watch. Returns the clients."""
    a = KazooClient(hosts=srv.hosts, timeout=10.0)
    b = KazooClient(hosts=srv.hosts, timeout=10.0)
    a.start(timeout=15)
    b.start(timeout=15)
    a.create("/adm", b"x")
    a.create("/adm/child", b"yy")
    b.create("/eph", b"", ephemeral=True)
    a.get("/adm", watch=lambda e: None)
    b.get_children("/adm", watch=lambda e: None)
    return [a, b]


class AdminServerVsZooKeeper(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.servers, cls.clients, cls.answers = {}, [], {}
        try:
            for name, kind_ in (("zookeeper", "zookeeper"), ("zkraft", None)):
                srv = start_with_admin(kind=kind_, name="admin-" + name)
                cls.servers[name] = srv
                cls.clients += apply_load(srv)
            for name, srv in cls.servers.items():
                cls.answers[name] = cls.collect(srv)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for c in cls.clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass
        for srv in cls.servers.values():
            srv.close()

    @classmethod
    def collect(cls, srv):
        status, _, listing = request(srv.admin_port, "GET", "/commands")
        assert status == 200, (status, listing)
        names = re.findall(r'<a href="/commands/([a-z_]+)">\1</a>', listing)
        out = {"listing": listing, "names": names, "commands": {}}
        ordered = [n for n in names if n not in LAST] + [n for n in LAST if n in names]
        for name in ordered:
            if name in ADDED_IN_39:
                continue
            out["commands"][name] = get_json(srv.admin_port, "/commands/" + name)
        for alias, primary in ALIASES.items():
            if primary in out["commands"]:
                out["commands"]["alias:" + alias] = get_json(srv.admin_port, "/commands/" + alias)
        return out

    def test_same_commands_listed_and_39_adds_snapshot_and_restore(self):
        zk, zr = self.answers["zookeeper"], self.answers["zkraft"]
        self.assertEqual(len(zk["names"]), 26)
        added = ADDED_IN_39 if harness.target_kind() == "zkraft" else set()  # 3.8 against itself
        self.assertEqual(set(zr["names"]) - set(zk["names"]), added)
        self.assertEqual(set(zk["names"]) - set(zr["names"]), set())
        # The shared part, link for link and in order (primary names sorted).
        shared = zr["listing"]
        for n in sorted(ADDED_IN_39):
            shared = shared.replace('<a href="/commands/%s">%s</a>\n<br/>\n' % (n, n), "")
        self.assertEqual(shared, zk["listing"])

    def test_every_command_has_zookeepers_keys_and_types(self):
        zk, zr = self.answers["zookeeper"]["commands"], self.answers["zkraft"]["commands"]
        self.assertEqual(set(zk), set(zr))
        self.assertGreaterEqual(len(zk), 26 + len(ALIASES) - 2)
        for name in sorted(zk):
            with self.subTest(command=name):
                (zs, zct, zj), (rs, rct, rj) = zk[name], zr[name]
                self.assertEqual((rs, rct), (zs, zct))
                self.assertEqual(rj["command"], zj["command"])
                self.assertEqual(rj["error"], zj["error"])
                primary = name.split(":")[-1]
                primary = ALIASES.get(primary, primary)
                if primary == "monitor":
                    shared = set(zj) & set(rj)
                    # ZooKeeper's own gauges (ZooKeeperServer.registerMetrics) are all there.
                    for k in ("version", "server_state", "uptime", "avg_latency", "max_latency",
                              "min_latency", "packets_received", "packets_sent",
                              "num_alive_connections", "outstanding_requests", "znode_count",
                              "watch_count", "ephemerals_count", "approximate_data_size",
                              "global_sessions", "local_sessions", "open_file_descriptor_count",
                              "max_file_descriptor_count", "last_client_response_size",
                              "max_client_response_size", "min_client_response_size",
                              "auth_failed_count", "non_mtls_remote_conn_count",
                              "non_mtls_local_conn_count", "connection_drop_probability",
                              "outstanding_tls_handshake", "command", "error"):
                        self.assertIn(k, shared)
                    for k in shared:
                        self.assertEqual(shape(rj[k], k), shape(zj[k], k), k)
                elif primary == "system_properties":
                    # A JVM's properties in 3.8; zkraft has no JVM (see admin_json.cc).
                    for j in (zj, rj):
                        self.assertTrue(all(isinstance(v, str) for k, v in j.items()
                                            if k not in ("command", "error")))
                        self.assertEqual(j["zookeeper.admin.serverAddress"], "127.0.0.1")
                else:
                    self.assertEqual(shape(rj), shape(zj))

    def test_counts_that_follow_from_the_load_are_equal(self):
        zk, zr = self.answers["zookeeper"]["commands"], self.answers["zkraft"]["commands"]
        for name, path in EQUAL_COUNTS:
            with self.subTest(command=name, value=path):
                z, r = zk[name][2], zr[name][2]
                for p in path:
                    z, r = z[p], r[p]
                self.assertEqual(r, z)
        for name in ("connections", "stats"):
            self.assertEqual(len(zr[name][2]["connections"]), len(zk[name][2]["connections"]))
        self.assertGreaterEqual(len(zk["connections"][2]["connections"]), 2)
        # One ephemeral owner, the watched paths.
        self.assertEqual(len(zr["dump"][2]["session_id_to_ephemeral_paths"]), 1)
        self.assertEqual(sorted(zr["watches_by_path"][2]["path_to_session_ids"]),
                         sorted(zk["watches_by_path"][2]["path_to_session_ids"]))
        # Latencies and packets are counts: never negative, and sent <= received + 1.
        for j in (zk["server_stats"][2], zr["server_stats"][2]):
            s = j["server_stats"]
            self.assertGreaterEqual(s["packets_received"], 0)
            self.assertLessEqual(s["min_latency"], s["max_latency"])

    def test_refusals_match_zookeeper(self):
        for path, method in (("/commands/nosuch", "GET"), ("/commands/ruok", "PUT"),
                             ("/commands/ruok", "DELETE"), ("/commands/ruok", "TRACE"),
                             ("/commands/stats", "POST"), ("/nosuch", "GET")):
            with self.subTest(method=method, path=path):
                got = {}
                for name, srv in self.servers.items():
                    status, ctype, body = request(srv.admin_port, method, path)
                    got[name] = (status, json.loads(body) if ctype == "application/json" else None)
                self.assertEqual(got["zkraft"], got["zookeeper"])
        status, _, body = request(self.servers["zkraft"].admin_port, "GET", "/commands/nosuch")
        self.assertEqual(json.loads(body), {"command": "nosuch", "error": "Unknown command: nosuch"})

    def test_trace_mask_is_one_for_the_four_letter_words_and_http(self):
        # ZooTrace's mask is process-wide: stmk (the word, then an 8-byte big-endian long) sets
        # what get_trace_mask reads, and set_trace_mask what gtmk reads. Same answers from both.
        def stmk(port, mask):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"stmk" + mask.to_bytes(8, "big"))
                out = b""
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        return out.decode()
                    out += chunk
        got = {}
        for kind, srv in self.servers.items():
            port = srv.admin_port
            answers = [stmk(srv.port, 0x1ff),
                       get_json(port, "/commands/get_trace_mask")[2]["tracemask"],
                       get_json(port, "/commands/set_trace_mask?traceMask=258")[2]["tracemask"],
                       harness.four_letter_word("127.0.0.1", srv.port, "gtmk")]
            got[kind] = answers
            get_json(port, "/commands/set_trace_mask?traceMask=306")  # ZooTrace's default again
        self.assertEqual(got["zkraft"], ["511", 511, 258, "258"])
        self.assertEqual(got["zkraft"], got["zookeeper"])

    # -- zkraft only ----------------------------------------------------------------------------

    def setUp(self):
        if self._testMethodName in ZKRAFT_ONLY and harness.target_kind() != "zkraft":
            self.skipTest("zkraft's own endpoints")

    def test_health_and_ready(self):
        port = self.servers["zkraft"].admin_port
        self.assertEqual(request(port, "GET", "/health")[0::2], (200, "ok: serving as standalone\n"))
        self.assertEqual(request(port, "GET", "/ready")[0], 200)

    def test_snapshot_and_restore_are_refused_without_credentials(self):
        port = self.servers["zkraft"].admin_port
        status, _, body = request(port, "GET", "/commands/snapshot")
        self.assertEqual((status, json.loads(body)),
                         (401, {"command": "snapshot", "error": "Auth info is missing for the command"}))
        self.assertEqual(request(port, "POST", "/commands/restore")[0], 401)

    def test_admin_port_answers_while_the_client_port_is_busy(self):
        srv = self.servers["zkraft"]
        stop = threading.Event()
        errors = []

        def flood():
            # Connections that send a frame header announcing a large request and then trickle:
            # each holds a network thread's attention without completing.
            socks = []
            try:
                while not stop.is_set():
                    s = socket.create_connection((srv.host, srv.port), timeout=5)
                    s.sendall(b"\x00\x00\x10\x00" + b"\x00" * 64)
                    socks.append(s)
                    if len(socks) >= 40:
                        break
                client = KazooClient(hosts=srv.hosts, timeout=10.0)
                client.start(timeout=15)
                i = 0
                while not stop.is_set():
                    client.create_async("/busy-", b"z" * 512, sequence=True)
                    i += 1
                    if i % 200 == 0:
                        time.sleep(0.001)
                client.stop()
                client.close()
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)
            finally:
                for s in socks:
                    s.close()

        t = threading.Thread(target=flood)
        t.start()
        try:
            time.sleep(0.5)
            worst = 0.0
            for _ in range(10):
                t0 = time.monotonic()
                status, _, body = request(srv.admin_port, "GET", "/commands/ruok", timeout=5)
                worst = max(worst, time.monotonic() - t0)
                self.assertEqual(status, 200)
                time.sleep(0.05)
        finally:
            stop.set()
            t.join(30)
        self.assertEqual(errors, [])
        self.assertLess(worst, 2.0)

    def test_an_idle_connection_is_closed(self):
        srv = harness.Server(admin_port=harness.free_port(), name="admin-idle",
                             extra_cfg={"admin.idleTimeout": 300})
        with srv:
            s = socket.create_connection(("127.0.0.1", srv.admin_port), timeout=5)
            t0 = time.monotonic()
            self.assertEqual(s.recv(100), b"")  # closed by the server
            waited = time.monotonic() - t0
            s.close()
        self.assertGreaterEqual(waited, 0.2)
        self.assertLess(waited, 3.0)



class AdminEnsemble(unittest.TestCase):
    """zkraft only: a 3-server ensemble with an AdminServer on every member. One member alone
    has no quorum: /health and /ready say 503 and why, server commands are refused as ZooKeeper
    refuses them; once a quorum forms, every member is healthy and the members agree on the
    leader, the voting view and the Raft term."""

    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft's own endpoints")
        import ensemble
        self.ens = ensemble.with_admin_ports(ensemble.Ensemble(3, name="adm"))

    def tearDown(self):
        self.ens.close()

    def test_health_follows_the_quorum_and_members_agree_on_the_leader(self):
        first = self.ens.members[0]
        first.launch()
        health = wait_for(lambda: request(first.admin_port, "GET", "/health", timeout=2))
        self.assertIsNotNone(health, first.log_tail(20))
        self.assertEqual(health[0::2], (503, "no leader known: not in a quorum, not serving clients\n"))
        self.assertEqual(request(first.admin_port, "GET", "/ready")[0], 503)
        status, _, j = get_json(first.admin_port, "/commands/stat")
        self.assertEqual((status, j), (200, {"command": "stat", "error":
                                             "This ZooKeeper instance is not currently serving requests"}))
        status, _, z = get_json(first.admin_port, "/commands/zabstate")  # not server-required
        self.assertEqual((status, z["zabstate"], z["myid"], z["voting"]), (200, "election", 1, True))

        for m in self.ens.members[1:]:
            m.launch()
        for m in self.ens.members:
            ok = wait_for(lambda: request(m.admin_port, "GET", "/health", timeout=2)[0] == 200, 30)
            self.assertTrue(ok, m.log_tail(20))
        leaders = [get_json(m.admin_port, "/commands/leader")[2] for m in self.ens.members]
        self.assertEqual(sum(1 for j in leaders if j["is_leader"]), 1, leaders)
        self.assertEqual(len({j["leader_id"] for j in leaders}), 1, leaders)
        self.assertIn(leaders[0]["leader_id"], (1, 2, 3))
        self.assertEqual({j["leader_ip"] for j in leaders}, {"127.0.0.1"})
        for m in self.ens.members:
            view = get_json(m.admin_port, "/commands/voting_view")[2]["current_config"]
            self.assertEqual(sorted(view), ["1", "2", "3"])
            self.assertEqual({v["learner_type"] for v in view.values()}, {"participant"})
            z = get_json(m.admin_port, "/commands/zabstate")[2]
            self.assertEqual((z["zabstate"], z["voting"], z["myid"]), ("broadcast", True, m.myid))
            self.assertEqual(z["raft"]["leader_id"], leaders[0]["leader_id"])
            body = request(m.admin_port, "GET", "/health")[2]
            self.assertRegex(body, r"^ok: serving as (leader|follower), leader [123], term \d+\n$")


if __name__ == "__main__":
    harness.run_suite()
