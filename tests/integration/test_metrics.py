#!/usr/bin/python3
"""Prometheus /metrics (metricsProvider.className naming ZooKeeper's PrometheusMetricsProvider,
metricsProvider.httpHost, metricsProvider.httpPort), read by a strict parser of the text
exposition format 0.0.4 written here:

  - every line is a HELP, TYPE or sample line; names and labels follow the grammar
    ([a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*, values quoted with \\\\, \\" and \\n
    the only escapes); values parse as Go floats (NaN, +Inf, -Inf included);
  - every family has exactly one TYPE line, before its samples, and its samples are together;
    sample names are the family's (plus _bucket/_count/_sum for histograms, _count/_sum for
    summaries); no series twice; summaries' quantiles in [0, 1]; histogram buckets cumulative,
    le ascending, ending with le="+Inf" equal to _count;
  - counters (and summaries'/histograms' counts, sums and buckets) never decrease between two
    scrapes, and they move when load is applied (Kazoo creates and reads between the scrapes);
  - the gauges ZooKeeper also exports say what `mntr` says at the same moment (same names as
    mntr's zk_* keys without the prefix, same meaning);
  - on a 3-server ensemble the leader reports per-member match and lag for both followers.

Names and types: ZooKeeper 3.9.4's PrometheusMetricsProvider cannot run here (Debian has no
Prometheus Java client jars), so they come from its sources, release-3.9.4:
  zookeeper-metrics-providers/zookeeper-prometheus-metrics/src/main/java/org/apache/zookeeper/
      metrics/prometheus/PrometheusMetricsProvider.java   (gauges, counters, summaries; HELP = name;
      ADVANCED summaries 0.5/0.9/0.99, BASIC 0.5; the servlet on /metrics only, TRACE refused)
  zookeeper-server/src/main/java/org/apache/zookeeper/server/ServerMetrics.java
      (readlatency, updatelatency, fsynctime, snapshottime, election_time, looking_count,
      proposal_count, connection_rejected)
  zookeeper-server/src/main/java/org/apache/zookeeper/server/ZooKeeperServer.java registerMetrics
      (znode_count, watch_count, ephemerals_count, approximate_data_size, num_alive_connections,
      outstanding_requests, global_sessions, packets_received, packets_sent, ... as gauges)
  zookeeper-server/src/main/java/org/apache/zookeeper/server/quorum/QuorumZooKeeperServer.java
      (quorum_size) and quorum/LeaderZooKeeperServer.java (learners, synced_followers, ...)
and simpleclient 0.9.0 (the provider's pom) for the text format.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_metrics.py
"""

import http.client
import logging
import math
import os
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

PROVIDER = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
LABEL = r"(%s)=(%s)" % (LABEL_NAME, LABEL_VALUE)
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s,)*(?:%s)?)\})? (\S+)(?: (-?\d+))?$"
                    % (METRIC_NAME, LABEL, LABEL))
HELP = re.compile(r"^# HELP (%s) ((?:[^\\\n]|\\\\|\\n)*)$" % METRIC_NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$" % METRIC_NAME)
GO_FLOAT = re.compile(r"^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)$")
SUFFIXES = {"counter": ("",), "gauge": ("",), "untyped": ("",),
            "summary": ("", "_count", "_sum"), "histogram": ("_bucket", "_count", "_sum")}
# Families ZooKeeper exports that zkraft has: name -> type.
ZOOKEEPER_FAMILIES = {
    "avg_latency": "gauge", "max_latency": "gauge", "min_latency": "gauge",
    "packets_received": "gauge", "packets_sent": "gauge", "num_alive_connections": "gauge",
    "outstanding_requests": "gauge", "uptime": "gauge", "znode_count": "gauge",
    "watch_count": "gauge", "ephemerals_count": "gauge", "approximate_data_size": "gauge",
    "global_sessions": "gauge", "local_sessions": "gauge", "open_file_descriptor_count": "gauge",
    "max_file_descriptor_count": "gauge", "auth_failed_count": "gauge",
    "readlatency": "summary", "updatelatency": "summary", "fsynctime": "summary",
    "snapshottime": "summary", "proposal_count": "counter", "connection_rejected": "counter",
    "election_time": "summary", "looking_count": "counter"}
# Gauges that mntr also reports (zk_<name>), compared at the same quiet moment.
SAME_AS_MNTR = ["znode_count", "watch_count", "ephemerals_count", "approximate_data_size",
                "global_sessions", "outstanding_requests"]


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v[1:-1])


