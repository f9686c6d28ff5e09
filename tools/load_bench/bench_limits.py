"""This machine's limits, printed before any figure so the figures can be read against them:
fsyncs per second of small appends (100 B write + fsync, in the work directory, so on the disk the
servers' data is on; once growing the file, once inside a preallocated one, and once more growing
it while a busy loop runs on every CPU, as the servers and the load generator keep the CPUs busy
during a run: the kernel's side of an fsync then waits for a CPU too) and loopback TCP round trips
per second (1 byte each way, TCP_NODELAY, an echo process on 127.0.0.1). All are measured from
Python, so the round trip includes an interpreter's overhead on each side: it is a lower bound on
what the machine can do, not the server's floor.
"""

import os
import signal
import socket
import time


def percentile(sorted_values, q):
    """Nearest rank, as zk_load's latency_stats does."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), int(-(-q * len(sorted_values) // 1))))
    return sorted_values[rank - 1]


def fsync_rate(workdir, seconds, preallocated=False):
    """preallocated=False: each append grows the file and fsync also writes its new size (the
    metadata); True: the appends land in a file already written out to 64 MiB and fdatasync has
    only the data to write, as in ZooKeeper's preallocated transaction log."""
    path = os.path.join(workdir, "fsync-probe.bin")
    lat = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if preallocated:
            chunk = b"\0" * (1 << 20)
            for _ in range(64):
                os.write(fd, chunk)
            os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_SET)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t0 = time.perf_counter()
            os.write(fd, b"x" * 100)
            if preallocated:
                os.fdatasync(fd)
            else:
                os.fsync(fd)
            lat.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)
    lat.sort()
    return {"fsyncs_per_s": len(lat) / seconds, "p50_ms": percentile(lat, 0.5) * 1e3,
            "p99_ms": percentile(lat, 0.99) * 1e3, "max_ms": lat[-1] * 1e3 if lat else 0.0}


def fsync_rate_with_cpus_busy(workdir, seconds):
    """fsync_rate while one spinning child per CPU competes for every core."""
    spinners = []
    try:
        for _ in range(os.cpu_count() or 1):
            pid = os.fork()
            if pid == 0:
                try:
                    while True:
                        pass
                finally:
                    os._exit(0)
            spinners.append(pid)
        time.sleep(0.2)
        return fsync_rate(workdir, seconds)
    finally:
        for pid in spinners:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def loopback_rate(seconds):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    pid = os.fork()
    if pid == 0:  # the echo side
        try:
            conn, _ = srv.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while True:
                b = conn.recv(1)
                if not b:
                    break
                conn.sendall(b)
        finally:
            os._exit(0)
    srv.close()
    lat = []
    try:
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                t0 = time.perf_counter()
                c.sendall(b"p")
                if not c.recv(1):
                    break
                lat.append(time.perf_counter() - t0)
    finally:
        os.waitpid(pid, 0)
    lat.sort()
    return {"round_trips_per_s": len(lat) / seconds, "p50_us": percentile(lat, 0.5) * 1e6,
            "p99_us": percentile(lat, 0.99) * 1e6}


def measure(workdir, seconds):
    """Every probe, with one line each for the report."""
    f = fsync_rate(workdir, seconds)
    fp = fsync_rate(workdir, seconds, preallocated=True)
    fb = fsync_rate_with_cpus_busy(workdir, seconds)
    lo = loopback_rate(seconds)
    lines = ["machine: %d CPUs, loadavg %s" % (os.cpu_count() or 0, open("/proc/loadavg").read().split()[0]),
             "machine: %.0f fsyncs/s of 100 B appends in %s (p50 %.2f ms, p99 %.2f ms, max %.1f ms)"
             % (f["fsyncs_per_s"], workdir, f["p50_ms"], f["p99_ms"], f["max_ms"]),
             "machine: %.0f fdatasyncs/s of 100 B writes into a preallocated file (p50 %.2f ms, p99 %.2f ms, max %.1f ms)"
             % (fp["fsyncs_per_s"], fp["p50_ms"], fp["p99_ms"], fp["max_ms"]),
             "machine: %.0f fsyncs/s of 100 B appends with every CPU busy in a loop (p50 %.2f ms, p99 %.2f ms, max %.1f ms)"
             % (fb["fsyncs_per_s"], fb["p50_ms"], fb["p99_ms"], fb["max_ms"]),
             "machine: %.0f loopback round trips/s, 1 byte, from Python (p50 %.0f us, p99 %.0f us)"
             % (lo["round_trips_per_s"], lo["p50_us"], lo["p99_us"])]
    return {"fsync": f, "fdatasync_preallocated": fp, "fsync_cpus_busy": fb, "loopback": lo}, lines
