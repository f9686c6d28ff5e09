#!/usr/bin/python3
"""Operators' four-letter-word tools against zkraft, and against Apache ZooKeeper 3.8 for a
differential check (both servers started here, on free ports, with the same load):

  - zktop (Debian package): run as an operator runs it, under a pseudo-terminal (it is a curses
    program with no batch mode), pointed at BOTH servers at once; the screen it draws is
    rebuilt by a small terminal emulator and read: the ensemble line, one row per server (not
    "Unavailable", the mode letter S), and the session table with the load's connections. Its
    own parser (zktop.ZKServer, which falls back to "Unavailable" on any surprise in `stat`)
    is also run directly: the same attributes for both servers, counts equal.
  - the Java client's org.apache.zookeeper.client.FourLetterWordMain (Debian's zookeeper.jar):
    ruok, srvr, stat, mntr, conf, envi, wchs, isro, each printed by it; the same lines or keys
    as ZooKeeper prints, values compared where the identical load makes them identical.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_four_letter_tools.py
"""

import logging
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

ZKTOP = "/usr/bin/zktop"
ROWS, COLS = 30, 110
WORDS = ("ruok", "srvr", "stat", "mntr", "conf", "envi", "wchs", "isro")


class Screen:
    """Just enough of an xterm for what curses draws under TERM=xterm-256color (zktop needs
    colours: use_default_colors fails without them): text, CR/LF/BS, cursor moves (CUP, VPA,
    HPA, CUU/CUD/CUF/CUB), erase in line and display, ECH, REP, ICH/DCH, IL/DL. Other
    sequences (SGR, modes, scroll region, alternate screen) change nothing we read."""

    CSI = re.compile(rb"\x1b\[([?0-9;]*)([@-~])")

    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.cells = [[" "] * cols for _ in range(rows)]
        self.y = self.x = 0
        self.last = " "

    def feed(self, data):
        i = 0
        while i < len(data):
            b = data[i]
            if b == 0x1b:
                m = self.CSI.match(data, i)
                if m:
                    self._csi(m.group(1).decode(), m.group(2).decode())
                    i = m.end()
                    continue
                # ESC ( B, ESC ) 0, ESC 7/8, ESC =, ESC >: two or three bytes, no effect here.
                i += 3 if i + 1 < len(data) and data[i + 1] in b"()" else 2
                continue
            if b == 0x0d:
                self.x = 0
            elif b == 0x0a:
                self.y = min(self.y + 1, self.rows - 1)
            elif b == 0x08:
                self.x = max(self.x - 1, 0)
            elif b >= 0x20:
                self._put(chr(b))
            i += 1

    def _put(self, ch):
        if self.x < self.cols:
            self.cells[self.y][self.x] = ch
        self.x = min(self.x + 1, self.cols - 1)
        self.last = ch

    def _csi(self, params, final):
        nums = [int(p) if p.isdigit() else 0 for p in params.lstrip("?").split(";")] if params else []
        n = nums[0] if nums and nums[0] else 1
        if final in "Hf":
            self.y = min(max((nums[0] if nums and nums[0] else 1) - 1, 0), self.rows - 1)
            self.x = min(max((nums[1] if len(nums) > 1 and nums[1] else 1) - 1, 0), self.cols - 1)
        elif final == "d":
            self.y = min(max(n - 1, 0), self.rows - 1)
        elif final == "G":
            self.x = min(max(n - 1, 0), self.cols - 1)
        elif final == "b":
            for _ in range(n):
                self._put(self.last)
        elif final == "X":
            for c in range(self.x, min(self.x + n, self.cols)):
                self.cells[self.y][c] = " "
        elif final == "@":
            row = self.cells[self.y]
            self.cells[self.y] = (row[:self.x] + [" "] * n + row[self.x:])[:self.cols]
        elif final == "P":
            row = self.cells[self.y]
            self.cells[self.y] = row[:self.x] + row[self.x + n:] + [" "] * n
        elif final in "LM" and not params.startswith("?"):
            blank = [[" "] * self.cols for _ in range(n)]
            if final == "L":
                self.cells = (self.cells[:self.y] + blank + self.cells[self.y:])[:self.rows]
            else:
                self.cells = self.cells[:self.y] + self.cells[self.y + n:] + blank
        elif final == "A":
            self.y = max(self.y - n, 0)
        elif final == "B":
            self.y = min(self.y + n, self.rows - 1)
        elif final == "C":
            self.x = min(self.x + n, self.cols - 1)
        elif final == "D":
            self.x = max(self.x - n, 0)
        elif final == "K":
            mode = nums[0] if nums else 0
            rng = range(self.x, self.cols) if mode == 0 else range(0, self.x + 1) if mode == 1 else range(self.cols)
            for c in rng:
                self.cells[self.y][c] = " "
        elif final == "J":
            mode = nums[0] if nums else 0
            rows = range(self.y + 1, self.rows) if mode == 0 else range(self.rows) if mode == 2 else range(0, self.y)
            if mode == 0:
                self._csi("0", "K")
            for r in rows:
                self.cells[r] = [" "] * self.cols

    def lines(self):
        return ["".join(r).rstrip() for r in self.cells]


