"""The fixture of the Kazoo suites (test_kazoo.py, test_kazoo_recipes.py): one server per suite
class, a fresh root znode and a Kazoo client per test, every client stopped after it."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

WAIT = 15.0  # generous upper bound for anything that should happen "soon" (2 shared cores)


class KazooCase(unittest.TestCase):
    server = None
    server_name = "kazoo"  # names the server's directory and log

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(name=cls.server_name).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        self.clients = []
        self.zk = self.client()
        self.root = "/kz-%s" % self._testMethodName
        self.zk.ensure_path(self.root)

    def tearDown(self):
        for c in self.clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass

    def client(self, **kw):
        c = KazooClient(hosts=self.server.hosts, timeout=kw.pop("timeout", 10.0), **kw)
        self.clients.append(c)
        c.start(timeout=WAIT)
        return c
