#!/usr/bin/python3
"""Unit tests of the chaos checkers on hand-written histories, good and bad: each bad history
must be caught, each good one passed. Pure and fast (no servers).

    /usr/bin/python3 tests/chaos/test_checkers.py
"""

import os
import random
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkers  # noqa: E402
import linearizability as lin  # noqa: E402


def op(f, value, invoke, complete, type="ok", key="k", process=0, **extra):
    return dict(extra, f=f, value=value, invoke=invoke, complete=complete, type=type, key=key,
                process=process)


class Register(unittest.TestCase):
    def verdict(self, ops, initial=0):
        return lin.check(ops, initial=initial)["valid"]

    def test_sequential_good(self):
        h = [op("write", 1, 0, 1), op("read", 1, 2, 3), op("cas", [1, 2], 4, 5), op("read", 2, 6, 7)]
        self.assertIs(self.verdict(h), True)

    def test_stale_read_is_caught(self):
        # the write of 2 returned before the read began, yet the read saw the old value
        h = [op("write", 1, 0, 1), op("write", 2, 2, 3), op("read", 1, 4, 5)]
        r = lin.check(h, initial=0)
        self.assertIs(r["valid"], False)
        self.assertEqual(r["failures"][0]["key"], "k")

    def test_read_of_never_written_value_is_caught(self):
        self.assertIs(self.verdict([op("write", 1, 0, 1), op("read", 3, 2, 3)]), False)

    def test_concurrent_overlapping_either_order(self):
        # write 1 and write 2 overlap; reads after both may see either, but two later
        # sequential reads cannot flip back
        base = [op("write", 1, 0, 10, process=1), op("write", 2, 1, 9, process=2)]
        self.assertIs(self.verdict(base + [op("read", 1, 11, 12)]), True)
        self.assertIs(self.verdict(base + [op("read", 2, 11, 12)]), True)
        self.assertIs(self.verdict(base + [op("read", 2, 11, 12), op("read", 1, 13, 14)]), False)
        # a read overlapping the writes may see the initial value, then a later one a write
        self.assertIs(self.verdict(base + [op("read", 0, 0.5, 5), op("read", 1, 11, 12)]), True)

    def test_overlapping_reads_must_agree_with_one_order(self):
        # two concurrent reads see 1 then 2 and 2 then 1 from two processes: impossible
        h = [op("write", 1, 0, 20, process=1), op("write", 2, 0, 20, process=2),
             op("read", 1, 1, 2, process=3), op("read", 2, 3, 4, process=3),
             op("read", 2, 1, 2, process=4), op("read", 1, 3, 4, process=4)]
        self.assertIs(self.verdict(h), False)

    def test_cas_semantics(self):
        self.assertIs(self.verdict([op("cas", [0, 5], 0, 1), op("read", 5, 2, 3)]), True)
        # a successful cas whose expectation cannot have held
        self.assertIs(self.verdict([op("write", 3, 0, 1), op("cas", [0, 5], 2, 3)]), False)
        # two successful cas from the same expected value in sequence: the second is impossible
        self.assertIs(self.verdict([op("cas", [0, 1], 0, 1), op("cas", [0, 2], 2, 3)]), False)

    def test_failed_ops_have_no_effect(self):
        h = [op("write", 7, 0, 1, type="fail"), op("read", 0, 2, 3)]
        self.assertIs(self.verdict(h), True)
        self.assertIs(self.verdict([op("write", 7, 0, 1, type="fail"), op("read", 7, 2, 3)]), False)

    def test_info_may_take_effect_late_or_never(self):
        # an indeterminate write may land long after its invocation...
        late = [op("write", 9, 0, None, type="info"), op("read", 0, 5, 6), op("read", 9, 7, 8)]
        self.assertIs(self.verdict(late), True)
        # ...or never
        self.assertIs(self.verdict([op("write", 9, 0, None, type="info"), op("read", 0, 5, 6)]), True)
        # but not before it was invoked
        early = [op("read", 9, 0, 1), op("write", 9, 2, None, type="info")]
        self.assertIs(self.verdict(early), False)
        # and not twice: once 9 was overwritten by 1, 9 cannot come back
        twice = [op("write", 9, 0, None, type="info"), op("read", 9, 1, 2), op("write", 1, 3, 4),
                 op("read", 9, 5, 6)]
        self.assertIs(self.verdict(twice), False)

    def test_keys_are_independent(self):
        h = [op("write", 1, 0, 1, key="a"), op("read", 0, 2, 3, key="b"), op("read", 1, 2, 3, key="a")]
        self.assertIs(self.verdict(h), True)
        h.append(op("read", 1, 4, 5, key="b"))
        r = lin.check(h, initial=0)
        self.assertIs(r["valid"], False)
        self.assertEqual([f["key"] for f in r["failures"]], ["b"])

    def test_budget_gives_unknown_not_a_verdict(self):
        h = [op("write", i, 0, 100, process=i) for i in range(12)] + [op("read", 99, 101, 102)]
        self.assertIsNone(lin.check(h, initial=0, budget=50)["valid"])
        self.assertIs(lin.check(h, initial=0)["valid"], False)

    def test_random_sequential_histories_pass_and_are_fast(self):
        # histories produced by a real register with random overlap are linearizable
        rnd = random.Random(7)
        t0 = time.monotonic()
        for trial in range(20):
            state, ops, t = 0, [], 0.0
            for i in range(150):
                f = rnd.choice(["read", "write", "cas"])
                # the op takes effect at t + 0.5; its interval is widened around that point
                inv, eff, comp = t - rnd.random() * 3, t + 0.5, t + 1 + rnd.random() * 3
                if f == "read":
                    ops.append(op("read", state, inv, comp, process=i))
                elif f == "write":
                    v = rnd.randrange(5)
                    state = v
                    ops.append(op("write", v, inv, comp, process=i, type=rnd.choice(["ok", "ok", "info"])))
                else:
                    a, b = rnd.randrange(5), rnd.randrange(5)
                    if state == a:
                        state = b
                        ops.append(op("cas", [a, b], inv, comp, process=i))
                    else:
                        ops.append(op("cas", [a, b], inv, comp, process=i, type="fail"))
                t = eff + 0.5
            self.assertIs(lin.check(ops, initial=0)["valid"], True, trial)
        self.assertLess(time.monotonic() - t0, 20.0)