def run_zktop(servers, seconds=4.0):
    """zktop --servers <servers> under a pty of ROWS x COLS for `seconds`, then 'q'. The screen."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: zktop on the pty
        os.environ["TERM"] = "xterm-256color"
        os.environ["LINES"], os.environ["COLUMNS"] = str(ROWS), str(COLS)
        try:
            os.execv("/usr/bin/python3", ["/usr/bin/python3", ZKTOP, "--servers", servers, "-t", "2"])
        finally:
            os._exit(127)
    import fcntl
    import struct
    import termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    screen = Screen(ROWS, COLS)
    raw = b""
    deadline = time.monotonic() + seconds
    quit_sent = False
    try:
        while True:
            now = time.monotonic()
            if now >= deadline and not quit_sent:
                os.write(fd, b"q")
                quit_sent = True
                deadline = now + 5.0
            elif now >= deadline:
                break
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break  # the child closed the pty (it quit)
                if not chunk:
                    break
                raw += chunk
                if not quit_sent:
                    screen.feed(chunk)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return screen.lines(), raw, status


def zktop_parse(host, port):
    """zktop's own parser of `stat` (its module, imported with its options parsed from argv)."""
    saved = sys.argv
    sys.argv = [ZKTOP, "-t", "5"]
    try:
        sys.path.insert(0, "/usr/lib/python3/dist-packages")
        import zktop  # noqa: F401  (parses sys.argv at import)
    finally:
        sys.argv = saved
    return zktop.ZKServer("%s:%d" % (host, port), 0)


def four_letter_word_main(port, word):
    out = subprocess.run(
        ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
         "-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "-cp", harness.ZK_CLASSPATH,
         "org.apache.zookeeper.client.FourLetterWordMain", "127.0.0.1", str(port), word],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return out.returncode, out.stdout.decode("utf-8", "replace"), out.stderr.decode("utf-8", "replace")


def keyed(text, sep):
    """'key<sep>value' lines to a dict (lines without the separator are left out)."""
    out = {}
    for line in text.splitlines():
        if sep in line:
            k, v = line.split(sep, 1)
            out[k.strip()] = v.strip()
    return out


