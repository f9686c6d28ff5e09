"""Histories: what a chaos worker did, one JSON line per event, appended with one write(2) per
line (O_APPEND), so a worker killed with -9 leaves every line it finished and nothing torn
beyond the last one, and threads of one worker may share a file.

Lines: {"ev": "invoke", "id", "f", "value", "invoke", "process", ...extra} and
{"ev": "complete", "id", "type": "ok"|"fail"|"info", "complete", ...fields that override}.
load() joins them into operations; an invocation without a completion (the worker died or the
run ended first) becomes "info". Times are time.monotonic() (CLOCK_MONOTONIC, one clock for
every process on the machine).
"""

import itertools
import json
import os
import threading
import time


class Recorder:
    """Appends one worker's events to a history file. Thread-safe."""

    def __init__(self, path, process):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.process = process
        self.ids = itertools.count()
        self.lock = threading.Lock()

    def _write(self, obj):
        os.write(self.fd, (json.dumps(obj, separators=(",", ":"), default=str) + "\n").encode())

    def invoke(self, f, value=None, process=None, **extra):
        with self.lock:
            i = "%s.%d" % (self.process, next(self.ids))
        self._write(dict(extra, ev="invoke", id=i, f=f, value=value, invoke=time.monotonic(),
                         process=process or self.process))
        return i

    def complete(self, i, type, **fields):
        assert type in ("ok", "fail", "info")
        self._write(dict(fields, ev="complete", id=i, type=type, complete=time.monotonic()))

    def event(self, f, value=None, type="ok", **extra):
        """Something observed at one instant (a state change, a watch event)."""
        now = time.monotonic()
        with self.lock:
            i = "%s.%d" % (self.process, next(self.ids))
        self._write(dict(extra, ev="invoke", id=i, f=f, value=value, invoke=now, process=self.process))
        self._write({"ev": "complete", "id": i, "type": type, "complete": now})


def load(paths):
    """Operations from history files, in invocation order."""
    ops = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a torn last line of a killed worker
                ev = e.pop("ev")
                if ev == "invoke":
                    e.setdefault("type", "info")
                    e.setdefault("complete", None)
                    ops[e["id"]] = e
                elif e["id"] in ops:
                    ops[e["id"]].update(e)
    return sorted(ops.values(), key=lambda o: o["invoke"])
