#!/usr/bin/python3
"""SASL (DIGEST-MD5) as a rig sets it up for ZooKeeper: a JAAS file with a Server section of
DigestLoginModule users, given with -Djava.security.auth.login.config in SERVER_JVMFLAGS, and
authProvider.1=SASLAuthenticationProvider (which zkraft accepts and does not need). Each scenario
runs against Apache ZooKeeper 3.8 (the same words on its java command line) and the target, and
the transcripts must be equal; the tests also assert what the transcript must say, so a target
that agrees with ZooKeeper on something wrong still fails.

  clients        Kazoo's legacy auth_data=[("sasl", "user:password")] and sasl_options
                 DIGEST-MD5, the Java client with a JAAS Client section
  identity       sasl:NAME in ACLs (sasl scheme, the auth scheme expanding to it), whoAmI,
                 zookeeper.superUser
  refusals       a wrong password or an unknown user: the exchange fails, the client is closed
  enforcement    zookeeper.sessionRequireClientSASLAuth, enforce.auth.enabled + schemes: an
                 unauthenticated session's request fails with SessionClosedRequireAuth (-124)
                 and the connection closes
  kerberos       GSSAPI with a KDC the test starts (kdc.py): the names ZooKeeper forms from
                 principals, with kerberos.removeHostFromPrincipal / removeRealmFromPrincipal
  ensemble       (target only) a follower's SASL client writes under a sasl ACL: the identity
                 reaches the leader with the forwarded write

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_sasl.py
"""

import logging
import os
import shutil
import subprocess
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import zkwire as W  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.security import make_acl, make_digest_acl  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
warnings.simplefilter("ignore", DeprecationWarning)  # Kazoo's note on legacy sasl auth_data

SESSION_CLOSED_REQUIRE_AUTH = -124
AUTH_FAILED = -115
SASL_PROVIDER = "-Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"

SERVER_JAAS = """
Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_super="adminsecret"
    user_bob="bobsecret"
    user_eve="evesecret";
};
"""


def jaas_dir():
    d = harness.make_temp_dir("zkit-sasl-")
    path = os.path.join(d, "server.jaas")
    with open(path, "w") as f:
        f.write(SERVER_JAAS)
    return d, path


def sasl_flags(jaas, *more):
    return ["-Djava.security.auth.login.config=" + jaas, SASL_PROVIDER] + list(more)


def digest(user, password):
    return {"mechanism": "DIGEST-MD5", "username": user, "password": password}


def kazoo(server, **kw):
    return KazooClient(server.hosts, timeout=10, connection_retry={"max_tries": 0},
                       command_retry={"max_tries": 0}, **kw)


def outcome(fn):
    """What a Kazoo call did: its result, or the exception's class name."""
    try:
        return ["ok", fn()]
    except Exception as e:  # noqa: BLE001 - the class name is the observation
        return ["error", type(e).__name__]


def start_outcome(client):
    """Kazoo's start() with a failed SASL exchange returns, with the client closed (AUTH_FAILED);
    a working one leaves it connected."""
    r = outcome(lambda: client.start(timeout=10))
    return [r[0] if r[0] == "error" else "started", client.state, client.connected]


def refused_outcome(client):
    """Kazoo after a failed SASL exchange: start() may return before the failure lands (it waits
    for the session, not for SASL); then the server closes the connection and Kazoo gives up the
    session (AUTH_FAILED, state LOST). What settles within 5 s, and what a read then does."""
    r = outcome(lambda: client.start(timeout=10))
    harness.wait_until(lambda: not client.connected, 5.0)
    return [r[0] if r[0] == "error" else "started", client.state, client.connected,
            outcome(lambda: client.get("/")[1].version)]


def acl_text(acls):
    return sorted("%s:%s:%d" % (a.id.scheme, a.id.id, a.perms) for a in acls)