class FourLetterToolsVsZooKeeper(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.servers, cls.clients = {}, []
        for kind in ("zkraft", "zookeeper"):
            srv = harness.Server(kind=kind, name="4lwtools").start()
            cls.servers[kind] = srv
            a = KazooClient(hosts=srv.hosts, timeout=10.0)
            b = KazooClient(hosts=srv.hosts, timeout=10.0)
            a.start(timeout=30)
            b.start(timeout=30)
            a.create("/tools/a", b"x" * 10, makepath=True)
            a.create("/tools/b", b"y")
            b.create("/tools/e", b"", ephemeral=True)
            a.get("/tools/a", watch=lambda e: None)
            b.get_children("/tools", watch=lambda e: None)
            cls.clients += [a, b]
        # Every word from both servers at once (the JVM starts dominate: 2 at a time).
        jobs = [(k, w) for k in cls.servers for w in WORDS]
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda kw: four_letter_word_main(cls.servers[kw[0]].port, kw[1]), jobs))
        cls.printed = {kw: r for kw, r in zip(jobs, results)}

    @classmethod
    def tearDownClass(cls):
        for c in cls.clients:
            c.stop()
            c.close()
        for s in cls.servers.values():
            s.close()

    def out(self, kind, word):
        rc, out, err = self.printed[(kind, word)]
        self.assertEqual(rc, 0, "%s %s: %s" % (kind, word, err))
        return out

    # -- FourLetterWordMain -------------------------------------------------------------------

    def test_fourletterwordmain_ruok_and_isro_print_the_same(self):
        for word, want in (("ruok", "imok\n\n"), ("isro", "rw\n\n")):
            for kind in self.servers:
                # send4LetterWord appends "\n" to each line it reads (the answers have none);
                # println one more.
                self.assertEqual(self.out(kind, word), want, (kind, word))

    def test_fourletterwordmain_srvr_has_zookeepers_lines(self):
        printed = {k: self.out(k, "srvr") for k in self.servers}
        for kind, text in printed.items():
            self.assertRegex(text.splitlines()[0], r"^Zookeeper version: \d+\.\d+\.\d+-", kind)
        zk, zr = (keyed(printed[k], ": ") for k in ("zookeeper", "zkraft"))
        self.assertEqual(set(zr), set(zk))
        for key in ("Mode", "Node count", "Outstanding"):
            self.assertEqual(zr[key], zk[key], key)
        self.assertEqual(zr["Mode"], "standalone")
        self.assertRegex(zr["Zxid"], r"^0x[0-9a-f]+$")
        self.assertRegex(zr["Latency min/avg/max"], r"^\d+/[\d.]+/\d+$")

    def test_fourletterwordmain_stat_lists_the_clients_as_zookeeper(self):
        session = re.compile(r"^ /[\da-fA-F:.]+:\d+\[\d+\]\((\w+=[^,)]*)(,\w+=[^,)]*)*\)$")
        for kind in self.servers:
            text = self.out(kind, "stat")
            lines = text.splitlines()
            self.assertEqual(lines[1], "Clients:", kind)
            end = lines.index("", 2)
            clients = lines[2:end]
            # The two kazoo sessions and this connection (and another word's, run alongside).
            self.assertGreaterEqual(len(clients), 3, (kind, clients))
            for line in clients:
                self.assertRegex(line, session, kind)
        zk, zr = (set(keyed(self.out(k, "stat"), ": ")) for k in ("zookeeper", "zkraft"))
        self.assertEqual(zr, zk)

    def test_fourletterwordmain_mntr_has_zookeepers_core_keys_and_counts(self):
        zk, zr = (keyed(self.out(k, "mntr"), "\t") for k in ("zookeeper", "zkraft"))
        core = {"zk_version", "zk_server_state", "zk_znode_count", "zk_watch_count",
                "zk_ephemerals_count", "zk_approximate_data_size", "zk_num_alive_connections",
                "zk_outstanding_requests", "zk_avg_latency", "zk_max_latency", "zk_min_latency",
                "zk_packets_received", "zk_packets_sent", "zk_open_file_descriptor_count",
                "zk_max_file_descriptor_count"}
        self.assertLessEqual(core, set(zk))
        self.assertLessEqual(core, set(zr))
        for key in ("zk_server_state", "zk_znode_count", "zk_watch_count", "zk_ephemerals_count"):
            self.assertEqual(zr[key], zk[key], key)

    def test_fourletterwordmain_conf_envi_and_wchs(self):
        zk, zr = (keyed(self.out(k, "conf"), "=") for k in ("zookeeper", "zkraft"))
        for key in ("clientPort", "dataDir", "tickTime", "maxClientCnxns", "minSessionTimeout",
                    "maxSessionTimeout"):
            self.assertIn(key, zr)
            if key not in ("dataDir", "clientPort"):
                self.assertEqual(zr[key], zk[key], key)
        self.assertEqual(zr["clientPort"], str(self.servers["zkraft"].port))
        for kind in self.servers:
            self.assertEqual(self.out(kind, "envi").splitlines()[0], "Environment:", kind)
        wchs = {k: self.out(k, "wchs") for k in self.servers}
        self.assertEqual(wchs["zkraft"], wchs["zookeeper"])
        self.assertRegex(wchs["zkraft"], r"^[1-9] connections watching [1-9] paths\nTotal watches:[1-9]\n\n$")

    # -- zktop ----------------------------------------------------------------------------------

    def test_zktop_parses_stat_of_both_alike(self):
        parsed = {k: zktop_parse(s.host, s.port) for k, s in self.servers.items()}
        for kind, z in parsed.items():
            self.assertFalse(z.unavailable, kind)  # its parser raised nowhere
            self.assertEqual(z.mode, "standalone", kind)
            self.assertRegex(z.version, r"^\d+\.\d+\.\d+$", kind)
            for s in z.sessions:
                for attr in ("queued", "recved", "sent"):
                    self.assertTrue(getattr(s, attr).isdigit(), (kind, attr))
        zk, zr = parsed["zookeeper"], parsed["zkraft"]
        self.assertEqual(len(zr.sessions), len(zk.sessions))
        self.assertEqual(zr.node_count, zk.node_count)
        self.assertEqual(set(vars(zr)) - {"sessions"}, set(vars(zk)) - {"sessions"})

    def test_zktop_draws_both_servers_under_a_terminal(self):
        order = ("zookeeper", "zkraft")
        servers = ",".join(self.servers[k].hosts for k in order)
        lines, raw, status = run_zktop(servers)
        screen = "\n".join(lines)
        self.assertTrue(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
                        "zktop exited %r; screen:\n%s" % (status, screen))
        summary = re.search(r"Ensemble -- nodecount:(\d+) zxid:0x([0-9a-f]+) sessions:(\d+)", screen)
        self.assertIsNotNone(summary, screen)
        self.assertGreaterEqual(int(summary.group(3)), 4, screen)  # 2 kazoo sessions per server
        self.assertIn("ID SERVER           PORT M    OUTST    RECVD     SENT CONNS MINLAT AVGLAT MAXLAT", screen)
        rows = {}
        for line in lines:
            m = re.match(r"^(\d)\s+127\.0\.0\.1\s+(\d+) (\w)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)$", line)
            if m:
                rows[int(m.group(1))] = m.groups()
        self.assertEqual(sorted(rows), [0, 1], screen)  # one full row each: neither "Unavailable"
        for i, kind in enumerate(order):
            row = rows[i]
            self.assertEqual(int(row[1]), self.servers[kind].port)
            self.assertEqual(row[2], "S", kind)  # standalone
            self.assertGreaterEqual(int(row[6]), 2, kind)  # CONNS: the two kazoo clients
        self.assertIn("CLIENT           PORT S I   QUEUED    RECVD     SENT", screen)
        # Each kazoo client's row names the server (S column) it is on.
        client_rows = [l for l in lines if re.match(r"^127\.0\.0\.1\s+\d+ [01] \d\s+\d+\s+\d+\s+\d+$", l)]
        self.assertGreaterEqual(len({l.split()[2] for l in client_rows}), 2, screen)
        print("zktop's screen (zookeeper = 0, zkraft = 1):\n" + "\n".join(l for l in lines if l))


if __name__ == "__main__":
    harness.run_suite()
