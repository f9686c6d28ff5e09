"""Where snapshots happened during a run, and whether the leader changed.

zkraft: from each member's server.log, every line naming "snapshot at index I" (the fork, the
child's end, the raft node storing it and compacting, a follower installing one) bounds the window
of snapshot I: from its first such line to its last. Apache ZooKeeper: a poller sees each
version-2/snapshot.* file appear and grow; its window is from first seen to the last size change
(each edge widened by one poll interval). A LeaderWatch polls `srvr` on every member.
"""

import datetime
import glob
import os
import re
import threading
import time

from bench_servers import mode

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ")
SNAPSHOT_AT = re.compile(r"snapshot at index (\d+)")


def zkraft_windows(log_path, offset=0):
    """[(from_unix_s, to_unix_s)] of the snapshots logged after byte `offset`."""
    spans = {}
    with open(log_path, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    for line in text.splitlines():
        m, s = STAMP.match(line), SNAPSHOT_AT.search(line)
        if not m or not s:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        lo, hi = spans.get(s.group(1), (t, t))
        spans[s.group(1)] = (min(lo, t), max(hi, t))
    return sorted(spans.values())


class Poller(threading.Thread):
    """Polls, every `interval` s, the members' leader (`srvr`) and (ZooKeeper) snapshot files."""

    def __init__(self, members, watch_files, interval=0.05, mode_every=5):
        super().__init__(daemon=True)
        self.members, self.watch_files, self.interval, self.mode_every = members, watch_files, interval, mode_every
        self.stop_flag = threading.Event()
        self.files = {}  # path -> [first_seen, last_change, size]
        self.leaders = []  # (time, tuple of member ids reporting "leader")
        self.no_leader_polls = 0  # polls in which no member answered srvr as a serving leader
        self.mode_polls = 0

    def poll_files(self, now):
        for m in self.members:
            for p in glob.glob(os.path.join(m.data, "version-2", "snapshot.*")):
                try:
                    size = os.path.getsize(p)
                except OSError:
                    continue
                e = self.files.get(p)
                if e is None:
                    self.files[p] = [now, now, size]
                elif size != e[2]:
                    e[1], e[2] = now, size

    def poll_modes(self, now):
        modes = [mode(m.port) if m.running() else "" for m in self.members]
        leaders = tuple(m.myid for m, md in zip(self.members, modes) if md == "leader")
        self.mode_polls += 1
        if not leaders:
            self.no_leader_polls += 1
        if not self.leaders or self.leaders[-1][1] != leaders:
            self.leaders.append((now, leaders))

    def run(self):
        n = 0
        while not self.stop_flag.is_set():
            now = time.time()
            if self.watch_files:
                self.poll_files(now)
            if n % self.mode_every == 0:
                self.poll_modes(now)
            n += 1
            time.sleep(self.interval)

    def stop(self):
        self.stop_flag.set()
        self.join()

    def file_windows(self, existing_before):
        return sorted((e[0] - self.interval, e[1] + self.interval)
                      for p, e in self.files.items() if p not in existing_before)

    def leader_changed(self):
        """True when another member (or two at once) was seen leading. Polls where no member
        served as leader (a leader that lost contact with a quorum stops serving, and srvr then
        names no mode) are counted in no_leader_polls instead: an outage, not an election."""
        seen = [ids for _, ids in self.leaders if ids]
        return len(set(seen)) > 1 or any(len(ids) > 1 for ids in seen)


def existing_snapshot_files(members):
    return {p for m in members for p in glob.glob(os.path.join(m.data, "version-2", "snapshot.*"))}
