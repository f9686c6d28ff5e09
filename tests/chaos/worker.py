#!/usr/bin/python3
"""One chaos client process: runs one workload against the ensemble with Kazoo and records its
history (history.py) until a deadline, then makes its final reads and exits. Started by the
driver (run.py) inside the hub network namespace, so it reaches the servers; the driver may
kill -9, SIGSTOP or SIGCONT it at any time.

    worker.py KIND NAME --hosts H --out FILE --until T [--seed N] [--session-timeout S]
              [--store SOCKET] [--base T0] [--key-period S] [--keys N]

KIND: register | misc (ids, grow-only set, counter, ephemeral observer) | lock | owner
(ephemerals) | watch. T and T0 are time.monotonic() values (one clock machine-wide).
"""

import argparse
import logging
import os
import queue
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from history import Recorder  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import BadVersionError, NoNodeError, NodeExistsError  # noqa: E402
from kazoo.retry import KazooRetry  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
OP_TIMEOUT = 4.0
DEFINITE = (BadVersionError, NoNodeError, NodeExistsError)  # the request was refused: no effect


def client(args, timeout=None, listener=None, index=None):
    hosts = args.hosts
    if args.pin_hosts and index is not None:
        # the split-brain self-check: thread n keeps to server n, so the threads surely differ
        hosts = hosts.split(",")[index % len(hosts.split(","))]
    c = KazooClient(hosts=hosts, timeout=timeout or args.session_timeout,
                    connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
                    randomize_hosts=True)
    if listener:
        c.add_listener(listener)
    while True:
        try:
            c.start(timeout=5)
            return c
        except Exception:
            if time.monotonic() > args.until:
                raise SystemExit(0)
            time.sleep(0.5)


def wait(async_result):
    return async_result.get(timeout=OP_TIMEOUT)


def pause(rnd, low=0.02, high=0.06):
    time.sleep(low + rnd.random() * (high - low))


def sync_read(c, path, children=False):
    wait(c.sync_async(path))
    if children:
        return wait(c.get_children_async(path))
    return wait(c.get_async(path))


def final_read(args, rec, path, fn, kind):
    """Retry a read until it works (the driver healed the faults); give up after 60 s."""
    c = client(args)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        i = rec.invoke("final", None, kind=kind)
        try:
            value = fn(c, path)
            rec.complete(i, "ok", value=value)
            break
        except Exception as e:
            rec.complete(i, "info", error=type(e).__name__)
            time.sleep(0.5)
    c.stop()
    c.close()


# -- register: a CAS register over several znodes, reads after sync -----------------------------

def register_thread(args, rec, n):
    rnd = random.Random("%s-%s-%d" % (args.seed, args.name, n))
    c = client(args, index=n)
    me = "%s-%d" % (args.name, n)
    while time.monotonic() < args.until:
        epoch = int((time.monotonic() - args.base) / args.key_period)
        key = "e%d-%d" % (epoch, rnd.randrange(args.keys))
        path = "/reg/" + key
        roll = rnd.random()
        if roll < 0.5:
            i = rec.invoke("read", None, key=key, process=me)
            try:
                # --plain-reads leaves the sync out: a deliberately weaker client, so a run can
                # show the checker catching the stale reads a lagging follower then serves
                data, _ = wait(c.get_async(path)) if args.plain_reads else sync_read(c, path)
                rec.complete(i, "ok", value=int(data))
            except Exception as e:
                rec.complete(i, "fail" if isinstance(e, NoNodeError) else "info", error=type(e).__name__)
        elif roll < 0.75:
            v = rnd.randrange(5)
            i = rec.invoke("write", v, key=key, process=me)
            try:
                wait(c.set_async(path, str(v).encode()))
                rec.complete(i, "ok")
            except Exception as e:
                rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
        else:
            a, b = rnd.randrange(5), rnd.randrange(5)
            i = rec.invoke("cas", [a, b], key=key, process=me)
            try:
                data, stat = wait(c.get_async(path))
            except Exception as e:
                rec.complete(i, "fail", error=type(e).__name__)  # nothing was written
                continue
            if int(data) != a:
                rec.complete(i, "fail", error="mismatch")
            else:
                try:
                    wait(c.set_async(path, str(b).encode(), version=stat.version))
                    rec.complete(i, "ok")
                except Exception as e:
                    rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
        pause(rnd)


# -- misc: ids, a grow-only set, a counter, and the ephemeral observer ------------------------------

