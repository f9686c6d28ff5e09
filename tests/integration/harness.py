"""Start, stop, kill and restart one ZooKeeper-compatible server for integration tests
(ensembles of them: ensemble.py), and run a suite (run_suite).

Run everything here with /usr/bin/python3 (the Debian interpreter that has python3-kazoo).

Which server a test talks to is chosen by environment variables:
  ZK_TARGET=zkraft|zookeeper   (default: zkraft when ZKRAFT_BIN is set, else zookeeper)
  ZKRAFT_BIN=/path/to/zkraft-server
  ZK_KEEP=1                    keep temp dirs (configs, data, server logs) after the run

Both servers are started from the same generated zoo.cfg:
  zkraft:    $ZKRAFT_BIN --config zoo.cfg
  zookeeper: java -cp zookeeper.jar:slf4j-simple.jar org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg
             (org.apache.zookeeper.server.quorum.QuorumPeerMain for an ensemble member)

Invariants: every server listens on 127.0.0.1 on a port found by binding port 0; every process this
module starts is stopped by its PID (SIGTERM, then SIGKILL) when the Server is closed, at interpreter
exit (atexit) and, as a last resort, by the kernel (PR_SET_PDEATHSIG) if the test process dies.
"""

import atexit
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ZK_CLASSPATH = ":".join([
    "/usr/share/java/zookeeper.jar",       # its manifest Class-Path brings jute, netty, slf4j-api, ...
    "/usr/share/java/slf4j-simple.jar",    # logs to stderr, which we capture
])

_LIVE = []            # every Server created in this process, for cleanup and log tails
_LIVE_LOCK = threading.Lock()
_TEMP_DIRS = []       # extra temp dirs made by suites (make_temp_dir)


def target_kind():
    kind = os.environ.get("ZK_TARGET")
    if not kind:
        kind = "zkraft" if os.environ.get("ZKRAFT_BIN") else "zookeeper"
    if kind not in ("zkraft", "zookeeper"):
        raise SystemExit("ZK_TARGET must be zkraft or zookeeper, not %r" % kind)
    if kind == "zkraft" and not os.environ.get("ZKRAFT_BIN"):
        raise SystemExit("ZK_TARGET=zkraft needs ZKRAFT_BIN=/path/to/zkraft-server")
    return kind


def free_port():
    """A port that was free a moment ago (bind port 0). The caller retries on a collision."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    # Runs in the child between fork and exec: the kernel kills the server if the test process
    # dies without running its cleanup (e.g. ctest timeout SIGKILL). Servers must therefore be
    # started from a thread that outlives them (the main thread in these tests).
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    os.setpgrp()  # its own process group, so a terminal ^C reaches only the test


def four_letter_word(host, port, cmd, timeout=2.0):
    """Send a 4lw and return the whole answer as text ('' if the connection failed)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(cmd.encode())
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
            return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return ""


class ServerStartError(RuntimeError):
    pass


