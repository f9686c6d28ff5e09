#!/usr/bin/python3
"""Quorum authentication (issue 12): a 3-server ensemble configured as a ZooKeeper rig is
(quorum.auth.enableSasl, learnerRequireSasl, serverRequireSasl, the QuorumServer/QuorumLearner
sections of a JAAS file with DigestLoginModule, -Djava.security.auth.login.config in
SERVER_JVMFLAGS) forms a quorum and serves; a rogue process that reaches the peer ports and
speaks the transport's frame format with forged Raft messages (a vote and an append at term
1000, a TimeoutNow, a heartbeat with a huge commit) changes nothing: not the leader, not the
term, not the log (srvr and lgif before and after), whether it brings no credential, a wrong
password, an unknown user, or skips the hello. (A control: the same frames against an ensemble
without authentication move its term past 1000 and its leadership.) Each refusal is in the log with the rogue's
address and counted in mntr (zk_peer_auth_failures). A member whose JAAS file holds the wrong
password cannot join.

zkraft only for the rogue (the frame format is zkraft's); the frames are built here from
consensus/peer_transport_frame.h, peer_transport_auth.h and messages.cc.

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_peer_auth.py
"""

import hashlib
import hmac
import logging
import os
import re
import socket
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
WAIT = 30.0

JAAS = """
QuorumServer {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_test="%s";
};
QuorumLearner {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="test"
    password="%s";
};
"""

AUTH_CFG = {"quorum.auth.enableSasl": "true",
            "quorum.auth.learnerRequireSasl": "true",
            "quorum.auth.serverRequireSasl": "true",
            "quorum.auth.learner.saslLoginContext": "QuorumLearner",
            "quorum.auth.server.saslLoginContext": "QuorumServer"}

# ---- the transport's frames (consensus/peer_transport_frame.h) ----
HELLO, HELLO_ACK, MESSAGE, CHALLENGE, AUTH = 1, 2, 3, 4, 5
ACK_OK, ACK_AUTH_REQUIRED, ACK_AUTH_FAILED = 0, 4, 5
NONCE = 32


def frame(ftype, payload):
    return struct.pack(">BBBBI", 0x5A, 0x52, 1, ftype, len(payload)) + payload


def hello(frm, to, cluster=b"", user=None, nonce=None):
    p = struct.pack(">QQH", frm, to, len(cluster)) + cluster
    if nonce is not None:
        p += struct.pack(">H", len(user)) + user + nonce
    return frame(HELLO, p)


def proof(password, role, frm, to, cluster, user, dnonce, anonce):
    """HMAC-SHA256 as consensus/peer_transport_auth.cc computes it."""
    def field(b):
        return struct.pack(">Q", len(b)) + b
    msg = b"zkraft-peer-auth-1" + role + struct.pack(">QQ", frm, to) + field(cluster) + field(user) \
        + field(dnonce) + field(anonce)
    return hmac.new(password, msg, hashlib.sha256).digest()


# ---- Raft messages (consensus/messages.cc, format 1; RaftNode tags them 'R') ----
VOTE, APPEND, HEARTBEAT, TIMEOUT_NOW = 3, 5, 7, 11


def raft_message(mtype, frm, to, term, index=0, log_term=0, commit=0, entries=()):
    p = struct.pack(">BBQQQQQQBQQ", 1, mtype, frm, to, term, index, log_term, commit, 0, 0, 0)
    p += struct.pack(">I", len(entries))
    for (eterm, eindex, data) in entries:
        p += struct.pack(">QQBI", eterm, eindex, 0, len(data)) + data
    p += b"\x00"  # no snapshot
    return frame(MESSAGE, b"R" + p)


def forged_messages(frm, to):
    """What a rogue claiming to be server `frm` would say to take over or corrupt `to`."""
    return b"".join([
        raft_message(VOTE, frm, to, 1000, index=10 ** 6, log_term=999),
        raft_message(APPEND, frm, to, 1000, index=0, log_term=0, commit=10 ** 6,
                     entries=[(1000, 1, b"forged entry")]),
        raft_message(HEARTBEAT, frm, to, 1000, commit=10 ** 6),
        raft_message(TIMEOUT_NOW, frm, to, 1000),
    ])


def read_frame(sock):
    """(type, payload) of the next frame, or None when the server closed the connection."""
    def exact(n):
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            if not chunk:
                return None
            out += chunk
        return out
    try:
        hdr = exact(8)
        if hdr is None:
            return None
        _, _, _, ftype, length = struct.unpack(">BBBBI", hdr)
        payload = exact(length)
        return None if payload is None else (ftype, payload)
    except (ConnectionResetError, socket.timeout):
        return None


def closed_by_server(sock):
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def peer_port(member):
    return int(member.extra_cfg["server.%d" % member.myid].split(";")[0].split(":")[1])