def parse_float(text, where):
    if not GO_FLOAT.match(text):
        raise AssertionError("%s: %r is not a float" % (where, text))
    return float(text.replace("Inf", "inf"))


def parse_exposition(text):
    """{family: {"type", "help", "samples": [(name, labels tuple, value)]}}; AssertionError on
    anything the format does not allow."""
    assert text.endswith("\n"), "the text ends with a newline"
    families, order = {}, []
    current = None       # family whose samples are being read
    closed = set()       # families whose samples have ended
    series = set()
    for n, line in enumerate(text[:-1].split("\n"), 1):
        where = "line %d %r" % (n, line)
        if line.startswith("#"):
            m = HELP.match(line) or TYPE.match(line)
            assert m, "%s: only HELP and TYPE comments" % where
            name = m.group(1)
            f = families.setdefault(name, {"type": None, "help": None, "samples": []})
            if name not in order:
                order.append(name)
            assert not f["samples"], "%s: HELP/TYPE after the family's samples" % where
            key = "help" if line.startswith("# HELP") else "type"
            assert f[key] is None, "%s: a second %s line" % (where, key.upper())
            f[key] = m.group(2)
            if current is not None:
                closed.add(current)
            current = None
            continue
        m = SAMPLE.match(line)
        assert m, "%s: not a sample line" % where
        name, labels_text, value_text = m.group(1), m.group(2) or "", m.group(7)
        labels = tuple((k, unescape(v)) for k, v in re.findall(LABEL, labels_text))
        names = [k for k, _ in labels]
        assert len(set(names)) == len(names), "%s: a label twice" % where
        assert not any(k.startswith("__") for k in names), "%s: reserved label name" % where
        value = parse_float(value_text, where)
        family = None
        for fam in sorted(families, key=len, reverse=True):
            t = families[fam]["type"]
            if t and name in (fam + s for s in SUFFIXES[t]):
                family = fam
                break
        assert family is not None, "%s: no TYPE line before this sample's family" % where
        assert family not in closed, "%s: the family's samples are not together" % where
        if current is not None and current != family:
            closed.add(current)
        current = family
        key = (name, tuple(sorted(labels)))
        assert key not in series, "%s: the same series twice" % where
        series.add(key)
        families[family]["samples"].append((name, labels, value))
    for fam, f in families.items():
        assert f["type"] is not None, "%s: no TYPE line" % fam
        check_family(fam, f)
    return families


def check_family(fam, f):
    t, samples = f["type"], f["samples"]
    if t == "summary":
        for name, labels, _ in samples:
            if name == fam:
                q = dict(labels).get("quantile")
                assert q is not None and 0 <= float(q) <= 1, "%s: quantile label %r" % (fam, q)
    if t == "histogram":
        groups = {}
        for name, labels, value in samples:
            other = tuple((k, v) for k, v in labels if k != "le")
            g = groups.setdefault(other, {"buckets": [], "count": None})
            if name == fam + "_bucket":
                le = dict(labels).get("le")
                assert le is not None, "%s: a bucket without le" % fam
                g["buckets"].append((parse_float(le, fam), value))
            elif name == fam + "_count":
                g["count"] = value
        for other, g in groups.items():
            b = g["buckets"]
            assert b, "%s%s: no buckets" % (fam, other)
            les = [le for le, _ in b]
            assert les == sorted(les) and len(set(les)) == len(les), "%s: le not ascending" % fam
            counts = [c for _, c in b]
            assert counts == sorted(counts), "%s: buckets not cumulative: %s" % (fam, counts)
            assert math.isinf(les[-1]) and les[-1] > 0, "%s: the last bucket is not +Inf" % fam
            assert counts[-1] == g["count"], "%s: +Inf bucket %s != _count %s" % (fam, counts[-1], g["count"])


def monotonic_series(families):
    """{(sample name, labels): value} of what must never decrease."""
    out = {}
    for fam, f in families.items():
        for name, labels, value in f["samples"]:
            if f["type"] == "counter" or (f["type"] in ("summary", "histogram") and name != fam):
                out[(name, labels)] = value
    return out


def value(families, fam, name=None, **labels):
    for n, l, v in families[fam]["samples"]:
        if n == (name or fam) and all(dict(l).get(k) == str(x) for k, x in labels.items()):
            return v
    raise KeyError((fam, name, labels))


def http_get(port, path="/metrics", method="GET", timeout=5.0):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read().decode("utf-8")
    finally:
        c.close()


def scrape(port):
    status, ctype, body = http_get(port)
    assert status == 200, (status, body)
    assert ctype == CONTENT_TYPE, ctype
    return parse_exposition(body)