class History(unittest.TestCase):
    def test_unfinished_becomes_info_and_a_torn_line_is_skipped(self):
        import tempfile
        import history
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "h.jsonl")
            rec = history.Recorder(path, "p")
            a = rec.invoke("write", 1, key="k")
            rec.complete(a, "ok")
            rec.invoke("write", 2, key="k")  # the worker died here
            rec.event("state", "SUSPENDED")
            with open(path, "a") as f:
                f.write('{"ev": "invoke", "id": "p.9", "f"')  # torn by kill -9
            ops = history.load([path, os.path.join(d, "missing.jsonl")])
        self.assertEqual([(o["f"], o["value"], o["type"]) for o in ops],
                         [("write", 1, "ok"), ("write", 2, "info"), ("state", "SUSPENDED", "ok")])
        self.assertIsNone(ops[1]["complete"])
        self.assertLessEqual(ops[0]["invoke"], ops[0]["complete"])


class Ids(unittest.TestCase):
    def test_good(self):
        h = [op("id", 1, 0, 1), op("id", 3, 0.5, 2.5), op("id", 2, 0.5, 3), op("id", 4, 4, 5),
             op("final", [1, 2, 3, 4], 6, 7)]
        self.assertTrue(checkers.unique_ids(h)["valid"])

    def test_duplicate(self):
        r = checkers.unique_ids([op("id", 1, 0, 1), op("id", 1, 2, 3)])
        self.assertFalse(r["valid"])
        self.assertIn("duplicate id", [v["what"] for v in r["violations"]])

    def test_real_time_order(self):
        r = checkers.unique_ids([op("id", 5, 0, 1), op("id", 4, 2, 3)])
        self.assertEqual([v["what"] for v in r["violations"]], ["id order contradicts real time"])

    def test_lost_ack(self):
        r = checkers.unique_ids([op("id", 1, 0, 1), op("id", 2, 2, 3), op("final", [2], 4, 5)])
        self.assertFalse(r["valid"])
        self.assertEqual([o["value"] for o in r["lost"]], [1])