def state(ens):
    """What a forged message would change: each member's mode, zxid and Raft log bounds."""
    out = {}
    for m in ens.members:
        srvr = dict(line.split(": ", 1) for line in m.four_letter("srvr").splitlines() if ": " in line)
        lgif = dict(line.split("\t") for line in m.four_letter("lgif").splitlines())
        out[m.myid] = (srvr.get("Mode"), srvr.get("Zxid"), lgif)
    return out


def mntr(member):
    return dict(line.split("\t", 1) for line in member.four_letter("mntr").splitlines() if "\t" in line)


def write_jaas(directory, server_pw, learner_pw):
    path = os.path.join(directory, "jaas.conf")
    with open(path, "w") as f:
        f.write(JAAS % (server_pw, learner_pw))
    return path


class PeerAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = harness.make_temp_dir("zkit-peer-auth-")
        jaas = write_jaas(cls.dir, "s3cret", "s3cret")
        cls.ens = Ensemble(3, name="peerauth", extra_cfg=AUTH_CFG,
                           jvm_flags=["-Djava.security.auth.login.config=%s" % jaas])
        try:
            cls.ens.start()
        except BaseException:
            cls.ens.close()
            raise
        assert harness.wait_until(lambda: cls.ens.leader() is not None, WAIT), "no leader"

    @classmethod
    def tearDownClass(cls):
        cls.ens.close()

    def test_authenticated_ensemble_replicates(self):
        c = KazooClient(hosts=self.ens.hosts, timeout=10.0)
        c.start(timeout=WAIT)
        try:
            c.retry(c.create, "/auth-ok", b"v")
        finally:
            c.stop()
            c.close()
        for m in self.ens.members:
            c = KazooClient(hosts=m.hosts, timeout=10.0)
            c.start(timeout=WAIT)
            try:
                c.sync("/")
                self.assertEqual(c.get("/auth-ok")[0], b"v")
            finally:
                c.stop()
                c.close()
        for m in self.ens.members:
            self.assertEqual(mntr(m).get("zk_peer_auth_failures"), "0", m.log_tail(20))

    def _rogue_attempts(self, target, claimed):
        """Every kind of forged delivery, against one member; returns the ack codes seen."""
        port = peer_port(target)
        codes = []
        # 1. No credential: a plain hello with the forged messages pipelined behind it.
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(hello(claimed, target.myid) + forged_messages(claimed, target.myid))
        f = read_frame(s)
        self.assertIsNotNone(f)
        self.assertEqual(f[0], HELLO_ACK)
        codes.append(f[1][0])
        self.assertTrue(closed_by_server(s))
        s.close()
        # 2. A wrong password for a real learner user.
        for user, password in ((b"test", b"guess"), (b"nobody", b"s3cret")):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            dnonce = os.urandom(NONCE)
            s.sendall(hello(claimed, target.myid, user=user, nonce=dnonce))
            f = read_frame(s)
            self.assertIsNotNone(f)
            if f[0] == CHALLENGE:
                anonce = f[1][:NONCE]
                p = proof(password, b"D", claimed, target.myid, b"", user, dnonce, anonce)
                s.sendall(frame(AUTH, p) + forged_messages(claimed, target.myid))
                f = read_frame(s)
                self.assertIsNotNone(f)
            self.assertEqual(f[0], HELLO_ACK)
            codes.append(f[1][0])
            self.assertTrue(closed_by_server(s))
            s.close()
        # 3. No hello at all: Raft frames straight away.
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(forged_messages(claimed, target.myid))
        self.assertTrue(closed_by_server(s))
        s.close()
        return codes

    def test_rogue_changes_nothing_and_is_logged(self):
        self.assertTrue(harness.wait_until(lambda: self.ens.leader() is not None, WAIT))
        time.sleep(0.5)  # let the new leader's no-op and any session traffic settle
        before = state(self.ens)
        leader = self.ens.leader()
        followers = [m for m in self.ens.members if m is not leader]
        failures_before = {m.myid: int(mntr(m)["zk_peer_auth_failures"]) for m in self.ens.members}
        # Against a follower, claiming to be the leader (append, heartbeat, timeout-now) and against
        # the leader, claiming to be a follower (a vote at a higher term would depose it).
        codes = self._rogue_attempts(followers[0], leader.myid)
        codes += self._rogue_attempts(leader, followers[0].myid)
        self.assertEqual(codes, [ACK_AUTH_REQUIRED, ACK_AUTH_FAILED, ACK_AUTH_FAILED] * 2)
        # Longer than an election timeout (1 s here): a delivered TimeoutNow or vote would show.
        time.sleep(2.5)
        after = state(self.ens)
        self.assertEqual(after, before)
        for m in (followers[0], leader):
            got = int(mntr(m)["zk_peer_auth_failures"])
            self.assertEqual(got - failures_before[m.myid], 3, m.log_tail(30))
            with open(m.log_path, errors="replace") as f:
                log = f.read()
            refusals = re.findall(r"refusing connection from 127\.0\.0\.1:\d+ claiming server \d+: "
                                  r"(authentication required|authentication failed)", log)
            self.assertGreaterEqual(len(refusals), 3, m.log_tail(30))
            self.assertIn("unidentified peer at 127.0.0.1:", log)
            self.assertNotIn("dropping message claiming", log)  # nothing reached the Raft node