def mntr(srv):
    out = {}
    for line in srv.four_letter("mntr").splitlines():
        k, _, v = line.partition("\t")
        out[k] = v
    return out


def metrics_server(name, **cfg):
    port = harness.free_port()
    extra = {"metricsProvider.className": PROVIDER, "metricsProvider.httpHost": "127.0.0.1",
             "metricsProvider.httpPort": port}
    extra.update(cfg)
    srv = harness.Server(name=name, extra_cfg=extra)
    srv.start()
    srv.metrics_port = port
    return srv


class ParserSelfTest(unittest.TestCase):
    """The parser refuses what the format does not allow (so the checks below can fail)."""

    def refuses(self, text):
        with self.assertRaises(AssertionError):
            parse_exposition(text)

    def test_refusals(self):
        ok = "# HELP a a\n# TYPE a counter\na 1.0\n"
        parse_exposition(ok)
        self.refuses("a 1.0\n")                                     # no TYPE
        self.refuses("# TYPE a counter\n# TYPE a counter\na 1\n")   # TYPE twice
        self.refuses("# TYPE a counter\na 1\n# TYPE a counter\n")   # TYPE after samples
        self.refuses("# TYPE a gauge\na{b=\"x\\q\"} 1\n")            # bad escape
        self.refuses("# TYPE a gauge\na{1b=\"x\"} 1\n")              # bad label name
        self.refuses("# TYPE a gauge\na one\n")                     # bad value
        self.refuses("# TYPE a gauge\na 1\na 2\n")                  # series twice
        self.refuses("# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"1\"} 1\n")  # not together
        self.refuses("# TYPE a gauge\n\na 1\n")                     # empty line
        self.refuses("# random comment\n")
        self.refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n")
        self.refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n")
        self.refuses("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n")  # no +Inf
        self.refuses("# TYPE s summary\ns{quantile=\"1.5\"} 1\ns_count 1\n")
        parse_exposition('# TYPE s summary\ns{quantile="0.5",} NaN\ns_count 0.0\ns_sum 0.0\n'
                         '# TYPE h histogram\nh_bucket{le="1.0E-4",} 0.0\nh_bucket{le="+Inf",} 0.0\n'
                         'h_count 0.0\nh_sum 0.0\n')


