#!/usr/bin/python3
"""`cmake --install` and systemd readiness (issue 10). Installs the build into a temp DESTDIR and
checks what lands there: the server, zkServer.sh, the example configs, the default config and a
systemd unit with Type=notify whose ExecStart names the installed binary and config. Then runs the
installed server the way systemd would, with NOTIFY_SOCKET naming a datagram socket this test
listens on: READY=1 arrives, after which a client is served at once; SIGTERM brings STOPPING=1.
zkraft only (ZooKeeper has neither).

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_install.py
"""

import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


class Install(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")
        self.build = os.path.dirname(os.path.dirname(os.path.abspath(os.environ["ZKRAFT_BIN"])))
        self.dest = harness.make_temp_dir("zkit-install-")
        env = dict(os.environ, DESTDIR=self.dest)
        r = subprocess.run(["cmake", "--install", self.build], env=env, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        units = [os.path.join(root, f) for root, _, files in os.walk(self.dest) for f in files
                 if f == "zkraft.service"]
        self.assertEqual(len(units), 1, units)
        self.unit = open(units[0]).read()
        exec_line = next(l for l in self.unit.splitlines() if l.startswith("ExecStart="))
        self.exec_args = shlex.split(exec_line[len("ExecStart="):])

    def in_dest(self, path):
        return os.path.join(self.dest, path.lstrip("/"))

    def test_the_unit_names_what_was_installed(self):
        self.assertIn("\nType=notify\n", self.unit)
        self.assertIn("\nRestart=on-failure\n", self.unit)
        self.assertIn("\nLimitNOFILE=", self.unit)
        binary, config = self.exec_args[0], self.exec_args[self.exec_args.index("--config") + 1]
        self.assertTrue(os.access(self.in_dest(binary), os.X_OK), binary)
        self.assertTrue(os.path.isfile(self.in_dest(config)), config)
        prefix = os.path.dirname(os.path.dirname(binary))
        for rel in ("share/zkraft/bin/zkServer.sh", "share/zkraft/conf/standalone.yaml",
                    "share/zkraft/conf/zoo-ensemble-3.cfg"):
            self.assertTrue(os.path.isfile(self.in_dest(os.path.join(prefix, rel))), rel)
        # --help lists every option with its default.
        out = subprocess.run([self.in_dest(binary), "--help"], capture_output=True, text=True).stdout
        for key in ("client_port / clientPort", "tick_time_ms / tickTime", "read_only_mode",
                    "slow_request_threshold_ms"):
            line = next((l for l in out.splitlines() if l.strip().startswith(key)), "")
            self.assertIn("default", line, key)

    def test_ready_is_sent_once_serving_and_stopping_on_sigterm(self):
        binary, config = self.exec_args[0], self.exec_args[self.exec_args.index("--config") + 1]
        sock_path = os.path.join(self.dest, "notify.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        self.addCleanup(sock.close)
        port = harness.free_port()
        data = os.path.join(self.dest, "data")
        log = open(os.path.join(self.dest, "server.log"), "w")
        proc = subprocess.Popen([self.in_dest(binary), "--config", self.in_dest(config), "--data-dir", data,
                                 "--client-port", str(port), "--admin-port", "0"],
                                env=dict(os.environ, NOTIFY_SOCKET=sock_path), stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        messages = []
        sock.settimeout(20.0)
        while not any("READY=1" in m for m in messages):
            messages.append(sock.recv(4096).decode())
        ready = [m for m in messages if "READY=1" in m][0]
        self.assertIn("STATUS=serving", ready)
        c = KazooClient(hosts="127.0.0.1:%d" % port, timeout=10.0)
        c.start(timeout=5.0)  # served at once: no waiting for an election after READY
        c.create("/installed", b"x")
        c.stop()
        c.close()
        proc.send_signal(signal.SIGTERM)
        stopping = False
        deadline = time.monotonic() + 20.0
        while not stopping and time.monotonic() < deadline:
            stopping = "STOPPING=1" in sock.recv(4096).decode()
        self.assertTrue(stopping)
        self.assertEqual(proc.wait(30), 0)
        self.assertEqual(sum("READY=1" in m for m in messages), 1, messages)


if __name__ == "__main__":
    harness.run_suite()
