#!/usr/bin/python3
"""tools/zkServer.sh driven as a test rig or an init script drives ZooKeeper's bin/zkServer.sh:
start, status (Mode: standalone), a write, restart with the data kept, stop, and the exit codes
and lines when nothing runs. Where Debian's /usr/share/zookeeper/bin/zkServer.sh is installed, the
same steps run through it (against Apache ZooKeeper 3.8) and must print the same lines and exit
with the same codes, so they are known to be ZooKeeper's; its status must also read zkraft's srvr.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_zkserver_sh.py
"""

import logging
import os
import re
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire as W  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

SCRIPT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                       "tools", "zkServer.sh"))
DEBIAN_SCRIPT = "/usr/share/zookeeper/bin/zkServer.sh"
NOT_RUNNING = "Error contacting service. It is probably not running.\n"
# Debian's zkEnv.sh fixes ZOO_LOG_DIR here; its start needs to write there.
DEBIAN_LOG_DIR = "/var/log/zookeeper"


def process_gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1].startswith("Z")  # exited, not reaped
    except OSError:
        return True


class Rig:
    """A config dir, data dir, log dir and free port, and the script run on them."""

    def __init__(self, name, cfg_name="zoo.cfg", extra=""):
        self.dir = harness.make_temp_dir("zkit-zkserver-%s-" % name)
        self.conf = os.path.join(self.dir, "conf")
        self.data = os.path.join(self.dir, "data")
        self.logs = os.path.join(self.dir, "logs")
        os.makedirs(self.conf)
        self.port = harness.free_port()
        self.cfg = os.path.join(self.conf, cfg_name)
        with open(self.cfg, "w") as f:
            f.write("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                    "admin.enableServer=false\n%s" % (self.data, self.port, extra))
        self.pidfile = os.path.join(self.data, "zookeeper_server.pid")
        self.started = []  # pids the script started for this test (stopped by cleanup)

    def env(self, **extra):
        env = dict(os.environ, ZOOCFGDIR=self.conf, ZOO_LOG_DIR=self.logs,
                   ZKRAFT_SERVER=os.environ.get("ZKRAFT_BIN", ""))
        for k in ("ZOOCFG", "ZOOPIDFILE", "SERVER_JVMFLAGS", "JVMFLAGS"):
            env.pop(k, None)
        env.update(extra)
        return env

    def run(self, *args, script=SCRIPT, env=None, timeout=60):
        """(exit code, stdout) of the script; stderr (the "Using config" lines) is not compared."""
        p = subprocess.run([script] + list(args), env=env or self.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=self.dir)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def pid(self, pidfile=None):
        with open(pidfile or self.pidfile) as f:
            pid = int(f.read())
        if pid not in self.started:
            self.started.append(pid)
        return pid

    def cleanup(self):
        for pid in self.started:
            if not process_gone(pid):
                os.kill(pid, 9)

    def status_line(self):
        return "Client port found: %d. Client address: 127.0.0.1. Client SSL: false.\n" % self.port


def wait_serving(rig, script=SCRIPT, env=None, timeout=30.0):
    """Polls status until it says Mode (ZooKeeper's JVM may need more than start's 1 s)."""
    deadline = time.monotonic() + timeout
    while True:
        out = rig.run("status", rig.cfg, script=script, env=env)
        if out[0] == 0 or time.monotonic() > deadline:
            return out
        time.sleep(0.2)


def cycle(test, rig, script=SCRIPT, env=None):
    """The steps a rig takes, as (label, exit code, stdout) with pids and the data path
    normalised, for comparing ZooKeeper's script with ours."""
    steps = []

    def step(label, *args):
        rc, out, err = rig.run(*args, script=script, env=env)
        norm = out.replace(rig.dir, "<dir>")
        norm = re.sub(r"process \d+\.", "process <pid>.", norm)
        steps.append((label, rc, norm))
        return rc, out, err

    step("status before start", "status", rig.cfg)
    step("stop before start", "stop", rig.cfg)
    rc, out, err = step("start", "start", rig.cfg)
    test.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
    pid = rig.pid(env.get("ZOOPIDFILE") if env else None)
    steps.append(("status once serving",) + wait_serving(rig, script, env)[:2])
    step("start while running", "start", rig.cfg)
    step("stop", "stop", rig.cfg)
    test.assertTrue(harness.wait_until(lambda: process_gone(pid), 20), "the server is still running")
    step("status after stop", "status", rig.cfg)
    step("stop after stop", "stop", rig.cfg)
    return steps


class ZkServerSh(unittest.TestCase):
    maxDiff = None

    def rig(self, *args, **kwargs):
        r = Rig(*args, **kwargs)
        self.addCleanup(r.cleanup)
        return r

    def test_a_rig_starts_checks_writes_restarts_with_the_data_kept_and_stops(self):
        rig = self.rig("cycle")
        self.assertEqual(rig.run("status")[:2], (1, rig.status_line() + NOT_RUNNING))
        self.assertEqual(rig.run("stop")[:2], (0, "Stopping zookeeper ... no zookeeper to stop (could not "
                                                  "find file %s)\n" % rig.pidfile))
        rc, out, err = rig.run("start")
        self.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
        self.assertIn("Using config: %s/zoo.cfg" % rig.conf, err)
        first = rig.pid()
        self.assertFalse(process_gone(first))
        self.assertEqual(rig.run("start")[:2], (1, "Starting zookeeper ... already running as process %d.\n" % first))
        self.assertEqual(wait_serving(rig)[:2], (0, rig.status_line() + "Mode: standalone\n"))
        self.assertTrue(os.path.exists(os.path.join(rig.logs, "zookeeper-%s-server-%s.out" % (
            os.environ.get("USER", ""), os.uname().nodename))) or os.listdir(rig.logs), os.listdir(rig.logs))

        zk = KazooClient(hosts="127.0.0.1:%d" % rig.port, timeout=10.0)
        zk.start(timeout=20)
        zk.create("/rig", b"kept")
        zk.stop()
        zk.close()

        rc, out, err = rig.run("restart")
        self.assertEqual((rc, out), (0, "Stopping zookeeper ... STOPPED\nStarting zookeeper ... STARTED\n"), err)
        self.assertTrue(process_gone(first), "restart left the old server running")
        second = rig.pid()
        self.assertNotEqual(first, second)
        self.assertEqual(wait_serving(rig)[0], 0)
        zk = KazooClient(hosts="127.0.0.1:%d" % rig.port, timeout=10.0)
        zk.start(timeout=20)
        self.assertEqual(zk.get("/rig")[0], b"kept")
        zk.stop()
        zk.close()

        self.assertEqual(rig.run("stop")[:2], (0, "Stopping zookeeper ... STOPPED\n"))
        self.assertTrue(process_gone(second))
        self.assertFalse(os.path.exists(rig.pidfile))
        self.assertEqual(rig.run("status")[:2], (1, rig.status_line() + NOT_RUNNING))
        self.assertEqual(rig.run("stop")[0], 0)

    def test_the_config_as_second_argument_config_dir_option_pidfile_and_yaml(self):
        rig = self.rig("args", cfg_name="other.cfg")
        pidfile = os.path.join(rig.dir, "run", "zk.pid")
        env = rig.env(ZOOPIDFILE=pidfile)
        # A name: looked up in ZOOCFGDIR.
        rc, out, err = rig.run("start", "other.cfg", env=env)
        self.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
        self.assertIn("Using config: %s/other.cfg" % rig.conf, err)
        rig.pid(pidfile)
        # A path elsewhere: used as it is; --config DIR instead of ZOOCFGDIR.
        env_no_dir = dict(env)
        del env_no_dir["ZOOCFGDIR"]
        out = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            out = rig.run("--config", rig.conf, "status", "other.cfg", env=env_no_dir)
            if out[0] == 0:
                break
            time.sleep(0.2)
        self.assertEqual(out[:2], (0, rig.status_line() + "Mode: standalone\n"))
        self.assertEqual(rig.run("status", rig.cfg, env=env)[:2], (0, rig.status_line() + "Mode: standalone\n"))
        self.assertEqual(rig.run("stop", "other.cfg", env=env)[:2], (0, "Stopping zookeeper ... STOPPED\n"))
        # ZOOCFG names the file too.
        self.assertEqual(rig.run("status", env=rig.env(ZOOCFG="other.cfg"))[0], 1)

        # zkraft's YAML: status finds client_port and client_address there.
        yaml_path = os.path.join(rig.conf, "zk.yaml")
        with open(yaml_path, "w") as f:
            f.write("client_port: %d\nclient_address: 127.0.0.1\ndata_dir: %s\ntick_time_ms: 500\n"
                    % (rig.port, os.path.join(rig.dir, "ydata")))
        rc, out, err = rig.run("start", "zk.yaml")
        self.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
        rig.pid(os.path.join(rig.dir, "ydata", "zookeeper_server.pid"))
        deadline = time.monotonic() + 20
        while True:
            out = rig.run("status", "zk.yaml")
            if out[0] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(out[:2], (0, rig.status_line() + "Mode: standalone\n"))
        self.assertEqual(rig.run("stop", "zk.yaml")[:2], (0, "Stopping zookeeper ... STOPPED\n"))

    def test_a_server_that_cannot_start_fails_to_start(self):
        rig = self.rig("bad", extra="tickTime=soon\n")
        rc, out, _ = rig.run("start")
        self.assertEqual((rc, out), (1, "Starting zookeeper ... FAILED TO START\n"))
        with open(os.path.join(rig.logs, os.listdir(rig.logs)[0])) as f:
            self.assertIn("config error: tickTime", f.read())

    def test_print_cmd_version_and_usage(self):
        rig = self.rig("misc")
        rc, out, _ = rig.run("print-cmd")
        self.assertEqual(rc, 0)
        self.assertIn('"%s" --config "%s"' % (os.environ["ZKRAFT_BIN"], rig.cfg), out)
        rc, out, _ = rig.run("version")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("zkraft "), out)
        rc, out, err = rig.run("frobnicate")
        self.assertEqual((rc, out), (0, ""))  # ZooKeeper's script prints usage and exits 0
        self.assertIn("Usage: ", err)

    def test_a_jvm_flag_in_zookeeper_env_sh_reaches_the_server(self):
        rig = self.rig("envsh")
        with open(os.path.join(rig.conf, "zookeeper-env.sh"), "w") as f:
            f.write('SERVER_JVMFLAGS="-Xmx1g -Dzookeeper.extendedTypesEnabled=true"\n')
        rc, out, err = rig.run("start")
        self.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
        rig.pid()
        self.assertEqual(wait_serving(rig)[0], 0)
        # TTL nodes need zookeeper.extendedTypesEnabled; kazoo has no TTL create, so ask over the
        # wire: createTTL (21, persistent with TTL = mode 5) answers 0, not Unimplemented (-6).
        raw = W.RawSession("127.0.0.1", rig.port)
        body = W.create_body("/t", b"", flags=5) + struct.pack(">q", 60000)
        _, (_, _, err_code, _) = raw.call(21, body)
        raw.close_session()
        self.assertEqual(err_code, 0)
        self.assertEqual(rig.run("stop")[0], 0)


