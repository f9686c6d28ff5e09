#!/usr/bin/python3
"""A recording TCP proxy for the ZooKeeper client protocol.

It listens on 127.0.0.1 (an ephemeral port unless --port is given), forwards every accepted
connection to the upstream server unchanged, and records each length-prefixed frame in both
directions. Each connection gets its own transcript file <out>-<n>.frames:

    # comment lines
    > 0000002d000000...     a frame body (hex, without the 4-byte length) sent client -> server
    < 00000024000000...     a frame body sent server -> client

Frames are cut with the same rule the server uses (4-byte big-endian length, then the body);
bytes are forwarded as they arrive, so recording never changes what either side sees.

Usage as a program:
    zk_capture_proxy.py --upstream 127.0.0.1:2181 --out /tmp/cap/session [--connections N]
It prints "listening <port>" on stdout once ready and exits after N connections have closed.
Use as a module: CaptureProxy(upstream, out_prefix).start() -> port; .wait(); .close().
"""

import argparse
import socket
import struct
import sys
import threading


class _FrameSplitter:
    """Cuts one direction of the byte stream into frame bodies."""

    def __init__(self):
        self.buf = b""

    def feed(self, data):
        self.buf += data
        frames = []
        while len(self.buf) >= 4:
            (n,) = struct.unpack(">i", self.buf[:4])
            if n < 0 or len(self.buf) < 4 + n:
                break
            frames.append(self.buf[4:4 + n])
            self.buf = self.buf[4 + n:]
        return frames


class CaptureProxy:
    def __init__(self, upstream, out_prefix, connections=1, host="127.0.0.1", port=0):
        self.upstream = upstream
        self.out_prefix = out_prefix
        self.connections = connections
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, port))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.done = threading.Semaphore(0)
        self.files = []
        self._accept_thread = None
        self._live = []  # (client, server) sockets of connections still open
        self._live_lock = threading.Lock()

    def start(self):
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._accept_thread.start()
        return self.port

    def wait(self, timeout=None):
        """Blocks until `connections` connections have closed. Returns False on timeout."""
        for _ in range(self.connections):
            if not self.done.acquire(timeout=timeout):
                return False
        return True

    def close(self):
        try:
            self.listener.close()
        except OSError:
            pass

    def drop(self):
        """Cuts every open connection (both sides), as a network failure would; the client then
        reconnects through the proxy, which records the new connection in the next file."""
        with self._live_lock:
            live = list(self._live)
        for pair in live:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _accept_loop(self):
        for n in range(self.connections):
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            path = "%s-%d.frames" % (self.out_prefix, n)
            self.files.append(path)
            threading.Thread(target=self._serve, args=(client, server, path), daemon=True).start()

    def _serve(self, client, server, path):
        with self._live_lock:
            self._live.append((client, server))
        lock = threading.Lock()
        out = open(path, "w")
        out.write("# zk_capture_proxy transcript: '>' client->server, '<' server->client, hex bodies\n")

        def pump(src, dst, mark):
            splitter = _FrameSplitter()
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    # Record before forwarding, so a reply is never written ahead of its request.
                    with lock:
                        for body in splitter.feed(data):
                            out.write("%s %s\n" % (mark, body.hex()))
                        out.flush()
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (dst,):
                    try:
                        s.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass

        t1 = threading.Thread(target=pump, args=(client, server, ">"), daemon=True)
        t2 = threading.Thread(target=pump, args=(server, client, "<"), daemon=True)
        t1.start()
        t2.start()
        t1.join()
        t2.join()
        with lock:
            out.close()
        with self._live_lock:
            self._live.remove((client, server))
        client.close()
        server.close()
        self.done.release()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="host:port of the real server")
    ap.add_argument("--out", required=True, help="transcript path prefix")
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    proxy = CaptureProxy((host, int(port)), args.out, args.connections, port=args.port)
    proxy.start()
    print("listening %d" % proxy.port, flush=True)
    proxy.wait()
    proxy.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
