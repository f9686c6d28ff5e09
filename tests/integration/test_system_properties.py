#!/usr/bin/python3
"""ZooKeeper server properties set as a rig sets them: -Dname=value words (what zkServer.sh puts on
java's command line from SERVER_JVMFLAGS / JVMFLAGS) and zoo.cfg keys. Each test runs against
Apache ZooKeeper 3.8 (the words on its java command line) and the target (the words in its
SERVER_JVMFLAGS), so the expected behaviour is ZooKeeper's.

  zookeeper.enforceQuota   hard quota limits refuse creates and setData with QuotaExceeded
                           (-125); soft ones never refuse; count includes the quota'd node.
                           Precedence: zoo.cfg's enforceQuota beats -Dzookeeper.enforceQuota
                           (QuorumPeerConfig sets "zookeeper." + key for keys it does not know).
  znode.container.checkIntervalMs  a small interval removes an empty container quickly.
  on a 3-server ensemble         both: a follower's client is refused past the hard quota, and
                                 the leader's reaper removes the container it emptied.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_system_properties.py
"""

import logging
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire as W  # noqa: E402
from ensemble import Ensemble  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

QUOTA_EXCEEDED = -125
NO_NODE = -101
OP_CREATE_CONTAINER = 19
CONTAINER = 4
HARD_LIMITS = "count=-1,bytes=-1=;byteHardLimit=10;countHardLimit=3"  # StatsTrack, as setquota writes it
SOFT_LIMITS = "count=1,bytes=1"


def quota_script(server):
    """Creates and setData under a hard and a soft quota; every step's error code (and the stats
    node's text, which says what counts). Node names and data sizes are the only inputs."""
    raw = W.RawSession(server.host, server.port, timeout_ms=10000)
    out = []

    def create(path, data=b""):
        err, _ = raw.create(path, data)
        out.append(["create %s %d bytes" % (path, len(data)), err])

    def set_data(path, data):
        _, (_, _, err, _) = raw.call(W.OP_SETDATA, W.ustring(path) + W.buffer(data) + W.int32(-1))
        out.append(["setData %s %d bytes" % (path, len(data)), err])

    def delete(path):
        _, (_, _, err, _) = raw.call(W.OP_DELETE, W.ustring(path) + W.int32(-1))
        out.append(["delete " + path, err])

    def stats(prefix):
        _, (_, _, err, body) = raw.call(W.OP_GETDATA, W.ustring("/zookeeper/quota%s/zookeeper_stats" % prefix)
                                        + W.boolean(False))
        out.append(["stats " + prefix, err, W.Decoder(body).buffer().decode() if err == 0 else None])

    def multi_create(path):
        body = W.multi_body([(W.OP_CREATE, W.create_body(path, b""))])
        _, (_, _, err, reply) = raw.call(W.OP_MULTI, body)
        out.append(["multi create " + path, err, reply.hex()])

    try:
        create("/q", b"ab")
        create("/zookeeper/quota/q")
        create("/zookeeper/quota/q/zookeeper_limits", HARD_LIMITS.encode())
        create("/zookeeper/quota/q/zookeeper_stats", b"count=0,bytes=0")
        stats("/q")                       # recounted: the node itself counts
        create("/q/a", b"abc")            # count 2, bytes 5
        create("/q/b")                    # count 3: the limit
        create("/q/c")                    # count 4: refused when enforced
        multi_create("/q/m")              # the same inside a multi
        create("/q/b/deep")               # deeper nodes count for the prefix too
        stats("/q")
        set_data("/q/a", b"abcdefgh")     # bytes 10: the limit
        set_data("/q/b", b"x")            # bytes 11: refused when enforced
        set_data("/q/a", b"a")            # shrinking is always fine
        stats("/q")
        delete("/q/b")
        create("/q/c")                    # room again (unless nothing was refused)
        create("/s")
        create("/zookeeper/quota/s")
        create("/zookeeper/quota/s/zookeeper_limits", SOFT_LIMITS.encode())
        create("/zookeeper/quota/s/zookeeper_stats", b"count=0,bytes=0")
        create("/s/a", b"much more than one byte")  # soft limits only log
        create("/s/b")
        stats("/s")
    finally:
        raw.close_session()
    return out


def refusals(transcript):
    return [step[0] for step in transcript if step[1] == QUOTA_EXCEEDED]


class EnforceQuota(unittest.TestCase):
    maxDiff = None

    def run_both(self, name, **cfg):
        with harness.Server(kind="zookeeper", name="reference-" + name, **cfg) as ref:
            expected = quota_script(ref)
        with harness.Server(name="candidate-" + name, **cfg) as cand:
            got = quota_script(cand)
        for e, g in zip(expected, got):
            if e != g:
                print("differs:\n  zookeeper: %s\n  target:    %s" % (e, g))
        self.assertEqual(expected, got)
        return expected

    def test_a_jvm_flag_enforces_hard_limits_as_zookeeper_does(self):
        t = self.run_both("flag", jvm_flags=["-Dzookeeper.enforceQuota=true"])
        self.assertEqual(refusals(t), ["create /q/c 0 bytes", "create /q/b/deep 0 bytes",
                                       "setData /q/b 1 bytes"])
        self.assertIn(["stats /q", 0, "count=3,bytes=5"], t)
        multi = [s for s in t if s[0] == "multi create /q/m"][0]
        self.assertIn("ffffff83", multi[2])  # the op's error result carries -125

    def test_zoo_cfg_beats_the_jvm_flag_both_ways(self):
        on = self.run_both("cfg-on", jvm_flags=["-Dzookeeper.enforceQuota=false"],
                           extra_cfg={"enforceQuota": "true"})
        self.assertEqual(len(refusals(on)), 3)
        off = self.run_both("cfg-off", jvm_flags=["-Dzookeeper.enforceQuota=true"],
                            extra_cfg={"enforceQuota": "false"})
        self.assertEqual(refusals(off), [])

    def test_without_the_setting_nothing_is_refused(self):
        t = self.run_both("default")
        self.assertEqual(refusals(t), [])
        self.assertIn(["stats /s", 0, "count=3,bytes=23"], t)