class WrongPasswordMember(unittest.TestCase):
    def test_member_with_the_wrong_password_cannot_join(self):
        d = harness.make_temp_dir("zkit-peer-auth-bad-")
        good = write_jaas(d, "s3cret", "s3cret")
        bad_dir = os.path.join(d, "bad")
        os.makedirs(bad_dir)
        bad = write_jaas(bad_dir, "wrong", "wrong")
        ens = Ensemble(3, name="peerauthbad", extra_cfg=AUTH_CFG,
                       jvm_flags=["-Djava.security.auth.login.config=%s" % good])
        self.addCleanup(ens.close)
        intruder = ens.members[2]
        intruder.jvm_flags = ["-Djava.security.auth.login.config=%s" % bad]
        for m in ens.members[:2]:
            m.launch()
        intruder.launch()
        self.assertTrue(all(m.wait_serving(WAIT) for m in ens.members[:2]))
        self.assertTrue(harness.wait_until(lambda: ens.leader() in ens.members[:2], WAIT))
        c = KazooClient(hosts=ens.members[0].hosts, timeout=10.0)
        c.start(timeout=WAIT)
        try:
            c.retry(c.create, "/without-intruder", b"v")
        finally:
            c.stop()
            c.close()
        # The intruder never hears from the quorum: it does not serve and has no log entries.
        self.assertTrue(harness.wait_until(
            lambda: sum(int(mntr(m).get("zk_peer_auth_failures", "0")) for m in ens.members[:2]) >= 2, WAIT))
        self.assertTrue(intruder.running(), intruder.log_tail(20))
        self.assertNotIn("Mode: follower", intruder.four_letter("srvr"))
        self.assertNotIn("Mode: leader", intruder.four_letter("srvr"))
        with open(intruder.log_path, errors="replace") as f:
            self.assertIn("failed to authenticate", f.read())


class Control(unittest.TestCase):
    def test_the_same_forgery_takes_over_an_ensemble_without_authentication(self):
        """Without quorum auth the rogue's frames are real Raft messages that move the term and
        the leadership: what the authenticated test shows unchanged is not unchanged by accident."""
        ens = Ensemble(3, name="peerauthctl")
        ens.start()
        self.addCleanup(ens.close)
        self.assertTrue(harness.wait_until(lambda: ens.leader() is not None, WAIT))
        time.sleep(0.5)
        before = state(ens)
        leader = ens.leader()
        follower = [m for m in ens.members if m is not leader][0]
        s = socket.create_connection(("127.0.0.1", peer_port(follower)), timeout=5)
        self.addCleanup(s.close)
        s.sendall(hello(leader.myid, follower.myid) + forged_messages(leader.myid, follower.myid))
        self.assertTrue(harness.wait_until(lambda: state(ens) != before, 10))
        self.assertTrue(harness.wait_until(
            lambda: int(state(ens)[follower.myid][2]["last_log_term"]) > 1000, 10), state(ens))


class ConfigChecks(unittest.TestCase):
    def test_zookeepers_switch_rules_and_a_missing_jaas_file_stop_start_up(self):
        for extra, message in (
                ({"quorum.auth.serverRequireSasl": "true"},
                 "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.serverRequireSasl"),
                ({"quorum.auth.enableSasl": "true", "quorum.auth.serverRequireSasl": "true"},
                 "quorum.auth.learnerRequireSasl is disabled, so cannot enable quorum.auth.serverRequireSasl"),
                ({"quorum.auth.enableSasl": "true"}, "no JAAS file is given")):
            ens = Ensemble(3, name="peerauthcfg", extra_cfg=extra)
            self.addCleanup(ens.close)
            m = ens.members[0]
            m.launch()
            self.assertTrue(harness.wait_until(lambda: not m.running(), 15), "started despite %s" % extra)
            self.assertNotEqual(m.proc.returncode, 0)
            self.assertIn(message, m.log_tail(20))


if __name__ == "__main__":
    if harness.target_kind() != "zkraft":
        print("zkraft only (the rogue speaks zkraft's peer protocol)")
        sys.exit(0)
    harness.run_suite()