class EnsembleThroughTheScript(unittest.TestCase):
    """Three servers, each started by the script from its own config dir. No clientPort line:
    status finds the port in this server's server.N line through dataDir/myid, as ZooKeeper's does."""

    def test_status_says_leader_or_follower_on_each_member(self):
        base = harness.make_temp_dir("zkit-zkserver-ensemble-")
        ports = [(harness.free_port(), harness.free_port(), harness.free_port()) for _ in range(3)]
        servers = "".join("server.%d=127.0.0.1:%d:%d;127.0.0.1:%d\n" % (i + 1, p, e, c)
                          for i, (p, e, c) in enumerate(ports))
        members = []
        for i in range(3):
            conf = os.path.join(base, "conf%d" % (i + 1))
            data = os.path.join(base, "data%d" % (i + 1))
            os.makedirs(conf)
            os.makedirs(data)
            with open(os.path.join(data, "myid"), "w") as f:
                f.write("%d\n" % (i + 1))
            with open(os.path.join(conf, "zoo.cfg"), "w") as f:
                f.write("tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nadmin.enableServer=false\n%s"
                        % (data, servers))
            env = dict(os.environ, ZOOCFGDIR=conf, ZOO_LOG_DIR=os.path.join(base, "logs%d" % (i + 1)),
                       ZKRAFT_SERVER=os.environ.get("ZKRAFT_BIN", ""))
            members.append((env, os.path.join(data, "zookeeper_server.pid"), ports[i][2]))

        def run(env, *args):
            p = subprocess.run([SCRIPT] + list(args), env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60)
            return p.returncode, p.stdout.decode()

        started = []

        def stop_all():
            for env, pidfile, _ in members:
                run(env, "stop")
            for pid in started:
                if not process_gone(pid):
                    os.kill(pid, 9)
        self.addCleanup(stop_all)
        for env, pidfile, _ in members:
            self.assertEqual(run(env, "start"), (0, "Starting zookeeper ... STARTED\n"))
            with open(pidfile) as f:
                started.append(int(f.read()))
        modes = {}

        def all_serving():
            for env, _, port in members:
                rc, out = run(env, "status")
                if rc != 0:
                    return False
                modes[port] = out
            return sorted(o.splitlines()[-1] for o in modes.values()) == [
                "Mode: follower", "Mode: follower", "Mode: leader"]
        self.assertTrue(harness.wait_until(all_serving, 30, interval=0.3), modes)
        for env, _, port in members:
            self.assertTrue(modes[port].startswith(
                "Client port found: %d. Client address: 127.0.0.1. Client SSL: false.\n" % port), modes[port])
        for env, _, _ in members:
            self.assertEqual(run(env, "stop"), (0, "Stopping zookeeper ... STOPPED\n"))