def identity_script(server):
    """Both SASL ways of Kazoo, ACLs with the sasl scheme, the super user, refusals."""
    out = []
    legacy = kazoo(server, auth_data=[("sasl", "bob:bobsecret")])
    out.append(["legacy start", start_outcome(legacy)])
    out.append(["legacy create /s sasl:bob", outcome(
        lambda: legacy.create("/s", b"x", acl=[make_acl("sasl", "bob", all=True)]))])
    out.append(["legacy getACL /s", outcome(lambda: acl_text(legacy.get_acls("/s")[0]))])
    out.append(["legacy create /a auth", outcome(
        lambda: legacy.create("/a", b"y", acl=[make_acl("auth", "", read=True, write=True)]))])
    out.append(["legacy getACL /a", outcome(lambda: acl_text(legacy.get_acls("/a")[0]))])
    legacy.stop()

    bob = kazoo(server, sasl_options=digest("bob", "bobsecret"))
    out.append(["bob start", start_outcome(bob)])
    out.append(["bob get /s", outcome(lambda: bob.get("/s")[0].decode())])
    out.append(["bob set /s", outcome(lambda: bob.set("/s", b"z").version)])
    out.append(["bob get /a", outcome(lambda: bob.get("/a")[0].decode())])

    eve = kazoo(server, sasl_options=digest("eve", "evesecret"))
    out.append(["eve start", start_outcome(eve)])
    out.append(["eve get /s", outcome(lambda: eve.get("/s")[0].decode())])
    out.append(["eve set /a", outcome(lambda: eve.set("/a", b"e").version)])
    # An unauthenticated session may name a sasl id in an ACL; it cannot read the node after.
    anon = kazoo(server)
    out.append(["anon start", start_outcome(anon)])
    out.append(["anon create /e sasl:eve", outcome(
        lambda: anon.create("/e", b"", acl=[make_acl("sasl", "eve", read=True)]))])
    out.append(["anon get /e", outcome(lambda: anon.get("/e")[0].decode())])
    out.append(["eve get /e", outcome(lambda: eve.get("/e")[0].decode())])
    out.append(["anon get /s", outcome(lambda: anon.get("/s")[0].decode())])

    root = kazoo(server, sasl_options=digest("super", "adminsecret"))
    out.append(["super start", start_outcome(root)])
    out.append(["super get /s", outcome(lambda: root.get("/s")[0].decode())])
    out.append(["super get /e", outcome(lambda: root.get("/e")[0].decode())])

    # (An unknown user with a password nobody has: ZooKeeper 3.8 shares one callback handler
    # between connections, so an unknown user with the password of the last user named elsewhere
    # gets in there; 3.9.4 makes one per exchange, as zkraft does. ZkraftOnly checks that case.)
    for name, user, password in (("wrong password", "bob", "nope"),
                                 ("unknown user", "mallory", "mallorys")):
        c = kazoo(server, sasl_options=digest(user, password))
        out.append([name + " kazoo", refused_outcome(c)])
        c.stop()
        out.append([name + " raw", raw_sasl(server, user, password)])
    out.append(["raw sasl bob", raw_sasl(server, "bob", "bobsecret")])
    # SASL is negotiated with op 102 only: an auth packet with scheme sasl fails (ZooKeeper's
    # SASLAuthenticationProvider.handleAuthentication) and the connection closes.
    out.append(["auth packet sasl", raw_auth_packet(server, "sasl", b"bob:bobsecret")])
    for c in (bob, eve, anon, root):
        c.stop()
    return out


def raw_request_after_connect(server, op, body):
    """A session that never authenticates: one request, its error, and whether the connection
    is closed after it."""
    raw = W.RawSession(server.host, server.port, timeout_ms=10000, io_timeout=10.0)
    try:
        _, (_, zxid, err, _) = raw.call(op, body)
        try:
            raw.read_frame()
            closed = False
        except (ConnectionError, OSError):
            closed = True
        return [err, zxid if err == SESSION_CLOSED_REQUIRE_AUTH else "-", closed]
    finally:
        raw.abandon()


OP_SASL = 102


def raw_sasl(server, user, password):
    """DIGEST-MD5 by hand over one raw session (puresasl computes the tokens, as in Kazoo): the
    error code of each SASL reply, and then a getData's (or "closed")."""
    from puresasl.client import SASLClient
    raw = W.RawSession(server.host, server.port, timeout_ms=10000, io_timeout=10.0)
    cli = SASLClient("zk-sasl-md5", service="zookeeper", mechanism="DIGEST-MD5",
                     username=user, password=password)
    errs = []
    try:
        token = cli.process(None) or b""
        for _ in range(4):  # DIGEST-MD5 takes two steps
            try:
                _, (_, _, err, body) = raw.call(OP_SASL, W.buffer(token))
            except (ConnectionError, OSError):
                errs.append("closed")
                return errs
            errs.append(err)
            if err != 0:
                break
            challenge = W.Decoder(body).buffer()
            if challenge is None and not cli.complete:
                errs.append("null token")
                break
            if cli.complete:
                break
            token = cli.process(challenge) or b""
            if cli.complete and not token:
                break
        try:
            _, (_, _, err, _) = raw.call(W.OP_GETDATA, W.ustring("/") + W.boolean(False))
            errs.append(["getData", err])
        except (ConnectionError, OSError):
            errs.append("closed")
        return errs
    finally:
        raw.abandon()


