#!/usr/bin/python3
"""TLS for clients: Kazoo and the Java client (ClientCnxnSocketNetty) with client certificates on
secureClientPort, the x509 ACL scheme and its super user, an untrusted or missing client
certificate refused, client.portUnification, the protocol floor and cipher list, a reload of the
server certificate while clients stay connected, handshakes that stall (slowloris) closed by
their deadline without holding up anyone else, and a JKS store refused at start-up.

Every scenario that Apache ZooKeeper 3.8 supports (NettyServerCnxnFactory, the same zoo.cfg and
the same certificates) also runs against it (class ZooKeeperReference): 3.8 has no
client.certReload (3.9 added it) and Netty ignores nio.sessionlessCnxnTimeout, so the reload and
slowloris cases run against the target only. Certificates are made by the test with openssl.

    ZK_TARGET=zkraft ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_tls.py
"""

import hashlib
import logging
import os
import socket
import ssl
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_java import COMPILE_CP, RUN_CP_EXTRA  # noqa: E402

from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import NoAuthError  # noqa: E402
from kazoo.security import ACL, Id, Permissions  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

JAVA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java")
# NettyServerCnxnFactory and ClientCnxnSocketNetty need jars zookeeper.jar's manifest omits.
NETTY_EXTRA = ":".join("/usr/share/java/%s.jar" % j for j in (
    "netty-codec", "netty-resolver", "netty-transport-native-unix-common"))
NETTY_FACTORY = "org.apache.zookeeper.server.NettyServerCnxnFactory"
P12_PASSWORD = "changeit"
KAZOO = "CN=kazoo,O=zkraft-test"
OTHER = "CN=other,O=zkraft-test"
ADMIN = "CN=admin,O=zkraft-test"
JAVA = "CN=java,O=zkraft-test"


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True, timeout=60)


class Pki:
    """A CA, a rogue CA, the server's certificate (SAN localhost, 127.0.0.1) and client ones."""

    def __init__(self):
        self.dir = harness.make_temp_dir("zkit-tls-pki-")
        self.ca("ca", "/CN=zkraft test CA")
        self.ca("rogue-ca", "/CN=rogue CA")
        self.leaf("server", "ca", "/O=zkraft-test/CN=localhost", "DNS:localhost,IP:127.0.0.1")
        self.leaf("server2", "ca", "/O=zkraft-test/CN=localhost", "DNS:localhost,IP:127.0.0.1")
        for name in ("kazoo", "other", "admin", "java"):
            self.leaf(name, "ca", "/O=zkraft-test/CN=%s" % name)
        self.leaf("rogue", "rogue-ca", "/O=zkraft-test/CN=kazoo")  # kazoo's subject, wrong issuer
        for name in ("server", "java"):
            openssl("pkcs12", "-export", "-in", name + ".crt", "-inkey", name + ".key", "-out", name + ".p12",
                    "-passout", "pass:" + P12_PASSWORD, "-name", name, cwd=self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def ca(self, name, subject):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".pem",
                "-subj", subject, "-days", "2", cwd=self.dir)

    def leaf(self, name, ca, subject, san=None):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", subject, cwd=self.dir)
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\n")
            if san:
                f.write("subjectAltName=%s\n" % san)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
                "-CAcreateserial", "-out", name + ".crt", "-days", "2", "-extfile", ext, cwd=self.dir)
        # A PEM key store: certificate and (PKCS8) key in one file, as ZooKeeper's PEM loader reads it.
        with open(self.path(name + ".pem"), "w") as out:
            for part in (".crt", ".key"):
                with open(self.path(name + part)) as f:
                    out.write(f.read())

    def fingerprint(self, name):
        with open(self.path(name + ".crt")) as f:
            return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


PKI = None


def pki():
    global PKI
    if PKI is None:
        PKI = Pki()
    return PKI


class TlsServer(harness.Server):
    """A server with the TLS keys in its zoo.cfg (ZooKeeper also gets the Netty jars)."""

    def __init__(self, kind, name, tls_cfg, secure=True):
        self.secure_port = harness.free_port() if secure else None
        cfg = {"serverCnxnFactory": NETTY_FACTORY}
        if secure:
            cfg["secureClientPort"] = self.secure_port
            cfg["secureClientPortAddress"] = "127.0.0.1"
        cfg.update(tls_cfg)
        super().__init__(kind=kind, name=name, extra_cfg=cfg)

    def _command(self):
        cmd = super()._command()
        if self.kind == "zookeeper":
            i = cmd.index("-cp")
            cmd[i + 1] += ":" + NETTY_EXTRA
        return cmd

    def mntr(self):
        out = {}
        for line in self.four_letter("mntr").splitlines():
            k, _, v = line.partition("\t")
            out[k] = v
        return out


