#!/usr/bin/python3
"""The dashboard at / of the admin port (issue 10), in a real headless Chromium (Debian's
`chromium`, driven over the DevTools protocol by cdp.py): a 3-server zkraft ensemble, an
AdminServer on every member.

  - the page loads from the binary (page, script, styles: no other origin is asked for anything)
    and shows every member, with the leader the ensemble reports (srvr) highlighted, on the
    leader's page (with each member's lag) and on a follower's (lag unknown, said so);
  - the leader's page shows every member's term, commit and applied index (what each follower
    reports of itself to the leader twice a second), one term, each catching up after writes; a
    follower's page shows only its own ("–" for the others);
  - under a Kazoo load on the follower, its requests-per-second chart's data rises from idle and
    the canvas' pixels change;
  - after kill -9 of the leader, the follower's page shows the new leader (the one srvr reports
    among the survivors), and the dead leader's page shows its "stopped answering" banner.

Screenshots go to $ZKIT_ARTIFACTS if set, else to a temp dir of their own that is kept (three
PNGs, four with the member figures); their paths are printed. zkraft only: ZooKeeper has no dashboard.

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_dashboard.py
"""

import http.client
import json
import logging
import os
import sys
import threading
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
WAIT = 30.0

# What the page shows, read from its DOM in one evaluation.
READ_PAGE = """(() => {
  const rows = [...document.querySelectorAll('#members tbody tr')].map(tr => ({
    id: Number(tr.dataset.id), role: tr.dataset.role, highlighted: tr.classList.contains('leader'),
    cells: [...tr.children].map(td => td.textContent)}));
  const chart = (id) => { const c = document.getElementById(id);
    return {count: Number(c.dataset.count || 0), max: Number(c.dataset.max || 0),
            recent: c.dataset.recent || '', pixels: c.toDataURL()}; };
  const banner = document.getElementById('banner');
  return {polls: Number(document.body.dataset.polls || 0), state: document.body.dataset.state || '',
          leader: Number(document.getElementById('leader').dataset.leader || 0),
          leaderText: document.getElementById('leader').textContent,
          banner: banner.hidden ? '' : banner.textContent, rows: rows,
          note: document.getElementById('members-note').textContent,
          znodes: document.getElementById('tile-znodes').textContent,
          sessions: document.getElementById('tile-sessions').textContent,
          fsync: document.getElementById('tile-fsync').textContent,
          rps: chart('chart-rps'), latency: chart('chart-latency')};
})()"""


def http_get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()
    finally:
        c.close()


def artifacts_dir():
    d = os.environ.get("ZKIT_ARTIFACTS")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    # Not removed at exit: the screenshots are what a reader of the test's output looks at.
    return tempfile.mkdtemp(prefix="zkit-dashboard-")