class GrowOnlySet(unittest.TestCase):
    def test_good_with_concurrency_and_info(self):
        h = [op("add", "a", 0, 1), op("add", "b", 0.5, None, type="info"), op("read", ["a"], 2, 3),
             op("read", ["a", "b"], 4, 5), op("add", "c", 5, 7), op("read", ["a", "b"], 6, 6.5),
             op("final", ["a", "b", "c"], 8, 9)]
        self.assertTrue(checkers.grow_only_set(h)["valid"])

    def test_stale_read(self):
        r = checkers.grow_only_set([op("add", "a", 0, 1), op("read", [], 2, 3)])
        self.assertEqual([v["what"] for v in r["violations"]], ["read misses acknowledged adds"])

    def test_phantom(self):
        r = checkers.grow_only_set([op("read", ["z"], 0, 1), op("add", "z", 2, 3)])
        self.assertEqual([v["what"] for v in r["violations"]], ["read has elements never added"])

    def test_lost(self):
        r = checkers.grow_only_set([op("add", "a", 0, 1), op("add", "b", 0, 1), op("final", ["b"], 2, 3)])
        self.assertFalse(r["valid"])
        self.assertEqual([o["value"] for o in r["lost"]], ["a"])


class Counter(unittest.TestCase):
    def test_good(self):
        h = [op("add", 1, 0, 1), op("add", 2, 0.5, None, type="info"), op("add", 4, 2, 3, type="fail"),
             op("read", 1, 2, 3), op("read", 3, 4, 5), op("final", 3, 6, 7)]
        self.assertTrue(checkers.counter(h)["valid"])

    def test_too_low_and_too_high(self):
        r = checkers.counter([op("add", 1, 0, 1), op("read", 0, 2, 3), op("read", 5, 4, 5)])
        self.assertEqual(len(r["violations"]), 2)

    def test_failed_add_counted_is_caught(self):
        r = checkers.counter([op("add", 4, 0, 1, type="fail"), op("read", 4, 2, 3)])
        self.assertFalse(r["valid"])

    def test_lost(self):
        r = checkers.counter([op("add", 1, 0, 1), op("add", 1, 1, 2), op("final", 1, 3, 4)])
        self.assertFalse(r["valid"])
        self.assertTrue(r["lost"])


class FencedLock(unittest.TestCase):
    def hold(self, proc, token, a, b):
        return [op("acquire", token, a - 0.1, a, process=proc), op("release", None, b, b + 0.1, process=proc)]

    def test_good_sequence_and_a_rejected_stale_holder(self):
        ops = self.hold(1, 1, 0, 2) + self.hold(2, 2, 3, 5)
        # process 3 held token 0 but was stopped by the driver: its late write was rejected
        ops += [op("acquire", 0, -1, -0.9, process=3), op("release", None, 6, 7, process=3)]
        store = [{"token": 1, "accepted": True, "time": 1}, {"token": 2, "accepted": True, "time": 4},
                 {"token": 0, "accepted": False, "time": 6}]
        faults = [{"process": 3, "start": -0.5, "end": 5.5}]
        r = checkers.fenced_lock(ops, store, faults)
        self.assertTrue(r["valid"], r["violations"])
        self.assertEqual((r["clean_holds"], r["rejected_writes"]), (2, 1))

    def test_clean_overlap(self):
        r = checkers.fenced_lock(self.hold(1, 1, 0, 4) + self.hold(2, 2, 3, 5), [])
        self.assertEqual([v["what"] for v in r["violations"]], ["two clean holds overlap"])

    def test_overlap_of_a_holder_that_lost_its_connection_is_not_flagged(self):
        ops = self.hold(1, 1, 0, 4) + self.hold(2, 2, 3, 5) + [op("state", "SUSPENDED", 1, 1, process=1)]
        self.assertTrue(checkers.fenced_lock(ops, [])["valid"])

    def test_duplicate_token_and_store_regression(self):
        ops = self.hold(1, 7, 0, 1) + self.hold(2, 7, 2, 3)
        store = [{"token": 7, "accepted": True, "time": 0.5}, {"token": 3, "accepted": True, "time": 2.5}]
        whats = sorted(v["what"] for v in checkers.fenced_lock(ops, store)["violations"])
        self.assertEqual(whats, ["accepted write with a token never granted", "store accepted an older token",
                                 "token granted twice"])


