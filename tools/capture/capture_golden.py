#!/usr/bin/python3
"""Records golden wire bytes: real clients talking to a real Apache ZooKeeper through
zk_capture_proxy, saved as transcripts under tests/jute/golden/.

    /usr/bin/python3 tools/capture/capture_golden.py [--out tests/jute/golden]

Starts ZooKeeper (Debian package `zookeeper`, jars in /usr/share/java) standalone on a loopback
ephemeral port with a temporary dataDir, runs the kazoo scenario and then the Java-client scenario
(GoldenJavaClient.java, compiled into the temp dir with javac), and the Java reconnect scenario
(GoldenJavaReconnect.java: the proxy cuts the connection twice; the client resumes its session
with SetWatches, then SetWatches2), each through its own proxy, and stops the server by its PID. Needs: java, javac, python3-kazoo.
"""

import argparse
import datetime
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zk_capture_proxy import CaptureProxy  # noqa: E402

ZK_JARS = ["/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-simple.jar"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter_word(port, word):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
            s.sendall(word.encode())
            out = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    return out.decode(errors="replace")
                out += chunk
    except OSError:
        return ""


def start_zookeeper(tmp):
    port = free_port()
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    cfg = os.path.join(tmp, "zoo.cfg")
    with open(cfg, "w") as f:
        f.write("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                "4lw.commands.whitelist=*\nadmin.enableServer=false\n" % (data, port))
    log = open(os.path.join(tmp, "zookeeper.log"), "wb")
    proc = subprocess.Popen(
        ["java", "-Xmx256m", "-Dzookeeper.extendedTypesEnabled=true",
         "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         "-cp", ":".join(ZK_JARS), "org.apache.zookeeper.server.ZooKeeperServerMain", cfg],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("zookeeper exited; see %s/zookeeper.log" % tmp)
        version = four_letter_word(port, "srvr")
        if version.startswith("Zookeeper version:"):
            return proc, port, version.splitlines()[0]
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit("zookeeper did not start")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kazoo_scenario(hosts):
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError
    from kazoo.security import make_acl, make_digest_acl

    zk = KazooClient(hosts=hosts, timeout=4.0)
    zk.start(timeout=20)
    zk.add_auth("digest", "golden:secret")                       # auth (100), xid -4
    open_acl = make_acl("world", "anyone", all=True)
    digest_acl = make_digest_acl("golden", "secret", read=True, write=True, admin=True)
    zk.create("/golden", b"root", acl=[open_acl])                 # create (1)
    eph = zk.create("/golden/e-", b"eph", acl=[open_acl, digest_acl],
                    ephemeral=True, sequence=True)
    fired = threading.Event()
    zk.get("/golden", watch=lambda ev: fired.set())               # getData (4) with watch
    zk.set("/golden", b"changed")                                 # setData (5) -> event (xid -1)
    fired.wait(10)
    zk.get_children("/golden", include_data=True)                 # getChildren2 (12)
    zk.get_children("/golden")                                    # getChildren (8)
    zk.exists("/golden/missing", watch=lambda ev: None)           # exists (3) -> -101
    try:
        zk.get("/golden/missing")                                 # getData -> -101
    except NoNodeError:
        pass
    zk.get_acls("/golden")                                        # getACL (6)
    zk.set_acls("/golden", [open_acl])                            # setACL (7)
    zk.sync("/golden")                                            # sync (9)
    t = zk.transaction()                                          # multi (14) that fails
    t.create("/golden/t1", b"x")
    t.check("/golden", 99)
    t.delete(eph)
    t.commit()
    t = zk.transaction()                                          # multi (14) that succeeds
    t.create("/golden/t2", b"y")
    t.set_data("/golden/t2", b"z")
    t.check("/golden/t2", 1)
    t.delete("/golden/t2")
    t.commit()
    time.sleep(3.0)                                               # idle: kazoo pings (11)
    zk.delete(eph)                                                # delete (2)
    zk.delete("/golden")
    zk.stop()                                                     # closeSession (-11)
    zk.close()


def java_scenario(hosts, tmp):
    src = os.path.join(HERE, "GoldenJavaClient.java")
    build = os.path.join(tmp, "java")
    os.makedirs(build)
    cp = ":".join(ZK_JARS)
    subprocess.run(["javac", "-cp", cp, "-d", build, src], check=True)
    out = subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                          "-cp", cp + ":" + build, "GoldenJavaClient", hosts],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit("java client failed:\n" + out.stdout + out.stderr)
    return out.stdout.strip()


def java_reconnect_scenario(hosts, tmp, proxy):
    build = os.path.join(tmp, "java-reconnect")
    os.makedirs(build)
    cp = ":".join(ZK_JARS)
    subprocess.run(["javac", "-cp", cp, "-d", build,
                    os.path.join(HERE, "GoldenJavaReconnect.java")], check=True)
    proc = subprocess.Popen(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                             "-cp", cp + ":" + build, "GoldenJavaReconnect", hosts],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    notes = []
    for line in proc.stdout:
        if line.strip() == "drop":
            time.sleep(0.5)  # let the last reply reach the client before the cut
            proxy.drop()
            proc.stdin.write("\n")
            proc.stdin.flush()
        else:
            notes.append(line.rstrip())
    if proc.wait(120) != 0:
        raise SystemExit("java reconnect client failed:\n" + "\n".join(notes))
    return "\n".join(notes)


def capture(name, out_dir, tmp, port, header, run, connections=1):
    """Runs `run(hosts, proxy)` through a recording proxy; one .frames file per connection:
    <name>.frames, or <name>-<n>.frames when the scenario makes several connections."""
    prefix = os.path.join(tmp, name)
    proxy = CaptureProxy(("127.0.0.1", port), prefix, connections=connections)
    proxy.start()
    notes = run("127.0.0.1:%d" % proxy.port, proxy)
    if not proxy.wait(timeout=30):
        raise SystemExit("%s: connection did not close" % name)
    proxy.close()
    for n, path in enumerate(proxy.files):
        dst = os.path.join(out_dir, (name if connections == 1 else "%s-%d" % (name, n)) + ".frames")
        with open(path) as f:
            body = [line for line in f if not line.startswith("#")]
        with open(dst, "w") as f:
            f.write(header)
            if connections > 1:
                f.write("# connection %d of %d of the same client session\n" % (n + 1, connections))
            if notes:
                for line in notes.splitlines():
                    f.write("# client said: %s\n" % line)
            f.writelines(body)
        print("%s: %d frames" % (dst, len(body)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "jute", "golden"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="zk-golden-")
    proc, port, version = start_zookeeper(tmp)
    try:
        import kazoo
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        common = "# server: %s (standalone, tickTime=2000)\n# captured: %s by tools/capture/capture_golden.py\n" % (version, when)
        capture("kazoo", args.out, tmp, port,
                "# client: kazoo %s (python3-kazoo)\n" % kazoo.__version__ + common,
                lambda hosts, proxy: kazoo_scenario(hosts))
        capture("java", args.out, tmp, port,
                "# client: Apache ZooKeeper Java client 3.8.0 (GoldenJavaClient.java)\n" + common,
                lambda hosts, proxy: java_scenario(hosts, tmp))
        capture("java-reconnect", args.out, tmp, port,
                "# client: Apache ZooKeeper Java client 3.8.0 (GoldenJavaReconnect.java)\n" + common,
                lambda hosts, proxy: java_reconnect_scenario(hosts, tmp, proxy), connections=3)
    finally:
        stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
