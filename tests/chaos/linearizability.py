"""Linearizability of a compare-and-set register, checked per key (Wing and Gong's search with
Lowe's memoisation, as in Porcupine and Knossos's WGL). Pure: a history in, a verdict out.

An operation is a dict with
    key      which register (registers are independent: linearizability is local, so each key
             is searched on its own and a history of many keys stays cheap)
    f        "read" | "write" | "cas"
    value    read: the value seen; write: the value written; cas: [expected, new]
    type     "ok" | "fail" | "info"
    invoke, complete   monotonic seconds (complete is ignored for "info")
    process  who ran it (only for messages)

Semantics: "fail" means the operation certainly had no effect, so it is dropped. "info" means
the outcome is unknown: the operation may take effect at any point after its invocation, or
never, so it has no return event and the search may leave it out. Reads with "info" say nothing
and are dropped. An operation that returns before another is invoked must take effect first;
operations whose intervals overlap (including equal times: calls sort before returns) may be
ordered either way.
"""


class _Entry:
    __slots__ = ("op", "index", "is_call", "match", "prev", "next")

    def __init__(self, op, index, is_call):
        self.op, self.index, self.is_call = op, index, is_call
        self.match = self.prev = self.next = None


def _step(state, op):
    """The register model: (accepted, new state)."""
    f, v = op["f"], op["value"]
    if f == "read":
        return state == v, state
    if f == "write":
        return True, v
    if f == "cas":
        expected, new = v
        return (state == expected), new if state == expected else state
    raise ValueError("unknown register operation %r" % f)


def _freeze(v):
    return tuple(v) if isinstance(v, list) else v


def check_key(ops, initial=None, budget=2_000_000):
    """ops: the operations of one key. Returns (verdict, info) where verdict is True
    (linearizable), False (not) or None (the search budget ran out: unknown)."""
    ops = [dict(o, value=_freeze(o["value"])) for o in ops
           if o["type"] == "ok" or (o["type"] == "info" and o["f"] != "read")]
    events = []
    for i, o in enumerate(ops):
        events.append((o["invoke"], 0, i, True))
        if o["type"] == "ok":
            events.append((o["complete"], 1, i, False))
    events.sort()
    head = _Entry(None, -1, False)
    tail = head
    calls = {}
    for _, _, i, is_call in events:
        e = _Entry(ops[i], i, is_call)
        if is_call:
            calls[i] = e
        else:
            calls[i].match = e
        tail.next, e.prev = e, tail
        tail = e

    def lift(e):
        e.prev.next = e.next
        if e.next:
            e.next.prev = e.prev
        m = e.match
        if m:
            m.prev.next = m.next
            if m.next:
                m.next.prev = m.prev

    def unlift(e):
        m = e.match
        if m:
            m.prev.next = m
            if m.next:
                m.next.prev = m
        e.prev.next = e
        if e.next:
            e.next.prev = e

    returns_left = sum(1 for o in ops if o["type"] == "ok")
    state, linearized, cache, stack = initial, 0, set(), []
    entry, steps, deepest = head.next, 0, 0
    while returns_left:
        steps += 1
        if steps > budget:
            return None, {"reason": "search budget exhausted", "steps": steps}
        if entry is None:
            break  # only calls of indeterminate operations are left: they may never happen
        if entry.is_call:
            accepted, new_state = _step(state, entry.op)
            if accepted:
                bits = linearized | (1 << entry.index)
                if (bits, new_state) not in cache:
                    cache.add((bits, new_state))
                    stack.append((entry, state))
                    state, linearized = new_state, bits
                    if entry.match:
                        returns_left -= 1
                    lift(entry)
                    deepest = max(deepest, len(stack))
                    entry = head.next
                    continue
            entry = entry.next
        else:
            # A return reached before its operation could be placed: undo the last choice.
            if not stack:
                blocked = entry.op
                return False, {"reason": "no linearization", "blocked": blocked,
                               "longest_prefix": deepest, "steps": steps}
            e, state = stack.pop()
            linearized &= ~(1 << e.index)
            if e.match:
                returns_left += 1
            unlift(e)
            entry = e.next
    return True, {"steps": steps}


def check(history, initial=None, budget=2_000_000):
    """All keys of a register history. Returns a dict: valid (True/False/None), per-key
    failures (key, reason, the operation that could not be placed) and counts."""
    by_key = {}
    for o in history:
        by_key.setdefault(o["key"], []).append(o)
    failures, unknown = [], []
    for key in sorted(by_key, key=str):
        ok, info = check_key(by_key[key], initial, budget)
        if ok is False:
            failures.append(dict(info, key=key))
        elif ok is None:
            unknown.append(key)
    return {"valid": False if failures else (None if unknown else True),
            "keys": len(by_key), "ops": len(history), "failures": failures, "unknown": unknown}
