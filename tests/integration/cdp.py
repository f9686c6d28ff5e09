"""A headless Chromium driven over the DevTools protocol, with Python's standard library only
(a minimal WebSocket client: RFC 6455 text frames, client-masked, no extensions). Enough for the
dashboard test: open pages, evaluate JavaScript in them, take screenshots.

    with Browser() as b:
        page = b.open("http://127.0.0.1:8080/")
        page.evaluate("document.title")
        page.screenshot("/tmp/shot.png")
"""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse


def chromium_binary():
    """Debian's chromium (tools/install-deps.sh installs it), or $CHROMIUM; None if neither."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _mask(data, key):
    return bytes(b ^ key[i % 4] for i, b in enumerate(data))


class WebSocket:
    """One client connection; send() and recv() whole text messages."""

    def __init__(self, url, timeout=10.0):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        # No Origin header: DevTools refuses origins it was not told to allow, and allows none.
        request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                   % (u.path or "/", u.hostname, u.port, key))
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        head, self._buf = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError("websocket handshake refused: %r" % head[:200])

    def send(self, text):
        data = text.encode()
        header = bytearray([0x81])  # FIN, text
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        key = os.urandom(4)
        self.sock.sendall(bytes(header) + key + _mask(data, key))

    def _read(self, n):
        while len(self._buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                raise ConnectionError("websocket closed")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def recv(self):
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            key = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if key:
                payload = _mask(payload, key)
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 0x9:  # ping: answered with a (masked) pong
                k = os.urandom(4)
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + k + _mask(payload, k))
                continue
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Page:
    """One tab, attached in flat mode (its messages carry its session id)."""

    def __init__(self, browser, session_id):
        self.browser, self.session_id = browser, session_id

    def call(self, method, **params):
        return self.browser.call(method, session_id=self.session_id, **params)

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def wait_for(self, expression, timeout, interval=0.2):
        """Evaluates until truthy; returns the value, or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            if time.monotonic() >= deadline:
                return None
            time.sleep(interval)


class Browser:
    """chromium --headless on a DevTools port it picks itself (port 0)."""

    def __init__(self, binary=None, width=1280, height=1000):
        self.binary = binary or chromium_binary()
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="zkit-chromium-")
        self.log_path = os.path.join(self.profile, "chromium.log")
        self.proc = None
        self.ws = None
        self._next_id = 0

    def start(self, timeout=30.0):
        # Its stderr goes to a file (a pipe nobody reads would fill and stall it); the port it
        # picked is in <profile>/DevToolsActivePort: the port, then the browser's path.
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [self.binary, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                 "--disable-background-networking", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
                 "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                 "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (self.width, self.height),
                 "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        active = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with open(active) as f:
                    lines = f.read().split()
            except OSError:
                lines = []
            if len(lines) >= 2:
                self.ws = WebSocket("ws://127.0.0.1:%s%s" % (lines[0], lines[1]))
                return self
            time.sleep(0.1)
        with open(self.log_path, "rb") as f:
            tail = f.read()[-2000:].decode("utf-8", "replace")
        raise RuntimeError("chromium did not start its DevTools endpoint:\n" + tail)

    def call(self, method, session_id=None, **params):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if session_id:
            msg["sessionId"] = session_id
        self.ws.send(json.dumps(msg))
        while True:  # events in between are not needed here
            r = json.loads(self.ws.recv())
            if r.get("id") == self._next_id:
                if "error" in r:
                    raise RuntimeError("%s: %s" % (method, r["error"]))
                return r.get("result", {})

    def open(self, url):
        target = self.call("Target.createTarget", url="about:blank", newWindow=True,
                           width=self.width, height=self.height)["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=url)
        return page

    def close(self):
        if self.ws:
            self.ws.close()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
        return False