def misc_thread(args, rec, n):
    rnd = random.Random("%s-%s-%d" % (args.seed, args.name, n))
    c = client(args, index=n)
    added = 0
    while time.monotonic() < args.until:
        roll = rnd.random()
        if roll < 0.3:
            i = rec.invoke("id", None, kind="ids")
            try:
                name = wait(c.create_async("/ids/id-", b"", sequence=True))
                rec.complete(i, "ok", value=int(name[-10:]))
            except Exception as e:
                rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
        elif roll < 0.55:
            elem = "%s-%d-%d" % (args.name, n, added)
            added += 1
            i = rec.invoke("add", elem, kind="set")
            try:
                wait(c.create_async("/set/" + elem, b""))
                rec.complete(i, "ok")
            except Exception as e:
                rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
        elif roll < 0.65:
            i = rec.invoke("read", None, kind="set")
            try:
                rec.complete(i, "ok", value=sync_read(c, "/set", children=True))
            except Exception as e:
                rec.complete(i, "info", error=type(e).__name__)
        elif roll < 0.9:
            d = rnd.randrange(1, 4)
            i = rec.invoke("add", d, kind="counter")
            outcome = "fail"
            for _ in range(3):
                try:
                    data, stat = wait(c.get_async("/counter"))
                except Exception:
                    outcome = "fail"  # this attempt wrote nothing; earlier ones were refused
                    continue
                try:
                    wait(c.set_async("/counter", str(int(data) + d).encode(), version=stat.version))
                    outcome = "ok"
                    break
                except BadVersionError:
                    continue
                except Exception:
                    outcome = "info"  # may have been applied: never retry after that
                    break
            rec.complete(i, outcome)
        else:
            i = rec.invoke("read", None, kind="counter")
            try:
                data, _ = sync_read(c, "/counter")
                rec.complete(i, "ok", value=int(data))
            except Exception as e:
                rec.complete(i, "info", error=type(e).__name__)
        pause(rnd)


def observer_thread(args, rec):
    c = client(args)
    while time.monotonic() < args.until:
        i = rec.invoke("observe", None, kind="eph")
        try:
            rec.complete(i, "ok", value=sync_read(c, "/eph", children=True))
        except Exception as e:
            rec.complete(i, "info", error=type(e).__name__)
        time.sleep(0.25)