def container_gone_within(server, seconds):
    """Creates /c as a container, gives it a child and removes the child; True if the reaper
    removes /c within `seconds`."""
    raw = W.RawSession(server.host, server.port, timeout_ms=10000)
    try:
        _, (_, _, err, _) = raw.call(OP_CREATE_CONTAINER, W.create_body("/c", b"", flags=CONTAINER))
        assert err == 0, err
        assert raw.create("/c/x")[0] == 0
        _, (_, _, err, _) = raw.call(W.OP_DELETE, W.ustring("/c/x") + W.int32(-1))
        assert err == 0, err

        def gone():
            _, (_, _, e, _) = raw.call(W.OP_EXISTS, W.ustring("/c") + W.boolean(False))
            return e == NO_NODE
        return harness.wait_until(gone, seconds, interval=0.1)
    finally:
        raw.close_session()


class ContainerInterval(unittest.TestCase):
    # The words a rig would put in SERVER_JVMFLAGS: JVM options and an unknown property besides.
    FLAGS = ["-Xmx128m", "-Dznode.container.checkIntervalMs=100", "-Dsome.rig.property=1"]

    def test_a_small_interval_in_server_jvmflags_removes_an_empty_container_quickly(self):
        for kind in ("zookeeper", None):
            with self.subTest(kind=kind or "target"):
                with harness.Server(kind=kind, name="container-flag", jvm_flags=self.FLAGS) as srv:
                    self.assertTrue(container_gone_within(srv, 5.0))

    @unittest.skipUnless(harness.target_kind() == "zkraft", "zkraft's environment variables")
    def test_the_default_interval_keeps_it_and_jvmflags_beats_server_jvmflags(self):
        with harness.Server(name="container-default") as srv:
            self.assertFalse(container_gone_within(srv, 2.0))  # 60 s by default
        # zkServer.sh: JVMFLAGS="$SERVER_JVMFLAGS $JVMFLAGS": a property in JVMFLAGS comes last.
        srv = harness.Server(name="container-jvmflags",
                             jvm_flags=["-Dznode.container.checkIntervalMs=600000"])
        os.environ["JVMFLAGS"] = "-Dznode.container.checkIntervalMs=100"
        try:
            with srv:
                self.assertTrue(container_gone_within(srv, 5.0))
        finally:
            del os.environ["JVMFLAGS"]

    @unittest.skipUnless(harness.target_kind() == "zkraft", "zkraft's error for a bad property")
    def test_a_bad_value_of_a_known_property_stops_the_start_with_a_message(self):
        env = dict(os.environ, SERVER_JVMFLAGS="-Dznode.container.checkIntervalMs=soon")
        d = harness.make_temp_dir("zkit-badprop-")
        p = subprocess.run([os.environ["ZKRAFT_BIN"], "--data-dir", d, "--client-port", "0"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b"-Dznode.container.checkIntervalMs", p.stderr)


class EnsembleSettings(unittest.TestCase):
    """The same -D words given to every member of a 3-server ensemble: a client of a follower has
    its create refused past the hard quota (every member applies the check, so they must all
    enforce), and the leader's reaper, on the small interval, removes a container the follower's
    client emptied."""

    FLAGS = ["-Dzookeeper.enforceQuota=true", "-Dznode.container.checkIntervalMs=100"]

    def test_quota_and_reaper_settings_hold_on_an_ensemble(self):
        for kind in ("zookeeper", None):
            with self.subTest(kind=kind or "target"):
                with Ensemble(3, kind=kind, name="props", jvm_flags=self.FLAGS) as ens:
                    self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, 30))
                    follower = [m for m in ens.members if ens.mode(m) == "follower"][0]
                    raw = W.RawSession(follower.host, follower.port, timeout_ms=10000)
                    try:
                        codes = [raw.create(p, d)[0] for p, d in (
                            ("/q", b""), ("/zookeeper/quota/q", b""),
                            ("/zookeeper/quota/q/zookeeper_limits",
                             b"count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2"),
                            ("/zookeeper/quota/q/zookeeper_stats", b"count=0,bytes=0"),
                            ("/q/a", b""), ("/q/b", b""))]
                        self.assertEqual(codes, [0, 0, 0, 0, 0, QUOTA_EXCEEDED])
                    finally:
                        raw.close_session()
                    self.assertTrue(container_gone_within(follower, 10.0))


if __name__ == "__main__":
    harness.run_suite()