def store_cfg(p, keystore="server.p12", keystore_password=P12_PASSWORD):
    cfg = {"ssl.keyStore.location": p.path(keystore), "ssl.trustStore.location": p.path("ca.pem")}
    if keystore_password:
        cfg["ssl.keyStore.password"] = keystore_password
    return cfg


def kazoo_tls(port, who="kazoo", ca=True, timeout=8.0):
    p = pki()
    kw = {"use_ssl": True, "verify_certs": True, "ca": p.path("ca.pem") if ca else None}
    if who:
        kw["certfile"] = p.path(who + ".crt")
        kw["keyfile"] = p.path(who + ".key")
    zk = KazooClient(hosts="127.0.0.1:%d" % port, timeout=timeout, **kw)
    return zk


def refused(port, who, ca=True):
    """True when a Kazoo TLS client cannot get a session within a few seconds."""
    zk = kazoo_tls(port, who, ca=ca, timeout=3.0)
    try:
        zk.start(timeout=4)
    except Exception:
        return True
    finally:
        try:
            zk.stop()
            zk.close()
        except Exception:
            pass
    return False


def tls_probe(port, who="kazoo", max_version=None, ciphers=None):
    """One raw TLS handshake with a client certificate: (version, cipher, server cert sha256)."""
    p = pki()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(p.path("ca.pem"))
    if who:
        ctx.load_cert_chain(p.path(who + ".crt"), p.path(who + ".key"))
    if max_version:
        ctx.maximum_version = max_version
    if ciphers:
        ctx.set_ciphers(ciphers)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw) as s:
            der = s.getpeercert(binary_form=True)
            return s.version(), s.cipher()[0], hashlib.sha256(der).hexdigest()


def run_java(test, port, subject):
    p = pki()
    classes = harness.make_temp_dir("zkit-tls-java-")
    r = subprocess.run(["javac", "-nowarn", "-d", classes, "-cp", COMPILE_CP, os.path.join(JAVA_DIR, "TlsClient.java")],
                       capture_output=True, text=True, timeout=180)
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
    cp = ":".join([classes, COMPILE_CP, NETTY_EXTRA, RUN_CP_EXTRA])
    props = {
        "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
        "zookeeper.client.secure": "true",
        "zookeeper.ssl.keyStore.location": p.path("java.p12"),
        "zookeeper.ssl.keyStore.password": P12_PASSWORD,
        "zookeeper.ssl.keyStore.type": "PKCS12",
        "zookeeper.ssl.trustStore.location": p.path("ca.pem"),
        "zookeeper.ssl.trustStore.type": "PEM",
    }
    r = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"] +
                       ["-D%s=%s" % kv for kv in props.items()] +
                       ["-cp", cp, "TlsClient", "127.0.0.1:%d" % port, subject],
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    test.assertEqual(r.returncode, 0, out)
    test.assertRegex(out, r"[1-9]\d* passed, 0 failed")


