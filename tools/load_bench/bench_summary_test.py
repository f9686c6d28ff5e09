"""Tests of bench_summary (run by ctest: load_bench_summary_test)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_snapshot  # noqa: E402
import bench_summary as bs  # noqa: E402


def result(kind, rnd, ops, p99, cpu, mode="standalone", op="set", shape="16x32", errors=0):
    return {"mode": mode, "op": op, "shape": shape, "kind": kind, "round": rnd, "ops_per_s": ops,
            "latency_ms": {"p50": p99 / 4, "p99": p99, "p999": p99 * 2}, "server_cpu_us_per_op": cpu,
            "error_replies": errors, "connection_failures": 0}


class FigureRows(unittest.TestCase):
    def test_ratios_pair_rounds_and_report_median_and_range(self):
        rs = [result("zkraft", 1, 300, 5, 10), result("zookeeper", 1, 100, 10, 40),
              result("zookeeper", 2, 200, 10, 40), result("zkraft", 2, 200, 20, 20),
              result("zkraft", 3, 1000, 1, 10), result("zookeeper", 3, 500, 1, 10)]
        rows = bs.figure_rows(rs)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["figure"], "standalone set 16x32")
        self.assertEqual(r["paired_rounds"], 3)
        self.assertEqual(r["ops_ratio"], (2.0, 1.0, 3.0))  # 3.0, 1.0, 2.0 by round
        self.assertEqual(r["p99_ratio"], (1.0, 0.5, 2.0))
        self.assertEqual(r["cpu_ratio"], (0.5, 0.25, 1.0))  # 0.25, 0.5, 1.0 by round
        self.assertEqual(r["ops"], (300, 200, 1000))

    def test_unpaired_rounds_give_no_ratio_and_errors_are_counted(self):
        rs = [result("zkraft", 1, 300, 5, 10, errors=2), result("zookeeper", 2, 100, 10, 40)]
        r = bs.figure_rows(rs)[0]
        self.assertIsNone(r["ops_ratio"])
        self.assertEqual(r["errors"], 2)
        self.assertIn("n/a", bs.format_table([r])[2])

    def test_each_figure_is_one_row_in_first_seen_order(self):
        rs = [result("zkraft", 1, 1, 1, 1, op="get"), result("zookeeper", 1, 1, 1, 1, op="get"),
              result("zkraft", 1, 1, 1, 1, op="set", mode="ensemble3")]
        self.assertEqual([r["figure"] for r in bs.figure_rows(rs)],
                         ["standalone get 16x32", "ensemble3 set 16x32"])


    def test_a_failed_run_is_left_out_of_the_figures_and_counted(self):
        failed = {"mode": "standalone", "op": "set", "shape": "16x32", "kind": "zookeeper", "round": 2,
                  "part": "matrix", "label": "x", "ok": 0, "failed": "zk_load failed: read timeout"}
        rs = [result("zkraft", 1, 300, 5, 10), result("zookeeper", 1, 100, 10, 40),
              result("zkraft", 2, 200, 20, 20), failed]
        r = bs.figure_rows(rs)[0]
        self.assertEqual(r["paired_rounds"], 1)
        self.assertEqual(r["ops_ratio"], (3.0, 3.0, 3.0))
        self.assertEqual(r["ref_ops"], (100, 100, 100))
        self.assertEqual(r["failed_runs"], 1)
        self.assertTrue(bs.format_table([r])[2].endswith("| 1 | 0 (1 runs failed) |"))
        self.assertEqual(bs.failures([failed]), ["zookeeper x: failed: zk_load failed: read timeout"])


class Failures(unittest.TestCase):
    def test_errors_connection_failures_empty_cases_and_snapshotless_runs_fail(self):
        good = dict(result("zkraft", 1, 10, 1, 1), part="matrix", label="a", ok=5)
        self.assertEqual(bs.failures([good, {"part": "snapshot", "kind": "zkraft", "round": 1,
                                             "snapshot_windows": [[1, 2]]}]), [])
        cases = [dict(good, error_replies=1), dict(good, connection_failures=2), dict(good, ok=0),
                 {"part": "snapshot", "kind": "zkraft", "round": 1, "snapshot_windows": []}]
        for c in cases:
            self.assertEqual(len(bs.failures([good, c])), 1, c)


class Windows(unittest.TestCase):
    def test_a_request_in_flight_across_a_window_edge_counts_as_inside(self):
        windows = [(10.0, 11.0)]
        timeline = [(9.5, 0.1), (10.2, 0.5), (11.3, 0.4), (12.0, 0.1)]
        inside, outside = bs.split_by_windows(timeline, windows)
        self.assertEqual(inside, [0.5, 0.4])
        self.assertEqual(outside, [0.1, 0.1])

    def test_union_length_counts_overlaps_once(self):
        self.assertEqual(bs.union_length([(0, 2), (1, 3), (5, 6), (5.5, 5.75)]), 4)
        self.assertEqual(bs.union_length([]), 0)

    def test_nearest_rank(self):
        v = list(range(1000, 0, -1))
        self.assertEqual(bs.nearest_rank(v, 0.5), 500)
        self.assertEqual(bs.nearest_rank(v, 0.999), 999)
        self.assertEqual(bs.nearest_rank([7], 0.999), 7)
        self.assertIsNone(bs.nearest_rank([], 0.5))



class LeaderChanged(unittest.TestCase):
    """A leader that stops serving for a while (no quorum contact: srvr names no mode) is an outage
    counted by no_leader_polls; only another member leading is a leader change (the snapshot run
    of 2026-12-01 21:26 reported "leader changed: yes" for zkraft, whose term stayed 1 throughout)."""

    def poller(self, leaders):
        p = bench_snapshot.Poller([], watch_files=False)
        p.leaders = [(t, ids) for t, ids in enumerate(leaders)]
        return p

    def test_a_gap_without_a_serving_leader_is_not_a_change(self):
        self.assertFalse(self.poller([(3,), (), (3,)]).leader_changed())

    def test_another_member_leading_is_a_change(self):
        self.assertTrue(self.poller([(3,), (), (1,)]).leader_changed())
        self.assertTrue(self.poller([(3,), (1,)]).leader_changed())

    def test_two_members_leading_at_once_is_a_change(self):
        self.assertTrue(self.poller([(3, 1)]).leader_changed())

if __name__ == "__main__":
    unittest.main()