class Server:
    """One server process with its own temp dir (zoo.cfg, data/, server.log).

    Use as a context manager: `with Server() as srv: KazooClient(srv.hosts)`.
    start() picks a fresh port (retrying on a collision); kill9()/stop() + start() keep the
    same port and dataDir so clients can reconnect and state must survive.
    """

    def __init__(self, kind=None, binary=None, tick_time=500, min_session_timeout=1000,
                 max_session_timeout=60000, max_client_cnxns=60, extra_cfg=None,
                 name="server", port=None, myid=None, jvm_flags=(), admin_port=None):
        self.kind = kind or target_kind()
        self.binary = binary or os.environ.get("ZKRAFT_BIN")
        if self.kind == "zkraft" and not self.binary:
            raise ServerStartError("zkraft needs a binary (ZKRAFT_BIN)")
        self.name = name
        self.tick_time = tick_time
        self.min_session_timeout = min_session_timeout
        self.max_session_timeout = max_session_timeout
        self.max_client_cnxns = max_client_cnxns
        self.extra_cfg = dict(extra_cfg or {})
        # JVM words (-Dname=value, e.g. -Dreadonlymode.enabled=true) as a rig would put them in
        # SERVER_JVMFLAGS: on ZooKeeper's java command line, or in zkraft's SERVER_JVMFLAGS
        # environment variable.
        self.jvm_flags = list(jvm_flags or [])
        self.host = "127.0.0.1"
        self.port = port
        # None: no AdminServer (the default: test servers must not share port 8080). A port: the
        # AdminServer on 127.0.0.1:admin_port (ZooKeeper also gets servlet-api.jar, see _command).
        self.admin_port = admin_port
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="zkit-%s-%s-" % (self.kind, name))
        self.data_dir = os.path.join(self.dir, "data")
        os.makedirs(self.data_dir)
        self.myid = myid  # set for ensemble members: written to dataDir/myid, ZooKeeper runs QuorumPeerMain
        if myid is not None:
            with open(os.path.join(self.data_dir, "myid"), "w") as f:
                f.write("%d\n" % myid)
        self.cfg_path = os.path.join(self.dir, "zoo.cfg")
        self.log_path = os.path.join(self.dir, "server.log")
        self.starts = 0
        self.last_stop_needed_sigkill = False  # set by stop(): SIGTERM was not enough within 10 s
        with _LIVE_LOCK:
            _LIVE.append(self)

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def hosts(self):
        return "%s:%d" % (self.host, self.port)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def _write_cfg(self):
        lines = {
            "tickTime": self.tick_time,
            "dataDir": self.data_dir,
            "clientPort": self.port,
            "clientPortAddress": self.host,
            "minSessionTimeout": self.min_session_timeout,
            "maxSessionTimeout": self.max_session_timeout,
            "maxClientCnxns": self.max_client_cnxns,
            "4lw.commands.whitelist": "*",
            "admin.enableServer": "false",   # no fixed port 8080 shared between test servers
        }
        if self.admin_port is not None:
            lines["admin.enableServer"] = "true"
            lines["admin.serverPort"] = self.admin_port
            lines["admin.serverAddress"] = self.host
        lines.update(self.extra_cfg)
        with open(self.cfg_path, "w") as f:
            for k, v in lines.items():
                if v is not None:  # None leaves the key out: the server's default applies
                    f.write("%s=%s\n" % (k, v))

    def _command(self):
        if self.kind == "zkraft":
            return [self.binary, "--config", self.cfg_path]
        admin = self.admin_port is not None
        return ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dzookeeper.admin.enableServer=%s" % ("true" if admin else "false")] + self.jvm_flags + [
                # zookeeper.jar's manifest brings the Jetty 9 jars; the servlet API it does not.
                "-cp", ZK_CLASSPATH + (":/usr/share/java/servlet-api.jar" if admin else ""),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain" if self.myid is not None
                else "org.apache.zookeeper.server.ZooKeeperServerMain",
                self.cfg_path]

    def launch(self):
        """Start the process without waiting (ensembles launch every member, then wait)."""
        assert not self.running(), "already running"
        if self.port is None:
            self.port = free_port()
        self._write_cfg()
        log = open(self.log_path, "ab")
        log.write(("\n===== start #%d: %s =====\n" % (self.starts + 1, " ".join(self._command()))).encode())
        log.flush()
        env = None
        if self.kind == "zkraft" and self.jvm_flags:
            env = dict(os.environ, SERVER_JVMFLAGS=" ".join(self.jvm_flags))
        self.proc = subprocess.Popen(self._command(), stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.dir, env=env,
                                     preexec_fn=_die_with_parent)
        log.close()
        self.starts += 1
        return self

    def wait_serving(self, timeout=30.0):
        """True once the server answers srvr (or accepts a session); False on timeout or exit."""
        return self._wait_serving(timeout)

    def start(self, timeout=30.0):
        """Start (or restart after stop/kill9) and wait until it serves. Raises ServerStartError."""
        assert not self.running(), "already running"
        keep_port = self.port is not None
        attempts = 1 if keep_port else 5
        last = ""
        for _ in range(attempts):
            if not keep_port:
                self.port = None
            self.launch()
            if self._wait_serving(timeout):
                return self
            last = self.log_tail(20)
            exited = self.proc.poll() is not None
            self._terminate()
            if keep_port or not exited:
                break
        raise ServerStartError("%s did not start serving on %s\n%s" % (self.kind, self.hosts, last))

    def _wait_serving(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            answer = four_letter_word(self.host, self.port, "srvr", timeout=1.0)
            if answer.startswith("Zookeeper version:"):
                return True
            if self._handshake_works():
                return True  # no (proper) srvr in this server, but it accepts sessions
            time.sleep(0.1)
        return False

    def _handshake_works(self):
        import zkwire
        try:
            s = zkwire.RawSession(self.host, self.port, timeout_ms=self.min_session_timeout, io_timeout=2.0)
        except (OSError, ValueError, IndexError, struct.error):
            return False
        ok = s.session_id != 0
        try:
            s.close_session() if ok else s.abandon()
        except OSError:
            pass
        return ok

    def _terminate(self, grace=10.0):
        if self.proc is None:
            return
        self.last_stop_needed_sigkill = False
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.last_stop_needed_sigkill = True
                self.proc.kill()
                self.proc.wait()
            except ProcessLookupError:
                pass
        self.proc = None

    def stop(self):
        """Graceful stop (SIGTERM, then SIGKILL after 10 s)."""
        self._terminate()

    def kill9(self):
        """SIGKILL: no chance to flush anything that was not already durable."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self, hard=False):
        self.kill9() if hard else self.stop()
        return self.start()

    def close(self):
        self._terminate()

    def remove_files(self):
        if os.environ.get("ZK_KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
        return False

    # -- inspection ---------------------------------------------------------------------------

    def four_letter(self, cmd):
        return four_letter_word(self.host, self.port, cmd)

    def rss_kb(self):
        """VmRSS of the server process in kB (from /proc/PID/status)."""
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            return "\n".join(lines[-n:])
        except OSError:
            return "(no log)"


def _cleanup_all():
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for s in servers:
        try:
            s.close()
        finally:
            s.remove_files()
    if os.environ.get("ZK_KEEP") != "1":
        for d in _TEMP_DIRS:
            shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup_all)


def _on_signal(signum, frame):
    _cleanup_all()
    os._exit(128 + signum)


for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, _on_signal)


def make_temp_dir(prefix):
    """A temp dir removed at exit (also on SIGTERM/SIGINT), unless ZK_KEEP=1."""
    d = tempfile.mkdtemp(prefix=prefix)
    _TEMP_DIRS.append(d)
    return d


def wait_until(predicate, timeout, interval=0.05, what="condition"):
    """Poll predicate() until true; returns True, or False after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# -- the HTTP AdminServer (test_admin.py, test_admin_snapshot.py) -------------------------------

def admin_request(port, method, path, headers=None, timeout=10.0):
    """(status, Content-Type, body text) of one request to the AdminServer on 127.0.0.1:port."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read().decode("utf-8", "replace")
    finally:
        c.close()


def admin_get_json(port, path):
    status, ctype, body = admin_request(port, "GET", path)
    return status, ctype, json.loads(body)


def start_with_admin(**kw):
    """A server with its AdminServer on a free port; a new pair of ports if one was taken."""
    last = None
    for _ in range(3):
        srv = Server(admin_port=free_port(), **kw)
        try:
            return srv.start()
        except ServerStartError as e:
            last = e
            srv.close()
    raise last


def wait_for_value(fn, timeout=20.0):
    """fn() until it returns a true value (returned) or the time is up (the last value); an
    OSError (a server not listening yet) counts as no value."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = fn()
        except OSError:
            v = None
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(0.1)


# -- running a suite ---------------------------------------------------------------------------

class _TailingResult(unittest.TextTestResult):
    """Prints the tail of every live server log next to each failure or error."""

    def _tails(self):
        with _LIVE_LOCK:
            servers = [s for s in _LIVE if s.proc is not None or s.starts]
        out = []
        for s in servers:
            if os.path.exists(s.log_path):
                out.append("----- tail of %s (%s, pid %s, %s) -----\n%s" % (
                    s.log_path, s.kind, s.pid, "running" if s.running() else "stopped",
                    s.log_tail(30)))
        return "\n".join(out)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.stream.write("\n" + self._tails() + "\n")

    def addError(self, test, err):
        super().addError(test, err)
        self.stream.write("\n" + self._tails() + "\n")


def run_suite(module_name="__main__"):
    """unittest main for our suites: verbose, prints server log tails on failure and a final
    line 'N passed, M failed' (failed includes errors); exit status 0 only if all passed."""
    argv = [a for a in sys.argv[1:]]
    loader = unittest.TestLoader()
    module = sys.modules[module_name]
    if argv:
        suite = loader.loadTestsFromNames(argv, module)
    else:
        suite = loader.loadTestsFromModule(module)
    print("target: %s%s" % (target_kind(), (" " + os.environ["ZKRAFT_BIN"]) if target_kind() == "zkraft" else ""),
          flush=True)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_TailingResult, stream=sys.stdout)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print("%d passed, %d failed%s" % (passed, failed,
                                      (", %d skipped" % len(result.skipped)) if result.skipped else ""),
          flush=True)
    _cleanup_all()
    sys.exit(0 if failed == 0 else 1)
