"""A minimal raw ZooKeeper wire-protocol client for tests that need control no real client gives:
a session that goes silent (stops pinging) without closing, pipelined requests that are never
read, hand-made frames. Encoding follows ZooKeeper's jute rules (big-endian, int32 length prefixes,
-1 for null). Not a general client: one thread, blocking socket.
"""

import socket
import struct

OP_CREATE, OP_DELETE, OP_EXISTS, OP_GETDATA, OP_SETDATA = 1, 2, 3, 4, 5
OP_GETCHILDREN, OP_PING, OP_CLOSE = 8, 11, -11
OP_GETACL, OP_SETACL, OP_SYNC, OP_GETCHILDREN2, OP_CHECK, OP_MULTI, OP_CREATE2 = 6, 7, 9, 12, 13, 14, 15

OPEN_ACL_UNSAFE = [(31, "world", "anyone")]
EPHEMERAL = 1
SEQUENCE = 2


def _i32(v):
    return struct.pack(">i", v)


def _i64(v):
    return struct.pack(">q", v)


def _buf(b):
    return _i32(-1) if b is None else _i32(len(b)) + b


def _str(s):
    return _buf(None if s is None else s.encode())


def _acls(acls):
    out = _i32(len(acls))
    for perms, scheme, ident in acls:
        out += _i32(perms) + _str(scheme) + _str(ident)
    return out


def boolean(v):
    return b"\1" if v else b"\0"


def ustring(s):
    return _str(s)


def buffer(b):
    return _buf(b)


def int32(v):
    return _i32(v)


def acl_list(acls):
    return _acls(acls)


def create_body(path, data=b"", flags=0, acls=OPEN_ACL_UNSAFE):
    return _str(path) + _buf(data) + _acls(acls) + _i32(flags)


def multi_body(ops):
    """ops: [(opcode, body)]; MultiHeader{type, done=false, err=-1} before each, {-1,true,-1} after."""
    out = b""
    for op, body in ops:
        out += _i32(op) + b"\0" + _i32(-1) + body
    return out + _i32(-1) + b"\1" + _i32(-1)


class Decoder:
    """Reads jute fields from a reply body."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def int32(self):
        v = struct.unpack_from(">i", self.data, self.pos)[0]
        self.pos += 4
        return v

    def int64(self):
        v = struct.unpack_from(">q", self.data, self.pos)[0]
        self.pos += 8
        return v

    def boolean(self):
        v = self.data[self.pos] != 0
        self.pos += 1
        return v

    def buffer(self):
        n = self.int32()
        if n < 0:
            return None
        v = self.data[self.pos:self.pos + n]
        self.pos += n
        return v

    def ustring(self):
        v = self.buffer()
        return None if v is None else v.decode()

    def strings(self):
        n = self.int32()
        return None if n < 0 else [self.ustring() for _ in range(n)]

    def stat(self):
        names = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
                 "ephemeralOwner", "dataLength", "numChildren", "pzxid")
        fmt = ">qqqqiiiqiiq"
        vals = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return dict(zip(names, vals))

    def rest(self):
        return self.data[self.pos:]


def frame(payload):
    return _i32(len(payload)) + payload


def connect_request(timeout_ms, session_id=0, passwd=b"\0" * 16, last_zxid=0, read_only_field=True):
    """ConnectRequest; read_only_field=False makes the pre-3.4 form without the readOnly byte."""
    body = _i32(0) + _i64(last_zxid) + _i32(timeout_ms) + _i64(session_id) + _buf(passwd)
    return frame(body + (b"\0" if read_only_field else b""))


def create_request(xid, path, data=b"", flags=0, acls=OPEN_ACL_UNSAFE):
    return frame(_i32(xid) + _i32(OP_CREATE) + _str(path) + _buf(data) + _acls(acls) + _i32(flags))


def get_data_request(xid, path, watch=False):
    return frame(_i32(xid) + _i32(OP_GETDATA) + _str(path) + (b"\1" if watch else b"\0"))


def exists_request(xid, path, watch=False):
    return frame(_i32(xid) + _i32(OP_EXISTS) + _str(path) + (b"\1" if watch else b"\0"))


def ping_request():
    return frame(_i32(-2) + _i32(OP_PING))


def close_request(xid):
    return frame(_i32(xid) + _i32(OP_CLOSE))


class RawSession:
    """One connection + session. `go_silent()` = keep the socket open but never send again;
    `abandon()` = drop the socket without closeSession (the session lives until it expires)."""

    def __init__(self, host, port, timeout_ms=4000, session_id=0, passwd=b"\0" * 16, io_timeout=30.0):
        self.sock = socket.create_connection((host, port), timeout=io_timeout)
        self.sock.sendall(connect_request(timeout_ms, session_id, passwd))
        body = self.read_frame()
        self.connect_response_len = len(body)
        # ConnectResponse: protocolVersion, timeOut, sessionId, passwd, [readOnly]
        self.protocol_version, self.timeout_ms, self.session_id = struct.unpack(">iiq", body[:16])
        n = struct.unpack(">i", body[16:20])[0]
        self.passwd = body[20:20 + n] if n > 0 else b""
        self.xid = 0

    def read_exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("server closed the connection")
            out += chunk
        return out

    def read_frame(self):
        n = struct.unpack(">i", self.read_exact(4))[0]
        return self.read_exact(n)

    def read_reply(self):
        """Next non-notification reply: (xid, zxid, err, body)."""
        while True:
            body = self.read_frame()
            xid, zxid, err = struct.unpack(">iqi", body[:16])
            if xid != -1:
                return xid, zxid, err, body[16:]

    def next_xid(self):
        self.xid += 1
        return self.xid

    def send(self, xid, op, body=b""):
        self.sock.sendall(frame(_i32(xid) + _i32(op) + body))

    def read_any(self):
        """Next frame as (xid, zxid, err, body), notifications (xid -1) included."""
        body = self.read_frame()
        xid, zxid, err = struct.unpack(">iqi", body[:16])
        return xid, zxid, err, body[16:]

    def call(self, op, body=b"", xid=None):
        """Send one request; returns (frames, reply): every notification that arrived first, as
        (xid, zxid, err, body) tuples, and the reply itself."""
        xid = self.next_xid() if xid is None else xid
        self.send(xid, op, body)
        frames = []
        while True:
            f = self.read_any()
            if f[0] == -1:
                frames.append(f)
                continue
            return frames, f

    def create(self, path, data=b"", flags=0):
        """Returns (err, created_path or None)."""
        self.sock.sendall(create_request(self.next_xid(), path, data, flags))
        xid, _, err, body = self.read_reply()
        if err != 0:
            return err, None
        n = struct.unpack(">i", body[:4])[0]
        return 0, body[4:4 + n].decode()

    def ping(self):
        self.sock.sendall(ping_request())
        xid, _, err, _ = self.read_reply()
        return xid, err

    def close_session(self):
        self.sock.sendall(close_request(self.next_xid()))
        try:
            self.read_reply()
        except (ConnectionError, OSError):
            pass
        self.abandon()

    def go_silent(self):
        pass  # nothing to do: simply never send again; the socket stays open

    def abandon(self):
        try:
            self.sock.close()
        except OSError:
            pass
