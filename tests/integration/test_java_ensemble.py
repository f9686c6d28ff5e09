#!/usr/bin/python3
"""The Java client and Curator against a 3-server ensemble: the same mains as test_java.py
(ZkClientTest: CRUD with create2, watches, multi; CuratorTest: InterProcessMutex shared by 3
clients, LeaderLatch, CuratorCache), given the whole ensemble's connect string, so their sessions
land on followers and leaders alike and every write crosses Raft.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_java_ensemble.py
"""

import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402
from test_java import compile_java_mains, run_java_main  # noqa: E402


class JavaOnEnsemble(unittest.TestCase):
    classes_dir = None
    ensemble = None

    @classmethod
    def setUpClass(cls):
        cls.classes_dir = compile_java_mains()
        cls.ensemble = Ensemble(3, name="java-ens").start()

    @classmethod
    def tearDownClass(cls):
        if cls.ensemble:
            cls.ensemble.close()
        shutil.rmtree(cls.classes_dir, ignore_errors=True)

    def run_main(self, cls_name):
        run_java_main(self, self.classes_dir, cls_name, self.ensemble.hosts)

    def test_zookeeper_java_client(self):
        self.run_main("ZkClientTest")

    def test_curator_recipes(self):
        self.run_main("CuratorTest")


if __name__ == "__main__":
    harness.run_suite()
