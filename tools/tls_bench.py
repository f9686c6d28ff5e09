#!/usr/bin/python3
"""TLS against plain on one zkraft server: handshake rate and the cost of a request.

Starts the given zkraft-server on free loopback ports (a plain client port and a TLS-only
secureClientPort, certificates made here with openssl), then measures, one client thread each:
  - connections per second: TCP connect + (TLS handshake) + ZooKeeper ConnectRequest, closed;
    for TLS a full handshake each time and, separately, a resumed session;
  - one session, one request in flight: getData("/") latency (mean, p50, p99);
  - one session, 64 requests in flight: requests per second;
  - the server's CPU time (utime + stime from /proc) per connection and per request.

    /usr/bin/python3 tools/tls_bench.py build/server/zkraft-server [--seconds 3]

A benchmark, not a test: run it on an idle machine and keep the figures with the machine's name.
"""

import argparse
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(cwd, *args):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-subj", "/CN=bench CA", "-days", "1")
    for name in ("server", "client"):
        openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=%s" % name)
        with open(os.path.join(d, "ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        openssl(d, "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "1", "-extfile", "ext")
    with open(os.path.join(d, "server.pem"), "w") as out:
        for part in ("server.crt", "server.key"):
            with open(os.path.join(d, part)) as f:
                out.write(f.read())


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def recv_frame(s):
    (n,) = struct.unpack(">i", recv_exact(s, 4))
    return recv_exact(s, n)


def frame(body):
    return struct.pack(">i", len(body)) + body


CONNECT = frame(struct.pack(">iqiqi16sB", 0, 0, 30000, 0, 16, b"\0" * 16, 0))


def get_data(xid):
    return frame(struct.pack(">iii", xid, 4, 1) + b"/" + b"\0")


class Client:
    def __init__(self, d, port, tls, session=None):
        raw = socket.create_connection(("127.0.0.1", port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = raw
        if tls:
            self.sock = tls.wrap_socket(raw, session=session)
        self.sock.sendall(CONNECT)
        recv_frame(self.sock)

    def close(self):
        self.sock.close()


def context(d):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(os.path.join(d, "ca.pem"))
    ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))
    return ctx


def connection_rate(d, port, tls, seconds, pid, resume=False):
    session = None
    if resume:
        c = Client(d, port, tls)
        session = c.sock.session
        c.close()
    n = reused = 0
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        c = Client(d, port, tls, session=session)
        reused += bool(tls and c.sock.session_reused)
        c.close()
        n += 1
    elapsed = time.monotonic() - t0
    if resume and reused != n:
        print("  (only %d of %d handshakes resumed the session)" % (reused, n))
    return n / elapsed, (cpu_seconds(pid) - cpu0) / n * 1e6


def latency(d, port, tls, seconds, pid):
    c = Client(d, port, tls)
    samples = []
    xid = 1
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        a = time.perf_counter()
        c.sock.sendall(get_data(xid))
        recv_frame(c.sock)
        samples.append(time.perf_counter() - a)
        xid += 1
    cpu = (cpu_seconds(pid) - cpu0) / len(samples) * 1e6
    c.close()
    samples.sort()
    mean = sum(samples) / len(samples)
    return mean * 1e6, samples[len(samples) // 2] * 1e6, samples[int(len(samples) * 0.99)] * 1e6, cpu


def throughput(d, port, tls, seconds, pid, depth=64):
    c = Client(d, port, tls)
    xid = 1
    for _ in range(depth):
        c.sock.sendall(get_data(xid))
        xid += 1
    done = 0
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        recv_frame(c.sock)
        done += 1
        c.sock.sendall(get_data(xid))
        xid += 1
    elapsed = time.monotonic() - t0
    cpu = (cpu_seconds(pid) - cpu0) / done * 1e6
    c.close()
    return done / elapsed, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--network-threads", type=int, default=1)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="zkraft-tls-bench-")
    proc = None
    try:
        make_certs(d)
        plain_port, tls_port = free_port(), free_port()
        os.makedirs(os.path.join(d, "data"))
        with open(os.path.join(d, "zoo.cfg"), "w") as f:
            f.write("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                    "secureClientPort=%d\nssl.keyStore.location=%s\nssl.trustStore.location=%s\n"
                    "admin.enableServer=false\nforceSync=no\nmaxClientCnxns=0\nzkraft.networkThreads=%d\n"
                    % (os.path.join(d, "data"), plain_port, tls_port, os.path.join(d, "server.pem"),
                       os.path.join(d, "ca.pem"), args.network_threads))
        proc = subprocess.Popen([args.binary, "--config", os.path.join(d, "zoo.cfg"), "--log-level", "warn"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                Client(d, plain_port, None).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        tls = context(d)
        s = args.seconds
        print("server: %s, %d network thread(s); client: one Python thread, loopback" % (args.binary, args.network_threads))
        r, cpu = connection_rate(d, plain_port, None, s, proc.pid)
        print("connections/s  plain             %8.0f   server CPU %6.0f us/connection" % (r, cpu))
        r, cpu = connection_rate(d, tls_port, tls, s, proc.pid)
        print("connections/s  TLS full hs       %8.0f   server CPU %6.0f us/connection" % (r, cpu))
        r, cpu = connection_rate(d, tls_port, tls, s, proc.pid, resume=True)
        print("connections/s  TLS resumed       %8.0f   server CPU %6.0f us/connection" % (r, cpu))
        for name, port, ctx in (("plain", plain_port, None), ("TLS", tls_port, tls)):
            mean, p50, p99, cpu = latency(d, port, ctx, s, proc.pid)
            print("getData 1 in flight %-5s mean %6.1f us  p50 %6.1f us  p99 %6.1f us   server CPU %5.1f us/request"
                  % (name, mean, p50, p99, cpu))
        for name, port, ctx in (("plain", plain_port, None), ("TLS", tls_port, tls)):
            rate, cpu = throughput(d, port, ctx, s, proc.pid)
            print("getData 64 in flight %-5s %8.0f requests/s   server CPU %5.1f us/request" % (name, rate, cpu))
    finally:
        if proc:
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
