"""An ensemble of servers of one kind (zkraft or Apache ZooKeeper) for integration tests."""

from harness import Server, ServerStartError, free_port, target_kind


class Ensemble:
    """n servers of one kind forming a quorum (server.N lines, dataDir/myid), on 127.0.0.1 with
    ports found by binding port 0. zoo.cfg of member i: its own clientPort, dataDir, and
    `server.j=127.0.0.1:<peer>:<election>;127.0.0.1:<client>` for every member j."""

    def __init__(self, n=3, kind=None, name="ens", extra_cfg=None, **server_kw):
        """extra_cfg: more zoo.cfg keys for every member (e.g. snapCount, reconfigEnabled)."""
        self.kind = kind or target_kind()
        self._n, self._name, self._server_kw = n, name, server_kw
        self.members = self._build(dict(extra_cfg or {}))

    def _build(self, extra):
        ports = [(free_port(), free_port(), free_port()) for _ in range(self._n)]
        lines = {"server.%d" % (i + 1): "127.0.0.1:%d:%d;127.0.0.1:%d" % (peer, elect, client)
                 for i, (client, peer, elect) in enumerate(ports)}
        lines.update({"initLimit": 10, "syncLimit": 5})
        lines.update(extra)
        return [Server(kind=self.kind, name="%s%d" % (self._name, i + 1), port=ports[i][0], myid=i + 1,
                       extra_cfg=lines, **self._server_kw) for i in range(self._n)]

    @property
    def hosts(self):
        return ",".join(m.hosts for m in self.members)

    def start(self, timeout=60.0, attempts=3):
        """Starts every member. Ports come from binding port 0 and releasing it, so another process
        (a parallel suite's server, any outgoing connection) can take one first: such a start is
        retried with fresh ports, keeping the callers' extra zoo.cfg keys."""
        for attempt in range(attempts):
            try:
                for m in self.members:
                    if not m.running():
                        m.launch()
                for m in self.members:
                    if not m.wait_serving(timeout):
                        raise ServerStartError("ensemble member %s did not start serving\n%s"
                                               % (m.hosts, m.log_tail(20)))
                return self
            except ServerStartError:
                collided = any("Address already in use" in m.log_tail(200) for m in self.members)
                self.close()
                if not collided or attempt == attempts - 1:
                    raise
                print("  port collision while starting %s; retrying with new ports" % self._name)
                extra = {k: v for k, v in self.members[0].extra_cfg.items()
                         if not k.startswith("server.")}
                self.members = self._build(extra)
        return self

    def mode(self, member):
        """'leader', 'follower', ... from srvr's Mode line ('' if it does not answer)."""
        for line in member.four_letter("srvr").splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return ""

    def leader(self):
        for m in self.members:
            if m.running() and self.mode(m) == "leader":
                return m
        return None

    def close(self):
        for m in self.members:
            m.close()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
        return False


def with_admin_ports(ens):
    """`ens` with an AdminServer port chosen for each member (before they are launched)."""
    for m in ens.members:
        m.admin_port = free_port()
    return ens