class Ephemerals(unittest.TestCase):
    def test_good(self):
        ops = [op("create", "/e/a", 0, 1, process="o1", session=5),
               op("check", ["/e/a", True], 2, 3, process="o1", session=5),
               op("observe", ["a"], 6, 7, process="obs"), op("observe", [], 16, 17, process="obs"),
               op("final", [], 30, 31, process="obs")]
        r = checkers.ephemerals(ops, [{"process": "o1", "start": 10}], [], 4.0, 2.0)
        self.assertTrue(r["valid"], r["violations"])
        self.assertEqual((r["deaths_checked"], r["max_cleanup_s"]), (1, 7))

    def test_outlives_deadline(self):
        ops = [op("create", "/e/a", 0, 1, process="o1", session=5), op("observe", ["a"], 17, 18, process="obs")]
        r = checkers.ephemerals(ops, [{"process": "o1", "start": 10}], [], 4.0, 2.0)
        self.assertEqual([v["what"] for v in r["violations"]], ["ephemeral outlived its dead session"])
        # a server fault in the window moves the deadline: the same observation is then fine
        r = checkers.ephemerals(ops, [{"process": "o1", "start": 10}], [{"start": 11, "end": 14}], 4.0, 2.0)
        self.assertTrue(r["valid"])
        # a stopped owner that woke before the moved deadline may keep its session: not judged
        r = checkers.ephemerals(ops + [op("observe", ["a"], 25, 26, process="obs")],
                                [{"process": "o1", "start": 10, "resumed": 17}], [{"start": 11, "end": 14}], 4.0, 2.0)
        self.assertEqual((r["valid"], r["deaths_checked"]), (True, 0))
        r = checkers.ephemerals(ops + [op("observe", ["a"], 25, 26, process="obs")],
                                [{"process": "o1", "start": 10, "resumed": 30}], [{"start": 11, "end": 14}], 4.0, 2.0)
        self.assertEqual((r["valid"], r["deaths_checked"]), (False, 1))

    def test_final_read(self):
        ops = [op("create", "/e/a", 0, 1, process="o1", session=5), op("final", ["a"], 50, 51, process="obs")]
        r = checkers.ephemerals(ops, [{"process": "o1", "start": 10}], [], 4.0, 2.0)
        self.assertFalse(r["valid"])

    def test_premature(self):
        ops = [op("create", "/e/a", 0, 1, process="o1", session=5),
               op("check", ["/e/a", False], 2, 3, process="o1", session=5)]
        r = checkers.ephemerals(ops, [], [], 4.0, 2.0)
        self.assertEqual([v["what"] for v in r["violations"]], ["ephemeral gone while its session lives"])
        # on a new session (the old one expired) the node's absence is expected
        ops[1]["session"] = 6
        self.assertTrue(checkers.ephemerals(ops, [], [], 4.0, 2.0)["valid"])


