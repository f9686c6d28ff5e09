"""The differential test's seeded random mixes on raw sessions (run_random_script), recorded in
differential_raw's transcript; test_differential.py explains the normalisation."""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zkwire  # noqa: E402
from differential_raw import keeps_partial, multi_errs  # noqa: E402


RANDOM_PATHS = ["/r/a", "/r/b", "/r/a/x", "/r/a/y", "/r/b/x", "/r/a/x/q"]


def run_random_script(server, seed, n_ops=300):
    """A seeded random mix of creates (all flag combinations), deletes and setData with random
    versions, checks, reads with watches, and multis over a small namespace, from two sessions
    (the second is closed and replaced half-way). Same seed, same requests: the transcripts of
    both servers must match step for step, error precedence and watch events included."""
    rng = random.Random(seed)
    W = zkwire
    P = W.ustring
    I = W.int32

    @keeps_partial
    def script(server, T):
        sessions = [W.RawSession(server.host, server.port, timeout_ms=30000) for _ in range(2)]
        T.rec("create /r", *sessions[0].call(W.OP_CREATE, W.create_body("/r", b"")), lambda d: d.ustring())

        def write_op():
            kind = rng.choice(["create", "create", "create", "delete", "set", "set", "check"])
            p = rng.choice(RANDOM_PATHS)
            if kind == "create":
                flags = rng.choice([0, 0, 1, 2, 3])
                return W.OP_CREATE, W.create_body(p if flags < 2 else p + "-", b"d%d" % rng.randrange(100), flags=flags), kind
            if kind == "delete":
                return W.OP_DELETE, P(p) + I(rng.choice([-1, -1, 0, 1, 2])), kind
            if kind == "set":
                return W.OP_SETDATA, P(p) + W.buffer(b"v%d" % rng.randrange(100)) + I(rng.choice([-1, -1, 0, 1, 2])), kind
            return W.OP_CHECK, P(p) + I(rng.choice([0, 1, 2])), kind

        def decode_write(kind):
            if kind == "create":
                return lambda d: d.ustring()
            if kind == "set":
                return T.stat_of
            return None

        # the first reply s0 gets after s1 is closed may follow the events of that close, whose
        # order is not defined: compare those as a set
        state = {"after_close": False, "who": 0}

        def rec(label, frames, reply, decode=None):
            unordered = state["after_close"] and state["who"] == 0
            if unordered:
                state["after_close"] = False
            T.rec(label, frames, reply, decode, unordered_events=unordered)

        for i in range(n_ops):
            if i == n_ops // 2:
                T.rec("close s2", *sessions[1].call(W.OP_CLOSE))
                sessions[1].abandon()
                sessions[1] = W.RawSession(server.host, server.port, timeout_ms=30000)
                state["after_close"] = True
            who = rng.randrange(2)
            state["who"] = who
            s = sessions[who]
            r = rng.random()
            p = rng.choice(RANDOM_PATHS)
            if r < 0.45:
                op, body, kind = write_op()
                if op == W.OP_CHECK:
                    continue  # check only inside multi
                rec("%d s%d %s" % (i, who, kind), *s.call(op, body), decode_write(kind))
            elif r < 0.6:
                rec("%d s%d getData %s" % (i, who, p), *s.call(W.OP_GETDATA, P(p) + W.boolean(rng.random() < 0.5)),
                      lambda d: [d.buffer(), T.stat_of(d)])
            elif r < 0.7:
                rec("%d s%d exists %s" % (i, who, p), *s.call(W.OP_EXISTS, P(p) + W.boolean(rng.random() < 0.5)),
                      T.stat_of)
            elif r < 0.82:
                rec("%d s%d getChildren2 %s" % (i, who, p),
                      *s.call(W.OP_GETCHILDREN2, P(p) + W.boolean(rng.random() < 0.5)),
                      lambda d: [sorted(d.strings()), T.stat_of(d)])
            else:
                ops = [write_op() for _ in range(rng.randrange(1, 4))]
                rec("%d s%d multi %s" % (i, who, [k for _, _, k in ops]),
                      *s.call(W.OP_MULTI, W.multi_body([(op, body) for op, body, _ in ops])), multi_errs)
        for s in sessions:
            s.close_session()

    return script(server)