class Scenarios:
    """The cases both servers support; a subclass says which server (`kind`)."""

    kind = None
    server = None

    @classmethod
    def setUpClass(cls):
        p = pki()
        cfg = store_cfg(p)
        cfg["X509AuthenticationProvider.superUser"] = ADMIN
        cls.server = TlsServer(cls.kind, "tls-main", cfg).start()

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            cls.server.close()

    def test_kazoo_with_a_client_certificate_is_its_x509_identity(self):
        port = self.server.secure_port
        zk = kazoo_tls(port, "kazoo")
        zk.start(timeout=15)
        try:
            path = "/kazoo-only-%d" % time.monotonic_ns()
            zk.create(path, b"secret", acl=[ACL(Permissions.ALL, Id("x509", KAZOO))])
            self.assertEqual(zk.get(path)[0], b"secret")
            acl, _ = zk.get_acls(path)
            self.assertEqual([(a.id.scheme, a.id.id) for a in acl], [("x509", KAZOO)])
            # "auth" expands to the certificate's subject.
            zk.create(path + "-auth", b"", acl=[ACL(Permissions.ALL, Id("auth", ""))])
            self.assertIn(("x509", KAZOO), [(a.id.scheme, a.id.id) for a in zk.get_acls(path + "-auth")[0]])
            # Another certificate, and a plain client, are someone else.
            other = kazoo_tls(port, "other")
            other.start(timeout=15)
            plain = KazooClient(hosts=self.server.hosts, timeout=8)
            plain.start(timeout=15)
            try:
                with self.assertRaises(NoAuthError):
                    other.get(path)
                with self.assertRaises(NoAuthError):
                    plain.get(path)
                self.assertEqual(plain.get("/")[0], b"")  # a plain client still works
            finally:
                for c in (other, plain):
                    c.stop()
                    c.close()
            # The configured super user reads and changes everything.
            admin = kazoo_tls(port, "admin")
            admin.start(timeout=15)
            try:
                self.assertEqual(admin.get(path)[0], b"secret")
                admin.set(path, b"by admin")
            finally:
                admin.stop()
                admin.close()
            self.assertEqual(zk.get(path)[0], b"by admin")
        finally:
            zk.stop()
            zk.close()

    def test_an_untrusted_or_missing_client_certificate_is_refused(self):
        port = self.server.secure_port
        before = int(self.server.mntr().get("zk_auth_failed_count", "0"))
        self.assertTrue(refused(port, "rogue"), "a certificate from an unknown CA got a session")
        self.assertTrue(refused(port, None), "a client without a certificate got a session (clientAuth=need)")
        # ZooKeeper counts a failed handshake as a failed authentication.
        self.assertTrue(harness.wait_until(
            lambda: int(self.server.mntr().get("zk_auth_failed_count", "0")) >= before + 2, 5),
            self.server.mntr().get("zk_auth_failed_count"))
        # The refusals cost nobody else anything.
        self.assertFalse(refused(port, "kazoo"))

    def test_plain_clients_cannot_speak_to_the_secure_port(self):
        plain = KazooClient(hosts="127.0.0.1:%d" % self.server.secure_port, timeout=3)
        with self.assertRaises(Exception):
            plain.start(timeout=4)
        plain.stop()
        plain.close()

    def test_java_client_over_netty_with_a_client_certificate(self):
        run_java(self, self.server.secure_port, JAVA)


