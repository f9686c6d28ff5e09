"""Pipelined raw requests (zkwire) for the ensemble fault tests: queue several requests on one
connection without reading, then collect whatever answers come before the connection closes or a
deadline passes. Used to put requests into the socket of a SIGSTOPped server."""

import socket
import time

import zkwire


def send_sync(raw, path):
    xid = raw.next_xid()
    raw.send(xid, zkwire.OP_SYNC, zkwire.ustring(path))
    return xid


def send_get_data(raw, path):
    xid = raw.next_xid()
    raw.send(xid, zkwire.OP_GETDATA, zkwire.ustring(path) + zkwire.boolean(False))
    return xid


def send_create(raw, path, data=b"", flags=0):
    xid = raw.next_xid()
    raw.send(xid, zkwire.OP_CREATE, zkwire.create_body(path, data, flags))
    return xid


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
