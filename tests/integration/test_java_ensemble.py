#!/usr/bin/python3
"""The Java client and Curator against a 3-server ensemble: the same mains as test_java.py
(ZkClientTest: CRUD with create2, watches, multi; CuratorTest: InterProcessMutex shared by 3
clients, LeaderLatch, CuratorCache), given the whole ensemble's connect string, so their sessions
land on followers and leaders alike and every write crosses Raft.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_java_ensemble.py
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402
from test_java import COMPILE_CP, JAVA_DIR, RUN_CP_EXTRA  # noqa: E402


class JavaOnEnsemble(unittest.TestCase):
    classes_dir = None
    ensemble = None

    @classmethod
    def setUpClass(cls):
        cls.classes_dir = harness.make_temp_dir("zkit-java-ens-")
        sources = sorted(os.path.join(JAVA_DIR, f) for f in os.listdir(JAVA_DIR) if f.endswith(".java"))
        r = subprocess.run(["javac", "-nowarn", "-d", cls.classes_dir, "-cp", COMPILE_CP] + sources,
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            raise RuntimeError("javac failed:\n" + r.stdout + r.stderr)
        cls.ensemble = Ensemble(3, name="java-ens").start()

    @classmethod
    def tearDownClass(cls):
        if cls.ensemble:
            cls.ensemble.close()
        shutil.rmtree(cls.classes_dir, ignore_errors=True)

    def run_main(self, cls_name):
        cp = ":".join([self.classes_dir, COMPILE_CP, RUN_CP_EXTRA])
        r = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                            "-cp", cp, cls_name, self.ensemble.hosts],
                           capture_output=True, text=True, timeout=150)
        out = r.stdout + r.stderr
        print(out.rstrip())
        self.assertEqual(r.returncode, 0, "%s exited %d" % (cls_name, r.returncode))
        self.assertRegex(out, r"\d+ passed, 0 failed")

    def test_zookeeper_java_client(self):
        self.run_main("ZkClientTest")

    def test_curator_recipes(self):
        self.run_main("CuratorTest")


if __name__ == "__main__":
    harness.run_suite()
