"""Pipelined raw requests (zkwire) for the ensemble fault tests: queue several requests on one
connection without reading, then collect whatever answers come before the connection closes or a
deadline passes. Used to put requests into the socket of a SIGSTOPped server."""

import socket
import time

import zkwire


def _send(raw, op, body):
    """Sends one request; returns its xid. A connection the server has closed already (a server
    that lost its quorum closes its clients) takes nothing: that request is never answered, and
    collect() reports the connection closed."""
    xid = raw.next_xid()
    try:
        raw.send(xid, op, body)
    except (ConnectionError, OSError):
        pass
    return xid


def send_sync(raw, path):
    return _send(raw, zkwire.OP_SYNC, zkwire.ustring(path))


def send_get_data(raw, path):
    return _send(raw, zkwire.OP_GETDATA, zkwire.ustring(path) + zkwire.boolean(False))


def send_create(raw, path, data=b"", flags=0):
    return _send(raw, zkwire.OP_CREATE, zkwire.create_body(path, data, flags))


def collect(raw, xids, timeout):
    """Replies to `xids`: ({xid: (err, body)}, end) where end is 'all' (every xid answered),
    'closed' (the server closed or reset the connection first) or 'timeout'."""
    got = {}
    deadline = time.monotonic() + timeout
    pending = set(xids)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            return got, "timeout"
        raw.sock.settimeout(left)
        try:
            xid, _, err, body = raw.read_any()
        except socket.timeout:
            return got, "timeout"
        except (ConnectionError, OSError):
            return got, "closed"
        if xid in pending:
            got[xid] = (err, body)
            pending.discard(xid)
    return got, "all"


def get_data_value(body):
    """The data field of a GetDataResponse body (None for null)."""
    return zkwire.Decoder(body).buffer()