def run_misc(args, rec):
    threads = [threading.Thread(target=misc_thread, args=(args, rec, n)) for n in range(2)]
    threads.append(threading.Thread(target=observer_thread, args=(args, rec)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final_read(args, Recorder(args.out, args.name + "-final-ids"), "/ids",
               lambda c, p: sorted(int(x[-10:]) for x in sync_read(c, p, children=True)), "ids")
    final_read(args, Recorder(args.out, args.name + "-final-set"), "/set",
               lambda c, p: sync_read(c, p, children=True), "set")
    final_read(args, Recorder(args.out, args.name + "-final-counter"), "/counter",
               lambda c, p: int(sync_read(c, p)[0]), "counter")
    # ephemerals of the last deaths need the session timeout to go: the driver asks for the
    # final observation later (worker KIND=final-eph)


# -- lock: a holder writes with its fencing token to the driver's store --------------------------

def store_write(args, token):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(args.store)
        s.sendall(("W %d %s\n" % (token, args.name)).encode())
        return s.recv(64).decode().startswith("OK")


def run_lock(args, rec):
    rnd = random.Random("%s-%s" % (args.seed, args.name))
    c = client(args, listener=lambda s: rec.event("state", str(s)))
    while time.monotonic() < args.until:
        lock = c.Lock("/lock", args.name)
        i = rec.invoke("acquire", None)
        try:
            got = lock.acquire(timeout=3)
        except Exception as e:
            rec.complete(i, "info", error=type(e).__name__)
            try:
                lock.cancel()
                lock.release()
            except Exception:
                pass
            time.sleep(0.2)
            continue
        if not got:
            rec.complete(i, "fail")
            continue
        token = int(lock.node[-10:])
        rec.complete(i, "ok", value=token)
        for _ in range(rnd.randrange(2, 5)):
            j = rec.invoke("write", token)
            try:
                rec.complete(j, "ok", value=[token, store_write(args, token)])
            except Exception as e:
                rec.complete(j, "info", error=type(e).__name__)
            time.sleep(0.05 + rnd.random() * 0.15)
        j = rec.invoke("release", token)
        try:
            lock.release()
            rec.complete(j, "ok")
        except Exception as e:
            rec.complete(j, "info", error=type(e).__name__)
        time.sleep(rnd.random() * 0.1)


# -- owner: ephemerals of one session, checked by their owner ------------------------------------

def run_owner(args, rec):
    c = client(args)
    made_for, mine = None, []
    while time.monotonic() < args.until:
        try:
            sid = c.client_id[0] if c.client_id else None
        except Exception:
            sid = None
        if sid is not None and sid != made_for:
            made_for, mine = sid, []
            for k in range(2):
                path = "/eph/%s-%x-%d" % (args.name, sid, k)
                i = rec.invoke("create", path, session=sid)
                try:
                    wait(c.create_async(path, b"", ephemeral=True))
                    rec.complete(i, "ok")
                    mine.append(path)
                except Exception as e:
                    rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
        for path in mine:
            i = rec.invoke("check", None, session=made_for)
            try:
                present = wait(c.exists_async(path)) is not None
                after = c.client_id[0] if c.client_id else None
                if after != made_for:
                    rec.complete(i, "info", error="session changed")
                else:
                    rec.complete(i, "ok", value=[path, present])
            except Exception as e:
                rec.complete(i, "info", error=type(e).__name__)
        time.sleep(0.2)


# -- watch: a writer and a watcher of one-shot data watches --------------------------------------

def run_watch(args, rec):
    nodes = ["/watch/n%d" % k for k in range(3)]
    stop_writing = args.until - 4.0

    def writer():
        c = client(args)
        n = 0
        while time.monotonic() < stop_writing:
            path = nodes[n % len(nodes)]
            i = rec.invoke("set", path, process=args.name + "-writer")
            try:
                stat = wait(c.set_async(path, str(n).encode()))
                rec.complete(i, "ok", mzxid=stat.mzxid)
            except Exception as e:
                rec.complete(i, "fail" if isinstance(e, DEFINITE) else "info", error=type(e).__name__)
            n += 1
            time.sleep(0.08)

    state = {"epoch": 0, "seq": 0, "reg": 0}
    lock = threading.Lock()
    due = queue.Queue()

    def listener(s):
        with lock:
            state["epoch"] += 1
        rec.event("state", str(s))

    c = client(args, listener=listener)

    def register(path):
        with lock:
            state["reg"] += 1
            rid = state["reg"]
            epoch = state["epoch"]

        def fired(event):
            with lock:
                state["seq"] += 1
                seq, ep = state["seq"], state["epoch"]
            rec.event("event", None, reg=rid, node=path, etype=str(event.type), epoch=ep, seq=seq)
            due.put(path)

        i = rec.invoke("register", None, reg=rid, node=path, epoch=epoch)
        try:
            _, stat = wait(c.get_async(path, watch=fired))
            rec.complete(i, "ok", mzxid=stat.mzxid)
        except Exception as e:
            rec.complete(i, "info", error=type(e).__name__)
            threading.Timer(0.3, due.put, (path,)).start()

    w = threading.Thread(target=writer)
    w.start()
    for p in nodes:
        register(p)
    while time.monotonic() < args.until:
        try:
            path = due.get(timeout=0.2)
        except queue.Empty:
            continue
        register(path)
    rec.event("done")
    w.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind")
    ap.add_argument("name")
    ap.add_argument("--hosts", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--until", type=float, required=True)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--session-timeout", type=float, default=6.0)
    ap.add_argument("--store")
    ap.add_argument("--base", type=float, default=0.0)
    ap.add_argument("--key-period", type=float, default=4.0)
    ap.add_argument("--keys", type=int, default=3)
    ap.add_argument("--plain-reads", action="store_true")
    ap.add_argument("--pin-hosts", action="store_true")
    args = ap.parse_args()
    rec = Recorder(args.out, args.name)
    if args.kind == "register":
        threads = [threading.Thread(target=register_thread, args=(args, rec, n)) for n in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif args.kind == "misc":
        run_misc(args, rec)
    elif args.kind == "lock":
        run_lock(args, rec)
    elif args.kind == "owner":
        run_owner(args, rec)
    elif args.kind == "watch":
        run_watch(args, rec)
    elif args.kind == "final-eph":
        final_read(args, rec, "/eph", lambda c, p: sync_read(c, p, children=True), "eph")
    else:
        raise SystemExit("unknown workload %r" % args.kind)
    os._exit(0)  # Kazoo's threads of stopped-but-unclosed clients must not hold the exit


if __name__ == "__main__":
    main()