def raw_auth_packet(server, scheme, auth):
    """An auth packet (op 100, xid -4: type, scheme, auth): its error, then whether the server
    closed the connection."""
    raw = W.RawSession(server.host, server.port, timeout_ms=10000, io_timeout=10.0)
    try:
        _, (xid, _, err, _) = raw.call(100, W.int32(0) + W.ustring(scheme) + W.buffer(auth), xid=-4)
        try:
            raw.read_frame()
            return [xid, err, "open"]
        except (ConnectionError, OSError):
            return [xid, err, "closed"]
    finally:
        raw.abandon()


def enforcement_script(server, authenticated_client, sasl=True):
    """Kazoo 2.8 does not know -124 (its connection thread dies on it), so the refused sessions
    are raw ones; the authenticated session is Kazoo's."""
    out = []
    out.append(["raw getData", raw_request_after_connect(
        server, W.OP_GETDATA, W.ustring("/") + W.boolean(False))])
    out.append(["raw create", raw_request_after_connect(server, W.OP_CREATE, W.create_body("/raw"))])
    out.append(["raw ping", raw_request_after_connect(server, W.OP_PING, b"")])
    c = authenticated_client()
    out.append(["authenticated start", start_outcome(c)])
    out.append(["authenticated create /ok", outcome(lambda: c.create("/ok", b"1"))])
    out.append(["authenticated get /ok", outcome(lambda: c.get("/ok")[0].decode())])
    c.stop()
    if sasl:
        out.append(["raw sasl bob", raw_sasl(server, "bob", "bobsecret")])
        out.append(["raw sasl wrong password", raw_sasl(server, "bob", "nope")])
    return out


