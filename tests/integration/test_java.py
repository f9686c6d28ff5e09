#!/usr/bin/python3
"""Compiles tests/integration/java/*.java with javac against the Debian jars (into a temp dir) and
runs each main against one server: ZooKeeper Java client (ZkClientTest) and Curator (CuratorTest).

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_java.py
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

JAVA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java")
# The jars' manifests (Class-Path) bring in jute, netty, guava, slf4j-api, jackson, ...
COMPILE_CP = ":".join("/usr/share/java/%s.jar" % j for j in (
    "zookeeper", "zookeeper-jute", "curator-client", "curator-framework", "curator-recipes",
    "slf4j-api", "guava"))
RUN_CP_EXTRA = "/usr/share/java/slf4j-nop.jar"


def compile_java_mains():
    """javac every main in java/ into a fresh temp dir; returns the dir."""
    classes_dir = harness.make_temp_dir("zkit-java-")
    sources = sorted(os.path.join(JAVA_DIR, f) for f in os.listdir(JAVA_DIR) if f.endswith(".java"))
    r = subprocess.run(["javac", "-nowarn", "-d", classes_dir, "-cp", COMPILE_CP] + sources,
                       capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        raise RuntimeError("javac failed:\n" + r.stdout + r.stderr)
    return classes_dir


def run_java_main(test, classes_dir, cls_name, hosts):
    """Runs one compiled main against `hosts`; it must exit 0 and report no failed check."""
    cp = ":".join([classes_dir, COMPILE_CP, RUN_CP_EXTRA])
    r = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "-cp", cp, cls_name, hosts],
                       capture_output=True, text=True, timeout=150)
    out = r.stdout + r.stderr
    print(out.rstrip())
    test.assertEqual(r.returncode, 0, "%s exited %d" % (cls_name, r.returncode))
    test.assertRegex(out, r"\d+ passed, 0 failed")


class JavaClients(unittest.TestCase):
    classes_dir = None
    server = None

    @classmethod
    def setUpClass(cls):
        cls.classes_dir = compile_java_mains()
        cls.server = harness.Server(name="java").start()

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            cls.server.close()
        shutil.rmtree(cls.classes_dir, ignore_errors=True)

    def run_main(self, cls_name):
        run_java_main(self, self.classes_dir, cls_name, self.server.hosts)

    def test_session_and_watches_survive_server_restart(self):
        # own server: this one gets killed and restarted under the client
        with harness.Server(name="java-restart") as srv:
            cp = ":".join([self.classes_dir, COMPILE_CP, RUN_CP_EXTRA])
            p = subprocess.Popen(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                  "-cp", cp, "ReconnectTest", srv.hosts],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out = []
            try:
                for line in p.stdout:
                    out.append(line)
                    if line.strip() == "READY":
                        break
                self.assertIn("READY\n", out, "".join(out))
                srv.restart(hard=True)  # SIGKILL, then start on the same dataDir and port
                p.stdin.write("RESTARTED\n")
                p.stdin.flush()
                rest, _ = p.communicate(timeout=120)
                out.append(rest)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            text = "".join(out)
            print(text.rstrip())
            self.assertEqual(p.returncode, 0, text)
            self.assertRegex(text, r"\d+ passed, 0 failed")

    def test_zookeeper_java_client(self):
        self.run_main("ZkClientTest")

    def test_curator_recipes(self):
        self.run_main("CuratorTest")


if __name__ == "__main__":
    harness.run_suite()
