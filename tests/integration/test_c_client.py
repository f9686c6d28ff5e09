#!/usr/bin/python3
"""Runs the C client program (c_client_test.c, libzookeeper_mt) against one server.

The binary comes from C_CLIENT_BIN (the CMake target c_client_test); without it the program is
compiled here with gcc into a temp dir.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server C_CLIENT_BIN=build/tests/integration/c_client_test \
        /usr/bin/python3 tests/integration/test_c_client.py
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class CClient(unittest.TestCase):
    def setUp(self):
        self.tmp = harness.make_temp_dir("zkit-c-")
        self.binary = os.environ.get("C_CLIENT_BIN")
        if not self.binary:
            self.binary = os.path.join(self.tmp, "c_client_test")
            subprocess.run(["gcc", "-DTHREADED", "-O1", "-o", self.binary, os.path.join(HERE, "c_client_test.c"),
                            "-lzookeeper_mt", "-lpthread"], check=True, timeout=120)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_c_client(self):
        with harness.Server(name="cclient") as srv:
            r = subprocess.run([self.binary, srv.hosts], capture_output=True, text=True, timeout=90)
            print(r.stdout.rstrip())
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
            self.assertRegex(r.stdout, r"\d+ passed, 0 failed")

    def test_c_client_session_and_watches_survive_restart(self):
        with harness.Server(name="cclient-restart") as srv:
            p = subprocess.Popen([self.binary, srv.hosts, "--restart"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out = []
            try:
                for line in p.stdout:
                    out.append(line)
                    if line.strip() == "READY":
                        break
                self.assertIn("READY\n", out, "".join(out))
                srv.restart(hard=True)  # SIGKILL, then start on the same dataDir and port
                rest, _ = p.communicate("go\n", timeout=90)
                out.append(rest)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            text = "".join(out)
            print(text.rstrip())
            self.assertEqual(p.returncode, 0, text[-3000:])
            self.assertRegex(text, r"\d+ passed, 0 failed")


if __name__ == "__main__":
    harness.run_suite()