class Watches(unittest.TestCase):
    def reg(self, rid, node, mzxid, t, epoch=0):
        return op("register", None, t, t + 0.01, reg=rid, node=node, mzxid=mzxid, epoch=epoch, process="w")

    def ev(self, rid, node, t, seq, epoch=0, etype="CHANGED"):
        return op("event", None, t, t, reg=rid, node=node, etype=etype, epoch=epoch, seq=seq, process="w")

    def sets(self, *pairs):
        return [op("set", node, t - 0.01, t, mzxid=z, process="writer") for node, z, t in pairs]

    def good(self):
        return (self.sets(("a", 10, 1), ("b", 11, 2), ("a", 12, 3)) +
                [self.reg(1, "a", 5, 0), self.reg(2, "b", 5, 0),
                 self.ev(1, "a", 1.1, 1), self.reg(3, "a", 10, 1.2), self.ev(2, "b", 2.1, 2),
                 self.reg(4, "b", 11, 2.2), self.ev(3, "a", 3.1, 3), self.reg(5, "a", 12, 3.2),
                 op("done", None, 10, 10, process="w")])

    def test_good(self):
        r = checkers.watches(self.good())
        self.assertTrue(r["valid"], r["violations"])

    def test_twice(self):
        h = self.good() + [self.ev(1, "a", 1.15, 1.5)]
        self.assertIn("watch delivered twice", [v["what"] for v in checkers.watches(h)["violations"]])

    def test_missed(self):
        h = [o for o in self.good() if not (o["f"] == "event" and o["reg"] == 3)]
        self.assertIn("watch never delivered", [v["what"] for v in checkers.watches(h)["violations"]])
        # not when the connection was lost after the registration (Kazoo drops its watches)
        self.assertTrue(checkers.watches(h + [op("state", "SUSPENDED", 3.0, 3.0, process="w")])["valid"])
        # but a state change before the registration does not excuse it
        self.assertFalse(checkers.watches(h + [op("state", "SUSPENDED", 0.5, 0.5, process="w")])["valid"])

    def test_out_of_order(self):
        # b's change (after 10, so 11) delivered before a's (the first after 5, so 10)
        h = self.sets(("a", 10, 1), ("b", 11, 2)) + [
            self.reg(1, "a", 5, 0), self.reg(2, "b", 10, 0), self.ev(2, "b", 2.1, 1), self.ev(1, "a", 2.2, 2)]
        self.assertEqual([v["what"] for v in checkers.watches(h)["violations"]], ["watch events out of zxid order"])
        # the same delivery across a reconnect (SetWatches fires in its own order) is not flagged
        h[-1]["epoch"] = h[-2]["epoch"] = 1
        self.assertTrue(checkers.watches(h)["valid"])
        h = self.sets(("a", 10, 1), ("b", 11, 2)) + [
            self.reg(1, "a", 5, 0), self.reg(2, "b", 10, 0), self.ev(1, "a", 2.1, 1), self.ev(2, "b", 2.2, 2)]
        self.assertTrue(checkers.watches(h)["valid"])
        # a registered after b's change was acknowledged at 11, fired before b's event: b's
        # change (<= 11) is older than a's (> 12)
        h = self.sets(("b", 11, 2), ("a", 13, 3)) + [
            self.reg(2, "b", 5, 0), self.reg(1, "a", 12, 2.5), self.ev(1, "a", 3.1, 1), self.ev(2, "b", 3.2, 2)]
        self.assertEqual([v["what"] for v in checkers.watches(h)["violations"]], ["watch events out of zxid order"])

    def test_event_without_newer_data(self):
        h = self.sets(("a", 10, 1)) + [self.reg(1, "a", 10, 0), self.ev(1, "a", 1.1, 1), self.reg(2, "a", 10, 1.2)]
        self.assertIn("event without a newer change visible after it",
                      [v["what"] for v in checkers.watches(h)["violations"]])


if __name__ == "__main__":
    unittest.main(verbosity=1)