class Standalone(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if harness.target_kind() != "zkraft":
            raise unittest.SkipTest("ZooKeeper's Prometheus provider needs jars Debian lacks")
        cls.srv = metrics_server("metrics", snapCount=100)  # snapshots after ~100 entries

    @classmethod
    def tearDownClass(cls):
        cls.srv.close()

    def test_names_and_types_are_zookeepers(self):
        fams = scrape(self.srv.metrics_port)
        for name, t in ZOOKEEPER_FAMILIES.items():
            self.assertIn(name, fams)
            self.assertEqual(fams[name]["type"], t, name)
            self.assertEqual(fams[name]["help"], name)  # build(name, name)
        quantiles = lambda fam: [dict(l)["quantile"] for n, l, _ in fams[fam]["samples"] if n == fam]
        self.assertEqual(quantiles("readlatency"), ["0.5", "0.9", "0.99"])   # ADVANCED
        self.assertEqual(quantiles("fsynctime"), ["0.5"])                     # BASIC
        for fam in fams:
            if fam not in ZOOKEEPER_FAMILIES:
                self.assertTrue(fam.startswith("zkraft_"), fam)
        self.assertNotIn("quorum_size", fams)  # QuorumZooKeeperServer only
        self.assertEqual(value(fams, "looking_count"), 0)  # a standalone server never elects
        # exportJvmInfo (default true) is accepted; the start-up line says it does not apply.
        self.assertIn("exportJvmInfo: true (there is no JVM", self.srv.log_tail(200))
        self.assertGreaterEqual(value(fams, "zkraft_raft_term"), 1)

    def test_counters_move_under_load_and_never_decrease(self):
        before = scrape(self.srv.metrics_port)
        zk = KazooClient(hosts=self.srv.hosts)
        zk.start(timeout=15)
        try:
            zk.ensure_path("/m")
            for i in range(40):
                zk.create("/m/n%d" % i, b"x" * 10)
            for i in range(60):
                zk.get("/m/n%d" % (i % 40))
            # Consensus' figures are copied every 50 ms (RaftReplicatedLog::refresh_figures).
            time.sleep(0.2)
            after = scrape(self.srv.metrics_port)
        finally:
            zk.stop()
            zk.close()
        b, a = monotonic_series(before), monotonic_series(after)
        for key, v in b.items():
            self.assertIn(key, a)
            self.assertGreaterEqual(a[key], v, key)
        moved = lambda fam, name=None, **l: value(after, fam, name, **l) - value(before, fam, name, **l)
        self.assertGreaterEqual(moved("updatelatency", "updatelatency_count"), 41)  # creates
        self.assertGreaterEqual(moved("readlatency", "readlatency_count"), 60)
        self.assertGreaterEqual(moved("zkraft_proposals_total"), 41)
        self.assertGreaterEqual(moved("proposal_count"), 41)
        self.assertGreaterEqual(moved("zkraft_log_entries_written_total"), 41)
        self.assertGreater(moved("zkraft_fsync_duration_seconds", "zkraft_fsync_duration_seconds_count"), 0)
        self.assertGreater(moved("fsynctime", "fsynctime_count"), 0)
        self.assertGreaterEqual(moved("znode_count"), 41)
        self.assertGreaterEqual(value(after, "zkraft_raft_commit_index"),
                                value(before, "zkraft_raft_commit_index") + 41)
        self.assertFalse(math.isnan(value(after, "readlatency", quantile="0.5")))
        # The Raft log in memory holds at least the entries just applied, and never more than the
        # 4 MiB budget of applied ones plus what is not applied yet (none, once idle). A single
        # server has no follower to read evicted entries back for.
        self.assertGreater(value(after, "zkraft_log_memory_bytes"), 41 * 10)
        self.assertLessEqual(value(after, "zkraft_log_memory_bytes"), 4 << 20)
        self.assertEqual(value(after, "zkraft_log_entries_read_back_total"), 0)
        print("  load: updatelatency_count +%d, readlatency_count +%d, fsyncs +%d, commit index %d"
              % (moved("updatelatency", "updatelatency_count"), moved("readlatency", "readlatency_count"),
                 moved("fsynctime", "fsynctime_count"), value(after, "zkraft_raft_commit_index")))

    def test_gauges_say_what_mntr_says(self):
        zk = KazooClient(hosts=self.srv.hosts)
        zk.start(timeout=15)
        try:
            zk.create("/g", b"abc", ephemeral=True)
            zk.exists("/g", watch=lambda e: None)
            zk.get_children("/", watch=lambda e: None)
            time.sleep(0.3)  # quiet: no request in flight
            m = mntr(self.srv)
            fams = scrape(self.srv.metrics_port)
            m2 = mntr(self.srv)
        finally:
            zk.stop()
            zk.close()
        for name in SAME_AS_MNTR:
            self.assertEqual(m["zk_" + name], m2["zk_" + name], name)  # nothing moved meanwhile
            self.assertEqual(value(fams, name), float(m["zk_" + name]), name)
        self.assertGreaterEqual(value(fams, "ephemerals_count"), 1)
        self.assertGreaterEqual(value(fams, "watch_count"), 2)

    def test_snapshot_figures_follow_a_snapshot(self):
        zk = KazooClient(hosts=self.srv.hosts)
        zk.start(timeout=15)
        try:
            zk.ensure_path("/s")
            for i in range(150):
                zk.create("/s/n%d" % i, b"z" * 100)
        finally:
            zk.stop()
            zk.close()
        # The Raft figures (the snapshot's index) are refreshed every 50 ms, the counters at once:
        # wait for both.
        fams = wait_for(lambda: (lambda f: f if value(f, "zkraft_snapshots_total") >= 1 and
                                 value(f, "zkraft_raft_snapshot_index") > 0 else None)(
            scrape(self.srv.metrics_port)), 20)
        self.assertIsNotNone(fams, self.srv.log_tail(20))
        taken = value(fams, "zkraft_snapshots_total")
        self.assertEqual(value(fams, "snapshottime", "snapshottime_count"), taken)
        self.assertEqual(value(fams, "zkraft_snapshot_duration_seconds",
                               "zkraft_snapshot_duration_seconds_count"), taken)
        # The snapshot is of the state at its index: every entry up to it but the session, /s and
        # the leader's no-op made a node of 100 B (when within the 150 creates). The first
        # snapshot comes after about snapCount entries, so it need not hold all 150 nodes.
        index = value(fams, "zkraft_raft_snapshot_index")
        self.assertGreaterEqual(index, 100)
        self.assertGreater(value(fams, "zkraft_snapshot_last_bytes"), (min(index, 153) - 5) * 100)
        print("  snapshots %d, last %d bytes, snapshottime median %s ms"
              % (taken, value(fams, "zkraft_snapshot_last_bytes"),
                 value(fams, "snapshottime", quantile="0.5")))

    def test_other_paths_and_methods(self):
        port = self.srv.metrics_port
        self.assertEqual(http_get(port, "/")[0], 404)
        self.assertEqual(http_get(port, "/metrics/")[0], 404)
        self.assertEqual(http_get(port, method="TRACE")[0], 403)
        self.assertEqual(http_get(port, method="PUT")[0], 405)
        status, ctype, body = http_get(port, "/metrics?name[]=znode_count&name[]=uptime")
        self.assertEqual((status, ctype), (200, CONTENT_TYPE))
        self.assertEqual(sorted(parse_exposition(body)), ["uptime", "znode_count"])
        self.assertEqual(http_get(port, method="HEAD")[0], 200)


class Config(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft's log lines")

    def test_another_provider_class_warns_once_and_serves_nothing(self):
        srv = metrics_server("metrics-other", **{
            "metricsProvider.className": "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider",
            "metricsProvider.exportJvmInfo": "false"})
        try:
            log = srv.log_tail(200)
            self.assertEqual(log.count("metricsProvider.className"), 1, log)
            self.assertNotIn("/metrics HTTP endpoint", log)
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", srv.metrics_port), timeout=2).close()
        finally:
            srv.close()


def wait_for(fn, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = fn()
        except (OSError, AssertionError, KeyError):
            v = None
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(0.2)


class Ensemble(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("ZooKeeper's Prometheus provider needs jars Debian lacks")
        import ensemble
        self.ens = ensemble.Ensemble(3, name="met")
        for m in self.ens.members:
            m.metrics_port = harness.free_port()
            m.extra_cfg.update({"metricsProvider.className": PROVIDER,
                                "metricsProvider.httpHost": "127.0.0.1",
                                "metricsProvider.httpPort": m.metrics_port})

    def tearDown(self):
        self.ens.close()

    def test_leader_reports_lag_of_both_followers(self):
        for m in self.ens.members:
            m.launch()
        for m in self.ens.members:
            self.assertTrue(m.wait_serving(40), m.log_tail(20))
        leader = wait_for(self.ens.leader, 20)
        self.assertIsNotNone(leader)
        zk = KazooClient(hosts=leader.hosts)
        zk.start(timeout=15)
        try:
            for i in range(20):
                zk.create("/e%d" % i, b"y")
        finally:
            zk.stop()
            zk.close()
        others = sorted(m.myid for m in self.ens.members if m is not leader)

        def caught_up():
            fams = scrape(leader.metrics_port)
            last = value(fams, "zkraft_raft_last_index")
            matches = {int(dict(l)["member"]): v for n, l, v in fams["zkraft_follower_match_index"]["samples"]}
            lags = {int(dict(l)["member"]): v for n, l, v in fams["zkraft_follower_lag_entries"]["samples"]}
            if sorted(matches) != others or sorted(lags) != others:
                return None
            if any(lags[i] != last - matches[i] for i in others) or min(matches.values()) < 20:
                return None
            return fams, matches, lags
        got = wait_for(caught_up, 20)
        self.assertIsNotNone(got, "leader's lag figures: %s" % http_get(leader.metrics_port)[2][-3000:])
        fams, matches, lags = got
        self.assertEqual(value(fams, "quorum_size"), 2)
        self.assertEqual(value(fams, "learners"), 2)
        for m in self.ens.members:  # every member started LOOKING and then knew the leader
            f = fams if m is leader else scrape(m.metrics_port)
            self.assertGreaterEqual(value(f, "looking_count"), 1)
            self.assertGreaterEqual(value(f, "election_time", "election_time_count"), 1)
            self.assertFalse(math.isnan(value(f, "election_time", quantile="0.5")))
        self.assertGreater(value(fams, "zkraft_peer_bytes_total", direction="sent"), 0)
        self.assertGreater(value(fams, "zkraft_peer_bytes_total", direction="received"), 0)
        print("  leader %d: match %s, lag %s, election_time median %s ms, looking_count %d"
              % (leader.myid, matches, lags, value(fams, "election_time", quantile="0.5"),
                 value(fams, "looking_count")))
        for m in self.ens.members:
            if m is leader:
                continue
            f = scrape(m.metrics_port)
            self.assertEqual(value(f, "quorum_size"), 2)
            self.assertNotIn("zkraft_follower_lag_entries", f)
            self.assertEqual(value(f, "zkraft_raft_leader"), leader.myid)
            self.assertEqual(value(f, "zkraft_raft_term"), value(fams, "zkraft_raft_term"))


if __name__ == "__main__":
    harness.run_suite()
