#!/usr/bin/python3
"""zkCli.sh (ZooKeeperMain from the Debian zookeeper package) driven by scripts against one server:
create, get, set, ls, stat, delete; interactive mode (commands on stdin) and one-shot mode
(command on the command line, exit status 0/1).

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_zkcli.py
"""

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"


def parse_stat(lines):
    """The 'key = value' block printed by stat / get -s, as a dict."""
    out = {}
    for line in lines:
        m = re.match(r"^(cZxid|ctime|mZxid|mtime|pZxid|cversion|dataVersion|aclVersion|ephemeralOwner|"
                     r"dataLength|numChildren) = (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
            if m.group(1) == "numChildren":  # the last line of a block: only the first block counts
                break
    return out


class ZkCli(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(name="zkcli").start()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def cli(self, *args, stdin=None):
        r = subprocess.run([ZKCLI, "-server", self.server.hosts] + list(args), input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90,
                           env=dict(os.environ, CLIENT_JVMFLAGS="-Xmx128m -XX:TieredStopAtLevel=1"))
        # zkCli prints results on stdout and messages (Created, errors) on stderr: both are merged
        # keep only what the commands printed (drop SLF4J noise and the watcher banner)
        lines = [l for l in r.stdout.splitlines()
                 if l and not l.startswith("SLF4J") and not l.startswith("WATCHER::")
                 and not l.startswith("WatchedEvent") and not l.startswith("Connecting to")
                 and not l.startswith("Welcome to ZooKeeper") and not l.startswith("JLine support")]
        return r.returncode, lines, r.stdout

    def test_interactive_script(self):
        script = "\n".join([
            "create /cli hello",
            "get /cli",
            "set /cli world!",
            "get /cli",
            "stat /cli",
            "ls /",
            "create /cli/kid",
            "create -s /cli/seq- s",
            "create -e /cli/eph e",
            "ls /cli",
            "set -v 7 /cli nope",
            "delete /cli",
            "delete /cli/kid",
            "delete /cli/seq-0000000001",
            "delete /cli/eph",
            "get -s /cli",
            "delete /cli",
            "get /cli",
            "stat /cli",
            "quit",
        ]) + "\n"
        rc, lines, raw = self.cli(stdin=script)
        text = "\n".join(lines)
        expected_in_order = [
            "Created /cli",
            "hello",
            "world!",
            "[cli, zookeeper]",
            "Created /cli/kid",
            "Created /cli/seq-0000000001",
            "Created /cli/eph",
            "[eph, kid, seq-0000000001]",
            "version No is not valid : /cli",
            "Node not empty: /cli",
            "world!",
            "Node does not exist: /cli",
            "Node does not exist: /cli",
        ]
        pos = 0
        for want in expected_in_order:
            try:
                idx = lines.index(want, pos)
            except ValueError:
                self.fail("expected line %r (after line %d) not found in zkCli output:\n%s" % (want, pos, raw))
            pos = idx + 1
        st = parse_stat(lines[lines.index("world!"):])
        self.assertEqual(st.get("dataVersion"), "1", text)
        self.assertEqual(st.get("dataLength"), "6", text)
        self.assertEqual(st.get("numChildren"), "0", text)
        self.assertEqual(st.get("ephemeralOwner"), "0x0", text)
        self.assertEqual(st.get("aclVersion"), "0", text)
        self.assertEqual(st.get("cversion"), "0", text)
        self.assertGreater(int(st["mZxid"], 16), int(st["cZxid"], 16))
        self.assertEqual(st["pZxid"], st["cZxid"])
        # get -s after the children came and went: cversion 6 (3 creates + 3 deletes), data kept
        later = parse_stat(lines[lines.index("[eph, kid, seq-0000000001]"):])
        self.assertEqual(later.get("cversion"), "6", text)
        self.assertEqual(later.get("numChildren"), "0", text)
        self.assertGreater(int(later["pZxid"], 16), int(st["pZxid"], 16))

    def test_acl_sync_recursive_commands(self):
        script = "\n".join([
            "create /tree a",
            "create /tree/b",
            "create /tree/b/c",
            "getAcl /tree",
            "setAcl /tree world:anyone:cdrwa",
            "sync /tree",
            "ls -R /tree",
            "deleteall /tree",
            "ls /",
            "quit",
        ]) + "\n"
        rc, lines, raw = self.cli(stdin=script)
        expected_in_order = ["Created /tree", "Created /tree/b", "Created /tree/b/c", "'world,'anyone", ": cdrwa",
                             "Sync is OK", "/tree", "/tree/b", "/tree/b/c", "[zookeeper]"]
        pos = 0
        for want in expected_in_order:
            try:
                pos = lines.index(want, pos) + 1
            except ValueError:
                self.fail("expected line %r (after line %d) not found in zkCli output:\n%s" % (want, pos, raw))

    def test_one_shot_commands_and_exit_status(self):
        rc, lines, raw = self.cli("create", "/oneshot", "v1")
        self.assertEqual(rc, 0, raw)
        self.assertIn("Created /oneshot", lines)
        rc, lines, raw = self.cli("get", "/oneshot")
        self.assertEqual(rc, 0, raw)
        self.assertEqual(lines[-1:], ["v1"], raw)
        rc, lines, raw = self.cli("get", "/oneshot-missing")
        self.assertEqual(rc, 1, raw)
        self.assertIn("Node does not exist: /oneshot-missing", lines)
        rc, lines, raw = self.cli("stat", "/oneshot")
        self.assertEqual(rc, 0, raw)
        st = parse_stat(lines)
        self.assertEqual((st.get("dataVersion"), st.get("dataLength")), ("0", "2"), raw)
        rc, lines, raw = self.cli("delete", "/oneshot")
        self.assertEqual(rc, 0, raw)
        rc, lines, raw = self.cli("ls", "/")
        self.assertEqual(rc, 0, raw)
        self.assertEqual(lines[-1:], ["[zookeeper]"], raw)


if __name__ == "__main__":
    harness.run_suite()