class SaslDifferential(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.dir, cls.jaas = jaas_dir()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_both(self, name, script, jvm_flags, extra_cfg=None):
        transcripts = []
        for kind in ("zookeeper", None):
            with harness.Server(kind=kind, name=name, jvm_flags=jvm_flags, extra_cfg=extra_cfg) as srv:
                transcripts.append(script(srv))
        expected, got = transcripts
        for e, g in zip(expected, got):
            if e != g:
                print("differs:\n  zookeeper: %s\n  target:    %s" % (e, g))
        self.assertEqual(expected, got)
        return dict((step[0], step[1]) for step in got)

    def test_digest_md5_identities_acls_super_user_and_refusals(self):
        t = self.run_both("sasl-ids", identity_script,
                          sasl_flags(self.jaas, "-Dzookeeper.superUser=super"))
        connected = ["started", "CONNECTED", True]
        for who in ("legacy", "bob", "eve", "anon", "super"):
            self.assertEqual(t[who + " start"], connected, who)
        self.assertEqual(t["legacy getACL /s"], ["ok", ["sasl:bob:31"]])
        self.assertEqual(t["legacy getACL /a"], ["ok", ["sasl:bob:3"]])  # auth -> the sasl id
        self.assertEqual(t["bob get /s"], ["ok", "x"])
        self.assertEqual(t["bob set /s"], ["ok", 1])
        self.assertEqual(t["eve get /s"], ["error", "NoAuthError"])
        self.assertEqual(t["eve set /a"], ["error", "NoAuthError"])
        self.assertEqual(t["anon get /e"], ["error", "NoAuthError"])
        self.assertEqual(t["eve get /e"], ["ok", ""])
        self.assertEqual(t["anon get /s"], ["error", "NoAuthError"])
        self.assertEqual(t["super get /s"], ["ok", "z"])  # zookeeper.superUser bypasses ACLs
        self.assertEqual(t["super get /e"], ["ok", ""])
        # The exchange fails with AuthFailed and the server closes the connection. (Kazoo 2.8 then
        # carries on without SASL: what it shows is compared with ZooKeeper's above.)
        self.assertEqual(t["wrong password raw"], [0, AUTH_FAILED, "closed"])
        self.assertEqual(t["unknown user raw"], [0, AUTH_FAILED, "closed"])
        self.assertEqual(t["raw sasl bob"], [0, 0, ["getData", 0]])
        self.assertEqual(t["auth packet sasl"], [-4, AUTH_FAILED, "closed"])

    def test_session_require_client_sasl_auth_refuses_unauthenticated_sessions(self):
        t = self.run_both(
            "sasl-required",
            lambda srv: enforcement_script(srv, lambda: kazoo(srv, sasl_options=digest("bob", "bobsecret"))),
            sasl_flags(self.jaas, "-Dzookeeper.sessionRequireClientSASLAuth=true"))
        self.assertEqual(t["raw getData"], [SESSION_CLOSED_REQUIRE_AUTH, 0, True])
        self.assertEqual(t["raw create"], [SESSION_CLOSED_REQUIRE_AUTH, 0, True])
        self.assertEqual(t["raw ping"], [SESSION_CLOSED_REQUIRE_AUTH, 0, True])
        self.assertEqual(t["authenticated start"], ["started", "CONNECTED", True])
        self.assertEqual(t["authenticated get /ok"], ["ok", "1"])
        self.assertEqual(t["raw sasl bob"], [0, 0, ["getData", 0]])
        # With sasl required, a failed exchange is answered SessionClosedRequireAuth, then closed.
        self.assertEqual(t["raw sasl wrong password"], [0, SESSION_CLOSED_REQUIRE_AUTH, "closed"])

    def test_enforce_auth_schemes_digest_lets_a_digest_session_through(self):
        t = self.run_both(
            "enforce-digest",
            lambda srv: enforcement_script(srv, lambda: kazoo(srv, auth_data=[("digest", "joe:pw")]),
                                           sasl=False),
            ["-Dzookeeper.enforce.auth.enabled=true", "-Dzookeeper.enforce.auth.schemes=digest"])
        self.assertEqual(t["raw getData"], [SESSION_CLOSED_REQUIRE_AUTH, 0, True])
        self.assertEqual(t["authenticated get /ok"], ["ok", "1"])

    def test_enforce_auth_schemes_sasl_in_zoo_cfg(self):
        # zoo.cfg keys X are ZooKeeper's zookeeper.X properties.
        t = self.run_both(
            "enforce-sasl-cfg",
            lambda srv: enforcement_script(srv, lambda: kazoo(srv, auth_data=[("sasl", "eve:evesecret")])),
            sasl_flags(self.jaas),
            extra_cfg={"enforce.auth.enabled": "true", "enforce.auth.schemes": "sasl"})
        self.assertEqual(t["raw create"], [SESSION_CLOSED_REQUIRE_AUTH, 0, True])
        self.assertEqual(t["authenticated create /ok"], ["ok", "/ok"])
        # With sasl enforced, a failed exchange is answered SessionClosedRequireAuth.
        self.assertEqual(t["raw sasl wrong password"], [0, SESSION_CLOSED_REQUIRE_AUTH, "closed"])


class JavaClient(unittest.TestCase):
    """The Java client with a JAAS Client section: SaslAuthenticated, whoAmI, a sasl ACL."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        import test_java
        cls.test_java = test_java
        cls.classes_dir = test_java.compile_java_mains()
        cls.dir, cls.jaas = jaas_dir()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.classes_dir, ignore_errors=True)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def java(self, server, user, password, path):
        client_jaas = os.path.join(self.dir, "client-%s-%s.jaas" % (user, password))
        with open(client_jaas, "w") as f:
            f.write('Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                    '  username="%s"\n  password="%s";\n};\n' % (user, password))
        cp = ":".join([self.classes_dir, self.test_java.COMPILE_CP, self.test_java.RUN_CP_EXTRA])
        r = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                            "-Djava.security.auth.login.config=" + client_jaas,
                            "-cp", cp, "SaslClientTest", server.hosts, path],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # whoAmI: the ip id's address is the same, but ZooKeeper keeps a connection's ids in a
        # set (no order): compare them sorted, the ip one by its scheme.
        return [line if not line.startswith("whoAmI") else
                "whoAmI " + " ".join(sorted(w if not w.startswith("ip:") else "ip"
                                            for w in line.split()[1:]))
                for line in r.stdout.splitlines()]

    def test_java_client_authenticates_with_a_jaas_file(self):
        runs = []
        for kind in ("zookeeper", None):
            with harness.Server(kind=kind, name="sasl-java", jvm_flags=sasl_flags(self.jaas)) as srv:
                runs.append([self.java(srv, "bob", "bobsecret", "/j"),
                             self.java(srv, "bob", "wrong", "/k")])
        print("\n".join(runs[1][0]))
        self.assertEqual(runs[0], runs[1])
        good, wrong = runs[1]
        self.assertIn("state SaslAuthenticated", good)
        self.assertIn("whoAmI ip sasl:bob", good)
        self.assertIn("create /j ok", good)
        self.assertIn("setData ok", good)
        self.assertIn("state AuthFailed", wrong)
        self.assertNotIn("create /k ok", wrong)


@unittest.skipUnless(harness.target_kind() == "zkraft", "the identity through Raft is zkraft's")
class EnsembleIdentity(unittest.TestCase):
    def test_a_followers_sasl_identity_reaches_the_leader_with_its_writes(self):
        d, jaas = jaas_dir()
        try:
            with Ensemble(3, name="sasl-ens", jvm_flags=sasl_flags(jaas)) as ens:
                leader = ens.leader()
                harness.wait_until(lambda: ens.leader() is not None, 20, what="a leader")
                leader = ens.leader()
                follower = [m for m in ens.members if m is not leader][0]
                other = [m for m in ens.members if m is not leader and m is not follower][0]
                bob = KazooClient(follower.hosts, timeout=10, sasl_options=digest("bob", "bobsecret"))
                bob.start(timeout=15)
                bob.create("/f", b"1", acl=[make_acl("sasl", "bob", all=True)])
                # setData's ACL check runs where the entry applies: bob's id came with the write.
                self.assertEqual(bob.set("/f", b"2").version, 1)
                self.assertEqual(bob.get("/f")[0], b"2")
                self.assertEqual(acl_text(bob.get_acls("/f")[0]), ["sasl:bob:31"])
                # auth expands to the forwarded identity too.
                bob.create("/g", b"", acl=[make_acl("auth", "", all=True)])
                self.assertEqual(acl_text(bob.get_acls("/g")[0]), ["sasl:bob:31"])
                eve = KazooClient(other.hosts, timeout=10, sasl_options=digest("eve", "evesecret"))
                eve.start(timeout=15)
                eve.sync("/f")
                self.assertEqual(outcome(lambda: eve.get("/f")), ["error", "NoAuthError"])
                self.assertEqual(outcome(lambda: eve.set("/f", b"3")), ["error", "NoAuthError"])
                self.assertEqual(bob.get("/f")[0], b"2")
                eve.stop()
                bob.stop()
        finally:
            shutil.rmtree(d, ignore_errors=True)


# One Kazoo GSSAPI client in its own process (its ticket cache is the process's KRB5CCNAME):
# creates `path` with the auth ACL, which ZooKeeper expands to the session's sasl id, and prints
# that ACL and whether reading it back works.
GSSAPI_CLIENT = r"""
import json, sys, logging
logging.basicConfig(level=logging.CRITICAL)
from kazoo.client import KazooClient
from kazoo.security import make_acl
hosts, path = sys.argv[1:3]
c = KazooClient(hosts, timeout=10, connection_retry={"max_tries": 0},
                sasl_options={"mechanism": "GSSAPI", "service": "zookeeper"})
c.start(timeout=10)
c.create(path, b"k", acl=[make_acl("auth", "", all=True)])
acl = sorted("%s:%s" % (a.id.scheme, a.id.id) for a in c.get_acls(path)[0])
print(json.dumps({"acl": acl, "data": c.get(path)[0].decode()}))
c.stop()
"""


@unittest.skipUnless(shutil.which("kadmin.local") and shutil.which("krb5kdc"),
                     "needs krb5-kdc and krb5-admin-server (tools/install-deps.sh)")
class Kerberos(unittest.TestCase):
    """GSSAPI through a throwaway realm (kdc.py): the server's JAAS section is a Krb5LoginModule
    with its keytab and principal zookeeper/localhost; Kazoo authenticates with a ticket from the
    KDC. The sasl id ZooKeeper forms from the principal, with kerberos.removeHostFromPrincipal and
    removeRealmFromPrincipal, compared with ZooKeeper 3.8's."""

    maxDiff = None

    def gssapi(self, kdc, env, server, path):
        r = subprocess.run(["/usr/bin/python3", "-c", GSSAPI_CLIENT, "localhost:%d" % server.port, path],
                           env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return ["failed", r.stderr.strip().splitlines()[-1:] if r.stderr else []]
        import json
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_gssapi_names_as_zookeeper_forms_them(self):
        from kdc import Kdc
        with Kdc() as kdc:
            keytab = kdc.add_service("zookeeper/localhost")
            bob = kdc.kinit("bob")
            host = kdc.kinit("client/localhost")
            jaas = os.path.join(kdc.dir, "server.jaas")
            with open(jaas, "w") as f:
                f.write('Server {\n  com.sun.security.auth.module.Krb5LoginModule required\n'
                        '  useKeyTab=true\n  keyTab="%s"\n  storeKey=true\n  useTicketCache=false\n'
                        '  principal="zookeeper/localhost@%s";\n};\n' % (keytab, kdc.realm))
            # The servers' (zkraft reads the environment; its replay cache goes in the realm's dir).
            saved = {k: os.environ.get(k) for k in ("KRB5_CONFIG", "KRB5RCACHEDIR")}
            os.environ.update(KRB5_CONFIG=kdc.krb5_conf, KRB5RCACHEDIR=kdc.dir)
            try:
                runs = []
                for kind in ("zookeeper", None):
                    out = {}
                    for name, extra in (("keep", []),
                                        ("no-host", ["-Dzookeeper.kerberos.removeHostFromPrincipal=true"]),
                                        ("neither", ["-Dzookeeper.kerberos.removeHostFromPrincipal=true",
                                                     "-Dzookeeper.kerberos.removeRealmFromPrincipal=true"])):
                        flags = sasl_flags(jaas, "-Djava.security.krb5.conf=" + kdc.krb5_conf, *extra)
                        with harness.Server(kind=kind, name="krb-" + name, jvm_flags=flags) as srv:
                            out[name + " bob"] = self.gssapi(kdc, bob, srv, "/bob")
                            out[name + " client/localhost"] = self.gssapi(kdc, host, srv, "/host")
                    runs.append(out)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        print(runs[1])
        self.assertEqual(runs[0], runs[1])
        got = runs[1]
        self.assertEqual(got["keep bob"], {"acl": ["sasl:bob@EXAMPLE.COM"], "data": "k"})
        self.assertEqual(got["keep client/localhost"]["acl"], ["sasl:client/localhost@EXAMPLE.COM"])
        self.assertEqual(got["no-host client/localhost"]["acl"], ["sasl:client@EXAMPLE.COM"])
        self.assertEqual(got["neither bob"]["acl"], ["sasl:bob"])
        self.assertEqual(got["neither client/localhost"]["acl"], ["sasl:client"])


@unittest.skipUnless(harness.target_kind() == "zkraft", "ZooKeeper 3.8 differs (see identity_script)")
class UnknownUser(unittest.TestCase):
    def test_an_unknown_user_with_a_known_users_password_is_refused(self):
        d, jaas = jaas_dir()
        try:
            with harness.Server(name="sasl-unknown", jvm_flags=sasl_flags(jaas)) as srv:
                self.assertEqual(raw_sasl(srv, "bob", "bobsecret"), [0, 0, ["getData", 0]])
                self.assertEqual(raw_sasl(srv, "mallory", "bobsecret"), [0, AUTH_FAILED, "closed"])
        finally:
            shutil.rmtree(d, ignore_errors=True)


@unittest.skipUnless(harness.target_kind() == "zkraft", "zkraft's start-up checks")
class StartupChecks(unittest.TestCase):
    def start_fails(self, jvm_flags, needle):
        d = harness.make_temp_dir("zkit-sasl-bad-")
        env = dict(os.environ, SERVER_JVMFLAGS=" ".join(jvm_flags))
        p = subprocess.run([os.environ["ZKRAFT_BIN"], "--data-dir", d, "--client-port", "0",
                            "--admin-port", "0"], env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=20)
        self.assertNotEqual(p.returncode, 0, p.stderr)
        self.assertIn(needle, p.stdout + p.stderr)

    def test_a_missing_jaas_file_and_enforcement_without_schemes_stop_the_start(self):
        # A readable file without the server's section does not stop the start (ZooKeeper serves
        # without SASL then: ServerCnxnFactory.configureSaslLogin); sasl_config's unit test.
        d, jaas = jaas_dir()
        self.start_fails(["-Djava.security.auth.login.config=" + os.path.join(d, "none.jaas")],
                         b"none.jaas")
        self.start_fails(["-Dzookeeper.enforce.auth.enabled=true"], b"enforce.auth.schemes must be")
        self.start_fails(["-Dzookeeper.sessionRequireClientSASLAuth=true"],
                         b"Authentication scheme sasl is not available")


if __name__ == "__main__":
    harness.run_suite()
