"""Client-side helpers for the ensemble fault tests (test_ensemble_faults.py): kazoo sessions
pinned to chosen members, per-member reads after sync, and writer threads that record for every
write whether it was acknowledged and when it was sent and answered.

A write's outcome is one of three, as a ZooKeeper client sees it:
  acked    - the server answered success: it must be on every member afterwards;
  failed   - the server answered with an error code: it must be on no member;
  unknown  - the connection was lost first: it may or may not have happened, but the members
             must agree (on all of them or on none).
"""

import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import (ConnectionLoss, NoNodeError, OperationTimeoutError, SessionExpiredError,
                              ZookeeperError)
from kazoo.retry import KazooRetry

import harness

WAIT = 30.0

# kazoo raises these when the connection (or the session, as kazoo sees it) was lost with the
# request in flight: the request may or may not have been applied.
UNKNOWN_OUTCOME = (ConnectionLoss, OperationTimeoutError, SessionExpiredError)


def connect(hosts, timeout=10.0, **kw):
    """A started KazooClient on `hosts` (a member's hosts string or several joined by commas)."""
    c = KazooClient(hosts=hosts, timeout=timeout, **kw)
    c.start(timeout=WAIT)
    return c


def stop(*clients):
    for c in clients:
        if c is None:
            continue
        try:
            c.stop()
            c.close()
        except Exception:
            pass


def retrying(client, fn, *args, deadline=WAIT):
    """Run fn(*args) through kazoo's retry (ConnectionLoss, OperationTimeout) until `deadline`.
    Only for idempotent calls (reads, sync, setData of a fixed value)."""
    return KazooRetry(max_tries=-1, deadline=deadline, max_delay=0.5)(fn, *args)


def on_each(members, fn):
    """fn(client) on every running member through a session pinned to it, after sync('/');
    returns {member.name: result}."""
    out = {}
    for m in members:
        if not m.running():
            continue
        c = connect(m.hosts, timeout=10.0)
        try:
            retrying(c, c.sync, "/")
            out[m.name] = fn(c)
        finally:
            stop(c)
    return out


def get_or_none(client, path):
    try:
        return client.get(path)[0]
    except NoNodeError:
        return None


def presence(members, paths):
    """{member.name: {path: data or None}} for every running member (after sync)."""
    def read(c):
        futures = [(p, c.get_async(p)) for p in paths]
        res = {}
        for p, f in futures:
            try:
                res[p] = f.get(timeout=WAIT)[0]
            except NoNodeError:
                res[p] = None
        return res
    return on_each(members, read)


def check_outcomes(test, members, acked, failed, unknown):
    """acked: {path: data} must be on every running member with that data; failed: paths on none;
    unknown: paths on all or none. Fails `test` with the first few violations of each kind."""
    paths = list(acked) + list(failed) + list(unknown)
    seen = presence(members, paths)
    lost, ghosts, split = [], [], []
    for p, data in acked.items():
        for name, res in seen.items():
            if res[p] != data:
                lost.append((p, name, res[p]))
    for p in failed:
        for name, res in seen.items():
            if res[p] is not None:
                ghosts.append((p, name))
    for p in unknown:
        values = {name: res[p] for name, res in seen.items()}
        if len(set(values.values())) > 1:
            split.append((p, values))
    test.assertEqual(lost[:5], [], "%d acknowledged writes missing or wrong on some member (of %d acked)"
                     % (len(lost), len(acked)))
    test.assertEqual(ghosts[:5], [], "%d writes answered with an error are present" % len(ghosts))
    test.assertEqual(split[:5], [], "%d writes of unknown outcome are on some members only" % len(split))
    return seen


class TimedWriters:
    """`writers` threads, each with its own kazoo session on `hosts`, creating unique znodes under
    `parent` one at a time. Every attempt is recorded as (path, data, sent, answered, outcome) with
    outcome 'acked', 'failed' or 'unknown' (connection loss / timeout: not retried, since a
    retried create could not tell its own earlier success from someone else's)."""

    def __init__(self, hosts, parent, writers=4, op_timeout=20.0):
        self.hosts, self.parent, self.writers, self.op_timeout = hosts, parent, writers, op_timeout
        self.records, self.errors = [], []
        self.lock, self.stop_flag = threading.Lock(), threading.Event()
        self.threads = []

    def start(self):
        for i in range(self.writers):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def _run(self, idx):
        try:
            c = KazooClient(hosts=self.hosts, timeout=10.0,
                            connection_retry=KazooRetry(max_tries=-1, max_delay=0.3))
            c.start(timeout=WAIT)
        except Exception as e:
            self.errors.append("writer %d start: %r" % (idx, e))
            return
        n = 0
        try:
            while not self.stop_flag.is_set():
                path = "%s/w%d-%06d" % (self.parent, idx, n)
                data = b"%d:%d" % (idx, n)
                n += 1
                sent = time.monotonic()
                try:
                    c.create_async(path, data).get(timeout=self.op_timeout)
                    outcome = "acked"
                except UNKNOWN_OUTCOME:
                    outcome = "unknown"
                    time.sleep(0.05)
                except ZookeeperError:
                    outcome = "failed"   # an error code from the server: nothing was written
                except Exception:
                    outcome = "unknown"  # the wait timed out (kazoo's handler timeout)
                    time.sleep(0.05)
                with self.lock:
                    self.records.append((path, data, sent, time.monotonic(), outcome))
        finally:
            stop(c)

    def acked_count(self):
        with self.lock:
            return sum(1 for r in self.records if r[4] == "acked")

    def wait_acked(self, n, timeout=2 * WAIT):
        return harness.wait_until(lambda: self.acked_count() >= n, timeout)

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(WAIT + self.op_timeout)

    def outcomes(self):
        acked, failed, unknown = {}, [], []
        with self.lock:
            for path, data, _, _, outcome in self.records:
                if outcome == "acked":
                    acked[path] = data
                elif outcome == "failed":
                    failed.append(path)
                else:
                    unknown.append(path)
        return acked, failed, unknown

    def first_ack_sent_after(self, t):
        """(answered time, path) of the earliest acknowledged write sent after monotonic time t."""
        with self.lock:
            later = [(r[3], r[0]) for r in self.records if r[4] == "acked" and r[2] > t]
        return min(later) if later else None
