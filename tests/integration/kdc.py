"""A throwaway MIT Kerberos realm for tests: krb5.conf, kdc.conf and the database under a temp
dir, krb5kdc listening on 127.0.0.1 only (a port found by binding port 0), principals and keytabs
made with kadmin.local. Stopped by its PID (SIGTERM, then SIGKILL) on close().

    with Kdc() as kdc:
        kdc.add_service("zookeeper/localhost")      # keytab: kdc.keytab("zookeeper/localhost")
        env = kdc.kinit("bob")                       # KRB5_CONFIG and KRB5CCNAME for a client
"""

import os
import shutil
import signal
import socket
import subprocess
import time

import harness

REALM = "EXAMPLE.COM"


class Kdc:
    def __init__(self, realm=REALM):
        self.realm = realm
        self.dir = harness.make_temp_dir("zkit-kdc-")
        self.port = harness.free_port()
        self.proc = None
        self.krb5_conf = os.path.join(self.dir, "krb5.conf")
        self.kdc_conf = os.path.join(self.dir, "kdc.conf")
        with open(self.krb5_conf, "w") as f:
            f.write("[libdefaults]\n"
                    "  default_realm = %(realm)s\n"
                    "  dns_lookup_realm = false\n  dns_lookup_kdc = false\n"
                    "  rdns = false\n  dns_canonicalize_hostname = false\n"
                    "  udp_preference_limit = 1\n"
                    "[realms]\n  %(realm)s = {\n    kdc = 127.0.0.1:%(port)d\n  }\n"
                    % {"realm": realm, "port": self.port})
        with open(self.kdc_conf, "w") as f:
            f.write("[kdcdefaults]\n"
                    "  kdc_listen = 127.0.0.1:%(port)d\n  kdc_tcp_listen = 127.0.0.1:%(port)d\n"
                    "[realms]\n  %(realm)s = {\n"
                    "    database_name = %(dir)s/principal\n"
                    "    key_stash_file = %(dir)s/stash\n"
                    "    acl_file = %(dir)s/kadm5.acl\n"
                    "    max_life = 1h\n"
                    "    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
                    "  }\n"
                    "[logging]\n  kdc = FILE:%(dir)s/kdc.log\n"
                    % {"realm": realm, "port": self.port, "dir": self.dir})
        open(os.path.join(self.dir, "kadm5.acl"), "w").close()
        self.env = dict(os.environ, KRB5_CONFIG=self.krb5_conf, KRB5_KDC_PROFILE=self.kdc_conf,
                        KRB5RCACHEDIR=self.dir)

    def _run(self, *cmd):
        r = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("%s failed: %s%s" % (" ".join(cmd), r.stdout, r.stderr))
        return r.stdout

    def start(self):
        self._run("kdb5_util", "-r", self.realm, "create", "-s", "-P", "master-of-the-test-realm")
        self.proc = subprocess.Popen(["krb5kdc", "-n", "-r", self.realm], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=harness._die_with_parent)

        def listening():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        if not harness.wait_until(listening, 15.0):
            raise RuntimeError("krb5kdc did not listen on %d" % self.port)
        return self

    def keytab(self, principal):
        return os.path.join(self.dir, principal.replace("/", "_") + ".keytab")

    def add_service(self, principal):
        """A principal with a random key, exported to its own keytab."""
        self._run("kadmin.local", "-r", self.realm, "-q", "addprinc -randkey %s" % principal)
        self._run("kadmin.local", "-r", self.realm, "-q", "ktadd -k %s %s" % (self.keytab(principal), principal))
        return self.keytab(principal)

    def kinit(self, principal):
        """A ticket cache for `principal` (added with a keytab); the environment that uses it."""
        keytab = self.add_service(principal)
        ccache = os.path.join(self.dir, "cc_" + principal.replace("/", "_"))
        env = dict(self.env, KRB5CCNAME="FILE:" + ccache)
        subprocess.run(["kinit", "-k", "-t", keytab, principal], env=env, check=True, timeout=30,
                       capture_output=True, stdin=subprocess.DEVNULL)
        return env

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if not os.environ.get("ZK_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