class Dashboard(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")
        if cdp.chromium_binary() is None:
            self.fail("chromium is not installed (tools/install-deps.sh installs Debian's chromium)")
        self.ens = Ensemble(3, name="dash")
        for m in self.ens.members:
            m.admin_port = harness.free_port()
        self.ens.start()
        self.addCleanup(self.ens.close)
        self.assertTrue(harness.wait_until(lambda: self.ens.leader() is not None, WAIT))
        self.browser = cdp.Browser(width=1280, height=1000).start()
        self.addCleanup(self.browser.close)
        self.out = artifacts_dir()

    def read(self, page):
        return page.evaluate(READ_PAGE)

    def wait_page(self, page, predicate, what, timeout=WAIT):
        last = [None]

        def ok():
            last[0] = self.read(page)
            return predicate(last[0])
        if not harness.wait_until(ok, timeout, interval=0.25):
            self.fail("%s; the page shows %s" % (what, json.dumps(
                {k: v for k, v in last[0].items() if k not in ("rps", "latency")}, indent=1)))
        return last[0]

    def assert_members(self, view, leader_id, lag_known):
        self.assertEqual(sorted(r["id"] for r in view["rows"]), [1, 2, 3], view["rows"])
        roles = {r["id"]: r["role"] for r in view["rows"]}
        self.assertEqual(roles[leader_id], "leader", view["rows"])
        self.assertEqual(sorted(roles.values()), ["follower", "follower", "leader"], view["rows"])
        self.assertEqual([r["id"] for r in view["rows"] if r["highlighted"]], [leader_id])
        self.assertEqual(view["leader"], leader_id)
        self.assertIn("server %d" % leader_id, view["leaderText"])
        lags = [r["cells"][6] for r in view["rows"]]
        if lag_known:
            self.assertNotIn("?", lags, view["rows"])
        else:
            self.assertEqual(lags, ["?", "?", "?"], view["rows"])
            self.assertIn("Lag unknown here", view["note"])

    def test_every_members_term_commit_and_applied_on_the_leaders_page(self):
        # Each follower reports its own figures to the leader twice a second (MemberFigures):
        # the leader's page shows every member's term, commit and applied index as numbers, the
        # same term everywhere, and after writes each member's commit and applied catch up with
        # the leader's. A follower's page knows only its own (and says so with "–").
        leader = self.ens.leader()
        follower = next(m for m in self.ens.members if m is not leader)
        lpage = self.browser.open("http://127.0.0.1:%d/" % leader.admin_port)
        # open() does not wait for the page: READ_PAGE needs its elements.
        loaded = "document.readyState === 'complete' && !!document.getElementById('chart-latency')"
        self.assertTrue(harness.wait_until(lambda: lpage.evaluate(loaded), WAIT), "the page did not load")

        def figures(v):
            # cells: id, role, term, commit, applied, match, lag, active
            return {r["id"]: r["cells"][2:5] for r in v["rows"]}

        def all_numbers(v):
            f = figures(v)
            return len(f) == 3 and all(c.replace(",", "").isdigit() for row in f.values() for c in row)
        view = self.wait_page(lpage, all_numbers, "the leader's page did not show every member's figures")
        num = lambda c: int(c.replace(",", ""))
        f = figures(view)
        self.assertEqual(len({num(row[0]) for row in f.values()}), 1, f)  # one term
        c = KazooClient(hosts=leader.hosts, timeout=10.0)
        c.start(timeout=WAIT)
        try:
            for i in range(30):
                c.create("/figures-%d" % i, b"x")
            target = c.exists("/figures-29").mzxid  # its log index
        finally:
            c.stop()
            c.close()

        def caught_up(v):
            if not all_numbers(v):
                return False
            return all(num(row[1]) >= target and num(row[2]) >= target for row in figures(v).values())
        view = self.wait_page(lpage, caught_up, "the members' commit and applied did not reach %d" % target)
        self.assertTrue(all(num(row[1]) >= num(row[2]) for row in figures(view).values()), figures(view))
        fpage = self.browser.open("http://127.0.0.1:%d/" % follower.admin_port)
        self.assertTrue(harness.wait_until(lambda: fpage.evaluate(loaded), WAIT), "the page did not load")
        fview = self.wait_page(fpage, lambda v: v["polls"] >= 2 and len(v["rows"]) == 3,
                               "the follower's page did not show three members")
        for row in fview["rows"]:
            cells = row["cells"][2:5]
            if row["id"] == follower.myid:
                self.assertTrue(all(num(x) >= target for x in cells[1:]), fview["rows"])
            else:
                self.assertEqual(cells, ["–", "–", "–"], fview["rows"])
        path = os.path.join(self.out, "dashboard-member-figures.png")
        lpage.screenshot(path)
        print("  member figures on leader %d's page: %s (screenshot %s)"
              % (leader.myid, json.dumps(figures(view)), path), flush=True)

    def test_members_leader_charts_and_failover(self):
        t0 = time.monotonic()
        leader = self.ens.leader()
        follower = next(m for m in self.ens.members if m is not leader)
        # Served from the binary, each with its type; status.json is what the page polls.
        for path, ctype in (("/", "text/html"), ("/dashboard/dashboard.js", "text/javascript"),
                            ("/dashboard/dashboard.css", "text/css"),
                            ("/dashboard/status.json", "application/json")):
            status, got, body = http_get(follower.admin_port, path)
            self.assertEqual(status, 200, path)
            self.assertTrue(got.startswith(ctype), (path, got))
            self.assertGreater(len(body), 100, path)

        lpage = self.browser.open("http://127.0.0.1:%d/" % leader.admin_port)
        fpage = self.browser.open("http://127.0.0.1:%d/" % follower.admin_port)
        lview = self.wait_page(lpage, lambda v: v["polls"] >= 2 and len(v["rows"]) == 3,
                               "the leader's page did not show three members")
        self.assert_members(lview, leader.myid, lag_known=True)
        fview = self.wait_page(fpage, lambda v: v["polls"] >= 3 and len(v["rows"]) == 3,
                               "the follower's page did not show three members")
        self.assert_members(fview, leader.myid, lag_known=False)
        idle = fview["rps"]
        self.assertGreaterEqual(idle["count"], 2, idle)
        self.assertLess(idle["max"], 5.0, "no client is connected yet: %s" % idle["recent"])
        print("  idle: follower %d's page, leader %d, %d polls, rps %s, znodes %s"
              % (follower.myid, leader.myid, fview["polls"], idle["recent"], fview["znodes"]), flush=True)

        # Load on the follower (its own counters feed its chart): writes and reads for a while.
        stop = threading.Event()
        done = [0]

        def load():
            c = KazooClient(hosts=follower.hosts, timeout=10.0)
            c.start(timeout=WAIT)
            try:
                c.ensure_path("/dash")
                i = 0
                while not stop.is_set():
                    c.create("/dash/n%d" % i, b"x" * 64)
                    c.get("/dash/n%d" % i)
                    i += 1
                    done[0] += 2
            finally:
                c.stop()
                c.close()
        worker = threading.Thread(target=load, daemon=True)
        worker.start()
        try:
            loaded = self.wait_page(fpage, lambda v: v["rps"]["max"] >= 20.0,
                                    "the requests-per-second chart did not rise under load", timeout=20)
        finally:
            time.sleep(1.5)  # a poll or two more under load, for the screenshot
            stop.set()
            worker.join(15)
        self.assertNotEqual(loaded["rps"]["pixels"], idle["pixels"], "the chart was not redrawn")
        self.assertGreater(loaded["latency"]["count"], fview["latency"]["count"])
        lview = self.read(lpage)
        self.assert_members(lview, leader.myid, lag_known=True)
        shot_leader = lpage.screenshot(os.path.join(self.out, "dashboard-leader.png"))
        print("  under load: %d requests sent; follower's rps chart %s (max %.1f), znodes %s, "
              "fsync tile %s on the leader" % (done[0], loaded["rps"]["recent"], loaded["rps"]["max"],
                                               self.read(fpage)["znodes"], lview["fsync"]), flush=True)
        print("  screenshot (leader's page): %s" % shot_leader, flush=True)

        # kill -9 the leader: the follower's page shows the new one; the leader's page, its banner.
        old = leader.myid
        leader.kill9()
        new = [None]

        def new_leader():
            new[0] = self.ens.leader()
            return new[0] is not None
        self.assertTrue(harness.wait_until(new_leader, WAIT), "no new leader after the kill")
        after = self.wait_page(fpage, lambda v: v["leader"] == new[0].myid and any(
            r["role"] == "leader" and r["id"] == new[0].myid for r in v["rows"]),
            "the follower's page did not show the new leader %d" % new[0].myid)
        self.assertNotEqual(after["leader"], old)
        self.assertEqual(sorted(r["id"] for r in after["rows"]), [1, 2, 3])  # still a member
        self.assertEqual([r["id"] for r in after["rows"] if r["highlighted"]], [new[0].myid])
        dead = self.wait_page(lpage, lambda v: "stopped answering" in v["banner"],
                              "the dead leader's page shows no banner", timeout=10)
        self.assertEqual(dead["state"], "down")
        self.assertIn("at its last answer", dead["leaderText"])
        shot = fpage.screenshot(os.path.join(self.out, "dashboard-after-failover.png"))
        lpage.screenshot(os.path.join(self.out, "dashboard-dead-leader.png"))
        print("  after kill -9 of leader %d: follower %d's page shows leader %d (%s); the dead "
              "leader's page: %r" % (old, follower.myid, after["leader"], after["leaderText"],
                                     dead["banner"]), flush=True)
        print("  screenshot: %s" % shot, flush=True)
        print("  took %.1f s" % (time.monotonic() - t0), flush=True)


if __name__ == "__main__":
    harness.run_suite()