class PortUnification:
    kind = None

    def test_tls_and_plain_on_one_port(self):
        p = pki()
        cfg = store_cfg(p, keystore="server.pem", keystore_password=None)
        cfg["client.portUnification"] = "true"
        # Without a secureClientPort, ZooKeeper registers its x509 provider too late (after
        # ProviderRegistry read the properties) unless zoo.cfg names it; zkraft ignores the key.
        cfg["authProvider.x509"] = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"
        with TlsServer(self.kind, "tls-unified", cfg, secure=False) as srv:
            tls = kazoo_tls(srv.port, "kazoo")
            tls.start(timeout=15)
            plain = KazooClient(hosts=srv.hosts, timeout=8)
            plain.start(timeout=15)
            try:
                path = "/unified-%d" % time.monotonic_ns()
                tls.create(path, b"t", acl=[ACL(Permissions.ALL, Id("x509", KAZOO))])
                self.assertEqual(tls.get(path)[0], b"t")
                with self.assertRaises(NoAuthError):
                    plain.get(path)
                plain.create(path + "-plain", b"p")
                self.assertEqual(tls.get(path + "-plain")[0], b"p")
                self.assertTrue(srv.four_letter("srvr").startswith("Zookeeper version:"))
                self.assertTrue(refused(srv.port, "rogue"))
            finally:
                for c in (tls, plain):
                    c.stop()
                    c.close()

    def test_protocol_floor_and_ciphers(self):
        p = pki()
        cfg = store_cfg(p)
        cfg["ssl.enabledProtocols"] = "TLSv1.3"
        cfg["ssl.ciphersuites"] = "TLS_AES_128_GCM_SHA256"
        with TlsServer(self.kind, "tls-floor", cfg) as srv:
            version, cipher, _ = tls_probe(srv.secure_port)
            self.assertEqual((version, cipher), ("TLSv1.3", "TLS_AES_128_GCM_SHA256"))
            with self.assertRaises((ssl.SSLError, ConnectionError)):
                tls_probe(srv.secure_port, max_version=ssl.TLSVersion.TLSv1_2)
        cfg = store_cfg(p)
        cfg["ssl.protocol"] = "TLSv1.2"
        cfg["ssl.ciphersuites"] = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
        with TlsServer(self.kind, "tls-12", cfg) as srv:
            version, cipher, _ = tls_probe(srv.secure_port)
            self.assertEqual((version, cipher), ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"))
            zk = kazoo_tls(srv.secure_port, "kazoo")
            zk.start(timeout=15)
            self.assertEqual(zk.get("/")[0], b"")
            zk.stop()
            zk.close()


class TargetTls(Scenarios, unittest.TestCase):
    kind = harness.target_kind()


class TargetPortUnification(PortUnification, unittest.TestCase):
    kind = harness.target_kind()


class ZooKeeperReference(Scenarios, unittest.TestCase):
    """The same scenarios against Apache ZooKeeper 3.8 (NettyServerCnxnFactory)."""
    kind = "zookeeper"


class ZooKeeperReferencePortUnification(PortUnification, unittest.TestCase):
    kind = "zookeeper"


@unittest.skipIf(harness.target_kind() != "zkraft", "ZooKeeper 3.8 has no client.certReload and no TLS handshake deadline of its own")
class TargetOnly(unittest.TestCase):

    def test_server_certificate_reload_while_clients_stay_connected(self):
        p = pki()
        store = os.path.join(harness.make_temp_dir("zkit-tls-reload-"), "server.pem")
        with open(p.path("server.pem")) as f, open(store, "w") as out:
            out.write(f.read())
        cfg = {"ssl.keyStore.location": store, "ssl.trustStore.location": p.path("ca.pem"),
               "client.certReload": "true"}
        with TlsServer(self.kind(), "tls-reload", cfg) as srv:
            states = []
            zk = kazoo_tls(srv.secure_port, "kazoo")
            zk.add_listener(states.append)
            zk.start(timeout=15)
            try:
                session = zk.client_id[0]
                zk.create("/before", b"1")
                self.assertEqual(tls_probe(srv.secure_port)[2], p.fingerprint("server"))

                def replace(text):
                    tmp = store + ".tmp"
                    with open(tmp, "w") as f:
                        f.write(text)
                    os.replace(tmp, store)

                with open(p.path("server2.pem")) as f:
                    replace(f.read())
                self.assertTrue(harness.wait_until(
                    lambda: tls_probe(srv.secure_port)[2] == p.fingerprint("server2"), 10),
                    "new connections did not get the new certificate")
                # The connected client noticed nothing: same session, no suspension.
                self.assertEqual(zk.get("/before")[0], b"1")
                zk.set("/before", b"2")
                self.assertEqual(zk.client_id[0], session)
                self.assertEqual(states, [KazooState.CONNECTED], states)  # never SUSPENDED or LOST
                # A broken file keeps the certificate in use, and says why.
                replace("-----BEGIN CERTIFICATE-----\nnot base64\n")
                self.assertTrue(harness.wait_until(lambda: "cannot be loaded" in srv.log_tail(50), 10),
                                srv.log_tail(20))
                self.assertEqual(tls_probe(srv.secure_port)[2], p.fingerprint("server2"))
                self.assertEqual(zk.get("/before")[0], b"2")
            finally:
                zk.stop()
                zk.close()

    def test_stalled_handshakes_are_closed_and_block_nobody(self):
        p = pki()
        cfg = store_cfg(p)
        cfg["ssl.handshakeDetectionTimeoutMillis"] = "3000"
        cfg["nio.sessionlessCnxnTimeout"] = "4000"
        with TlsServer(self.kind(), "tls-slowloris", cfg) as srv:
            stalled = []
            for i in range(30):
                s = socket.create_connection(("127.0.0.1", srv.secure_port), timeout=10)
                if i % 3 == 0:
                    s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a ClientHello that stops
                stalled.append(s)
            plain = []
            for i in range(8):
                s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
                if i % 2 == 0:
                    s.sendall(b"\x00\x00\x00\x2c\x00\x00")  # half a ConnectRequest
                plain.append(s)
            started = time.monotonic()
            self.assertTrue(harness.wait_until(
                lambda: int(srv.mntr().get("zk_outstanding_tls_handshake", "0")) >= 30, 3),
                srv.mntr().get("zk_outstanding_tls_handshake"))
            # Meanwhile an honest client gets in, while the 30 are still stalled: nobody waits
            # for them.
            zk = kazoo_tls(srv.secure_port, "kazoo")
            zk.start(timeout=5)
            zk.create("/honest", b"ok")
            zk.stop()
            zk.close()
            self.assertGreaterEqual(int(srv.mntr().get("zk_outstanding_tls_handshake", "0")), 30,
                                    "the stalled handshakes were gone before the honest client got in")

            def closed_by_server(s):
                try:
                    return s.recv(1) == b""
                except (ConnectionResetError, ssl.SSLError):
                    return True
                except socket.timeout:
                    return False

            for s in stalled:
                self.assertTrue(closed_by_server(s), "a stalled TLS handshake was left open")
            self.assertLess(time.monotonic() - started, 7.0)
            for s in plain:
                self.assertTrue(closed_by_server(s), "a connection without a ConnectRequest was left open")
            self.assertLess(time.monotonic() - started, 9.0)
            for s in stalled + plain:
                s.close()
            m = srv.mntr()
            self.assertEqual(m.get("zk_outstanding_tls_handshake"), "0", m)
            self.assertGreaterEqual(int(m.get("zk_auth_failed_count", "0")), 30, m)
            self.assertTrue(srv.four_letter("ruok") == "imok")

    def test_a_jks_store_is_refused_at_start_up_with_the_keytool_command(self):
        srv = TlsServer(self.kind(), "tls-jks", {"ssl.keyStore.location": "/nonexistent/keystore.jks"})
        try:
            srv.launch()
            srv.proc.wait(timeout=20)
            self.assertEqual(srv.proc.returncode, 2)
            log = srv.log_tail(5)
            self.assertIn("keytool -importkeystore -srckeystore /nonexistent/keystore.jks", log)
        finally:
            srv.close()

    def test_ssl_quorum_ensemble_refuses_a_rogue_peer(self):
        from ensemble import Ensemble
        p = pki()
        cfg = {"sslQuorum": "true",
               "ssl.quorum.keyStore.location": p.path("server.p12"),
               "ssl.quorum.keyStore.password": P12_PASSWORD,
               "ssl.quorum.trustStore.location": p.path("ca.pem")}
        cfg.update(store_cfg(p, keystore="server.pem", keystore_password=None))
        cfg["client.portUnification"] = "true"  # one client port per member takes TLS too
        with Ensemble(3, kind=self.kind(), name="tls-quorum", extra_cfg=cfg) as ens:
            zk = KazooClient(hosts=ens.hosts, timeout=10)
            zk.start(timeout=30)
            try:
                zk.create("/over-tls-peers", b"v1")
                leader = ens.leader()
                before = [ens.mode(m) for m in ens.members]
                target = ens.members[0]
                peer_port = int(target.extra_cfg["server.1"].split(":")[1])
                # A process without the ensemble's certificate: a plain hello claiming to be
                # server 2, and a TLS client with a certificate from another CA.
                with socket.create_connection(("127.0.0.1", peer_port), timeout=5) as raw:
                    raw.sendall(b"ZKRT\x01\x01" + b"\x00" * 64)
                    raw.settimeout(5)
                    try:
                        self.assertEqual(raw.recv(100), b"")
                    except ConnectionResetError:
                        pass
                with self.assertRaises((ssl.SSLError, ConnectionError)):
                    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                    ctx.check_hostname = False
                    ctx.verify_mode = ssl.CERT_NONE
                    ctx.load_cert_chain(p.path("rogue.crt"), p.path("rogue.key"))
                    with socket.create_connection(("127.0.0.1", peer_port), timeout=5) as raw:
                        with ctx.wrap_socket(raw) as s:
                            s.sendall(b"ZKRT")
                            if s.recv(100) == b"":
                                raise ConnectionError("closed")
                self.assertTrue(harness.wait_until(
                    lambda: target.log_tail(200).count("TLS handshake failed") >= 2, 5), target.log_tail(30))
                self.assertEqual(ens.leader(), leader)
                self.assertEqual([ens.mode(m) for m in ens.members], before)
                zk.set("/over-tls-peers", b"v2")
                self.assertEqual(zk.get("/over-tls-peers")[0], b"v2")
                # A write through a follower carries the x509 id to the leader (Txn::auth): the
                # ACL check where it is applied sees the certificate's subject.
                follower = next(m for m in ens.members if ens.mode(m) == "follower")
                via_follower = kazoo_tls(follower.port, "kazoo")
                via_follower.start(timeout=15)
                on_leader = kazoo_tls(ens.leader().port, "kazoo")
                on_leader.start(timeout=15)
                try:
                    via_follower.create("/x509-forwarded", b"1", acl=[ACL(Permissions.ALL, Id("x509", KAZOO))])
                    via_follower.set("/x509-forwarded", b"2")
                    on_leader.sync("/x509-forwarded")
                    self.assertEqual(on_leader.get("/x509-forwarded")[0], b"2")
                    with self.assertRaises(NoAuthError):
                        zk.set("/x509-forwarded", b"plain")
                finally:
                    for c in (via_follower, on_leader):
                        c.stop()
                        c.close()
            finally:
                zk.stop()
                zk.close()

    @staticmethod
    def kind():
        return harness.target_kind()


if __name__ == "__main__":
    harness.run_suite()