@unittest.skipUnless(os.access(DEBIAN_SCRIPT, os.X_OK), "Debian's zookeeper package is not installed")
class AgainstZooKeepersScript(unittest.TestCase):
    maxDiff = None

    def test_not_running_status_stop_and_usage_match_zookeepers_script(self):
        ours, theirs = Rig("ours-idle"), Rig("debian-idle")
        for rig in (ours, theirs):
            self.addCleanup(rig.cleanup)
        pid_ours = os.path.join(ours.dir, "none", "zk.pid")
        pid_theirs = os.path.join(theirs.dir, "none", "zk.pid")
        # Debian's zkEnv.sh fixes ZOOCFGDIR (/etc/zookeeper/conf): the config goes as a full path.
        for args in (("status",), ("stop",), ("frobnicate",)):
            a = ours.run(*(args + (ours.cfg,)), env=ours.env(ZOOPIDFILE=pid_ours))
            b = theirs.run(*(args + (theirs.cfg,)), script=DEBIAN_SCRIPT, env=theirs.env(ZOOPIDFILE=pid_theirs))
            self.assertEqual((a[0], a[1].replace(ours.dir, "<dir>").replace(str(ours.port), "<port>")),
                             (b[0], b[1].replace(theirs.dir, "<dir>").replace(str(theirs.port), "<port>")),
                             args)
        self.assertEqual(b[0], 0)  # the usage exit code, as the script has it

    @unittest.skipUnless(os.access(DEBIAN_LOG_DIR, os.W_OK) or os.access("/var/log", os.W_OK),
                         "Debian's script writes its log to /var/log/zookeeper")
    def test_a_whole_cycle_prints_what_zookeepers_script_prints(self):
        ours, theirs = Rig("ours-cycle"), Rig("debian-cycle")
        for rig in (ours, theirs):
            self.addCleanup(rig.cleanup)
        mine = cycle(self, ours, env=ours.env(ZOOPIDFILE=os.path.join(ours.dir, "zk.pid")))
        jvm = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.admin.enableServer=false"
        reference = cycle(self, theirs, script=DEBIAN_SCRIPT,
                          env=theirs.env(ZOOPIDFILE=os.path.join(theirs.dir, "zk.pid"), SERVER_JVMFLAGS=jvm))
        norm = lambda steps, rig: [(l, rc, out.replace(str(rig.port), "<port>")) for l, rc, out in steps]
        self.assertEqual(norm(mine, ours), norm(reference, theirs))
        self.assertIn(("status once serving", 0,
                       "Client port found: <port>. Client address: 127.0.0.1. Client SSL: false.\nMode: standalone\n"),
                      norm(reference, theirs))

    def test_zookeepers_script_reads_zkrafts_mode(self):
        rig = Rig("debian-status")
        self.addCleanup(rig.cleanup)
        rc, out, err = rig.run("start")
        self.assertEqual((rc, out), (0, "Starting zookeeper ... STARTED\n"), err)
        rig.pid()
        self.assertEqual(wait_serving(rig, script=DEBIAN_SCRIPT)[:2], (0, rig.status_line() + "Mode: standalone\n"))
        self.assertEqual(rig.run("stop")[0], 0)


if __name__ == "__main__":
    harness.run_suite()
