#!/usr/bin/python3
"""Differential tests: scripted sequences of operations run against Apache ZooKeeper 3.8 (the
reference, always) and against the target server (ZK_TARGET; when the target is zookeeper too,
this checks that the scripts and their normalisation are deterministic). The normalised
transcripts must be identical; every differing step is printed with both versions.

  run_script               two kazoo sessions: CRUD, errors, multi, ephemerals, the Stat, data and
                           ACL of every node, negotiated session timeouts. zxids become dense ranks
                           among the zxids seen ("z1" < "z2" ...; 0 stays 0), times "t", session ids
                           "s1"/"s2".
  run_raw_script           wire-level edge cases on a raw session (zkwire).
  run_raw_extended_script  newer ops (3.5-3.7) on raw sessions.
  run_raw_acl_script       the permission each operation needs, world/auth/digest/ip schemes.
  run_random_script        seeded random mixes of writes, reads with watches and multis.
The raw transcripts normalise zxids locally (see RawTranscript.finish).

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_differential.py
"""

import logging
import os
import re
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

from differential_kazoo import run_script  # noqa: E402
from differential_random import run_random_script  # noqa: E402
from differential_raw import run_raw_acl_script, run_raw_extended_script, run_raw_script  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


class Differential(unittest.TestCase):
    maxDiff = None

    def compare(self, script, name):
        def run(server):
            try:
                return script(server)
            except (ConnectionError, OSError, struct.error) as e:
                # keep what was recorded up to here so the first differing step is shown
                return getattr(e, "partial", []) + ["!! script aborted: %r" % e]
        with harness.Server(kind="zookeeper", name="reference-" + name) as ref:
            expected = run(ref)
        with harness.Server(name="candidate-" + name) as cand:
            got = run(cand)
        if expected != got:
            for i, (e, g) in enumerate(zip(expected, got)):
                if e != g:
                    print("step %d differs:\n  zookeeper: %s\n  target:    %s" % (i, e, g))
            for extra in expected[len(got):]:
                print("missing in target: %s" % extra)
            for extra in got[len(expected):]:
                print("extra in target: %s" % extra)
        self.assertEqual(len(expected), len(got))
        self.assertEqual(expected, got)

    def test_default_session_timeout_bounds_match_zookeeper(self):
        # no minSessionTimeout/maxSessionTimeout in zoo.cfg: 2 and 20 ticks
        def negotiate(server):
            out = []
            for asked in (10, 3999, 4000, 10000, 40000, 40001, 10**7):
                raw = zkwire.RawSession(server.host, server.port, timeout_ms=asked)
                out.append([asked, raw.timeout_ms])
                raw.close_session()
            return out
        cfg = dict(tick_time=2000, min_session_timeout=None, max_session_timeout=None)
        with harness.Server(kind="zookeeper", name="reference-timeouts", **cfg) as ref:
            expected = negotiate(ref)
        with harness.Server(name="candidate-timeouts", **cfg) as cand:
            got = negotiate(cand)
        self.assertEqual(expected, got)

    def test_four_letter_word_shapes_match_zookeeper(self):
        # the whitelist, the refusal text, and the labels of srvr/stat (values differ by nature)
        def shapes(server):
            out = {}
            for cmd in ("ruok", "isro", "mntr", "envi", "conf", "wchs"):
                out[cmd] = server.four_letter(cmd)
            srvr = server.four_letter("srvr")
            out["srvr labels"] = [line.split(":", 1)[0] for line in srvr.splitlines()]
            stat = server.four_letter("stat")
            out["stat first line"] = stat.splitlines()[0].split(":", 1)[0] if stat else ""
            out["stat labels"] = sorted(set(line.split(":", 1)[0] for line in stat.splitlines()
                                            if ":" in line and not line.startswith(" ")))
            return out
        cfg = {"extra_cfg": {"4lw.commands.whitelist": "srvr, stat"}}
        with harness.Server(kind="zookeeper", name="reference-4lw", **cfg) as ref:
            expected = shapes(ref)
        with harness.Server(name="candidate-4lw", **cfg) as cand:
            got = shapes(cand)
        self.assertEqual(expected["ruok"], "ruok is not executed because it is not in the whitelist.\n")
        self.assertEqual(expected, got)

    def test_average_latency_is_printed_with_four_decimals_as_zookeeper_does(self):
        # AvgMinMaxCounter.getAvg rounds the average half-up to 4 decimals (3.8 and 3.9), so
        # srvr/stat say "Latency min/avg/max: 0/0.0167/1" and mntr "zk_avg_latency\t0.0167";
        # parsers expect that shape. The values differ by nature: only their shape is compared.
        shape = re.compile(r"^(\d+\.\d{1,4}|\d\.\d{1,4}E-\d+)$")

        def averages(server):
            zk = KazooClient(hosts=server.hosts, timeout=10.0)
            zk.start(timeout=20)
            try:
                zk.ensure_path("/avg")
                for i in range(60):
                    zk.set("/avg", b"%d" % i)
                    zk.get("/avg")
            finally:
                zk.stop()
                zk.close()
            srvr = [l for l in server.four_letter("srvr").splitlines() if l.startswith("Latency min/avg/max: ")]
            mntr = [l for l in server.four_letter("mntr").splitlines() if l.startswith("zk_avg_latency\t")]
            self.assertEqual((len(srvr), len(mntr)), (1, 1), (srvr, mntr))
            return [srvr[0].split(": ", 1)[1].split("/")[1], mntr[0].split("\t", 1)[1]]

        cfg = {"extra_cfg": {"4lw.commands.whitelist": "srvr, mntr"}}
        with harness.Server(kind="zookeeper", name="reference-avg", **cfg) as ref:
            expected = averages(ref)
        with harness.Server(name="candidate-avg", **cfg) as cand:
            got = averages(cand)
        for who, values in (("zookeeper", expected), ("target", got)):
            for v in values:
                self.assertRegex(v, shape, "%s average latency %r" % (who, v))

    def test_hash_prints_the_digest_history_in_zookeepers_shape(self):
        # DigestCommand: one "<hex zxid>: <digest>" line per logged digest, oldest first, for
        # every zxid that is a multiple of 128 (DataTree.DIGEST_LOG_INTERVAL); with
        # zookeeper.digest.enabled=false (zoo.cfg digest.enabled) the cadence stays and the
        # digest is 0. The digest values differ by nature (another hash); zxids differ too (zkraft
        # counts its log's own entries), so the comparison is of the shape.
        line = re.compile(r"^([0-9a-f]+): (-?\d+)$")

        def history(server):
            zk = KazooClient(hosts=server.hosts, timeout=10.0)
            zk.start(timeout=20)
            try:
                zk.ensure_path("/h")
                for i in range(300):
                    zk.create("/h/n-", b"%d" % i, sequence=True, ephemeral=i % 3 == 0)
                text = server.four_letter("hash")
            finally:
                zk.stop()
                zk.close()
            pairs = []
            for l in text.splitlines():
                m = line.match(l)
                self.assertIsNotNone(m, "%s: hash line %r" % (server.kind, l))
                pairs.append((int(m.group(1), 16), int(m.group(2))))
            self.assertTrue(text.endswith("\n"), repr(text))
            return pairs

        for enabled in (None, "false"):
            with self.subTest(digest_enabled=enabled):
                cfg = {"extra_cfg": {"digest.enabled": enabled}}
                with harness.Server(kind="zookeeper", name="reference-hash", **cfg) as ref:
                    expected = history(ref)
                with harness.Server(name="candidate-hash", **cfg) as cand:
                    got = history(cand)
                for who, pairs in (("zookeeper", expected), ("target", got)):
                    zxids = [z for z, _ in pairs]
                    self.assertEqual(zxids, [128, 256], "%s: %s" % (who, pairs))  # 302 or 303 zxids
                    digests = [d for _, d in pairs]
                    if enabled == "false":
                        self.assertEqual(digests, [0, 0], who)
                    else:
                        self.assertNotIn(0, digests, who)
                        self.assertNotEqual(digests[0], digests[1], who)

    def test_reconfig_on_a_standalone_server_is_unimplemented_before_any_other_check(self):
        # reconfigEnabled=true on a standalone server: PrepRequestProcessor finds no leader and
        # answers Unimplemented before the version, the members and the permission are looked at.
        from kazoo.exceptions import KazooException

        def answers(server):
            zk = KazooClient(hosts=server.hosts, timeout=10.0)
            zk.start(timeout=20)
            out = []
            try:
                for args in (dict(joining=None, leaving="3", new_members=None, from_config=12345),
                             dict(joining="garbage", leaving=None, new_members=None),
                             dict(joining=None, leaving="x", new_members=None),
                             dict(joining=None, leaving="2", new_members=None)):
                    try:
                        zk.reconfig(**args)
                        out.append("ok")
                    except KazooException as e:
                        out.append(type(e).__name__)
            finally:
                zk.stop()
                zk.close()
            return out

        cfg = {"extra_cfg": {"reconfigEnabled": "true"}}
        with harness.Server(kind="zookeeper", name="reference-rcsa", **cfg) as ref:
            expected = answers(ref)
        with harness.Server(name="candidate-rcsa", **cfg) as cand:
            got = answers(cand)
        self.assertEqual(expected, ["UnimplementedError"] * 4)
        self.assertEqual(expected, got)

    def test_random_operation_mixes_match_zookeeper(self):
        for seed in (1, 2, 3):
            with self.subTest(seed=seed):
                self.compare(lambda server: run_random_script(server, seed), "random%d" % seed)

    def test_scripted_sequence_matches_zookeeper(self):
        self.compare(run_script, "kazoo")

    def test_wire_level_edge_cases_match_zookeeper(self):
        self.compare(run_raw_script, "raw")

    def test_newer_ops_match_zookeeper(self):
        self.compare(run_raw_extended_script, "ext")

    def test_acl_checks_match_zookeeper(self):
        self.compare(run_raw_acl_script, "acl")


if __name__ == "__main__":
    harness.run_suite()
