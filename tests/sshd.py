"""Real sshd instances on loopback addresses for the SSH integration tests.

Each Sshd runs Debian's /usr/sbin/sshd in the foreground on its own
127.0.0.X address and port, with its own ed25519 host key, an authorized
ed25519 user key, a work directory and a known_hosts file that trusts it.
Nothing here ever listens on or connects to an address outside 127.0.0.0/8.

Use the `sshd_factory` fixture: every server it started is stopped when the
test ends, whether it passed or not.

Run as root (as CI does), the servers log in a dedicated user, TEST_USER,
whose login shell is /bin/sh: the tests never run root's dotfiles (a
.bashrc that runs `pyenv init` costs 150 ms a command and hangs for 60 s
when logins race).  The user is created here if `make deps` has not made
it, and the servers' directories live outside pytest's root-only tmp_path
so that it can reach them.
"""
import fcntl
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import seed_build

SSHD = "/usr/sbin/sshd"
KEYGEN = "ssh-keygen"
TEST_USER = "seqorch-test"
TEST_HOME = "/var/lib/seqorch-test"
# A chroot host's root inside its sshd's mount namespace.
CHROOT_MOUNT = Path("/mnt/root")


def test_user():
    """(name, uid, gid) the servers log in: TEST_USER when running as root
    (created on first use), else whoever runs the tests."""
    if os.geteuid() != 0:
        pw = pwd.getpwuid(os.geteuid())
        return pw.pw_name, pw.pw_uid, pw.pw_gid
    try:
        pw = pwd.getpwnam(TEST_USER)
    except KeyError:
        # Sessions and xdist workers may race here: one adds the user under
        # the lock, the others find it made.  The password "*" matches
        # nothing, yet, unlike useradd's "!", does not lock the account
        # (sshd refuses locked accounts any key).
        with open(Path(tempfile.gettempdir()) / "seqorch-test-user.lock",
                  "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                pw = pwd.getpwnam(TEST_USER)
            except KeyError:
                subprocess.run(["useradd", "--system", "--create-home",
                                "--home-dir", TEST_HOME, "--shell", "/bin/sh",
                                "--password", "*", TEST_USER],
                               capture_output=True)
                pw = pwd.getpwnam(TEST_USER)
    return pw.pw_name, pw.pw_uid, pw.pw_gid


def keygen(path, comment="seqorch-test", kind="ed25519"):
    """A new unencrypted key pair (ed25519 unless kind says otherwise) at
    path and path.pub; returns the base64 public key."""
    for p in (path, Path(str(path) + ".pub")):
        if p.exists():
            p.unlink()
    subprocess.run([KEYGEN, "-q", "-t", kind, "-N", "", "-C", comment,
                    "-f", str(path)], check=True)
    return Path(str(path) + ".pub").read_text().split()[1]


def fingerprint(pubfile):
    """OpenSSH's SHA256 fingerprint of a public key file."""
    out = subprocess.run([KEYGEN, "-l", "-E", "sha256", "-f", str(pubfile)],
                         check=True, capture_output=True, text=True).stdout
    return out.split()[1]


def descendants(pid):
    """Every process below pid, from /proc."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def worker_addresses():
    """The 127.0.0.X this process may use.  Under pytest-xdist each worker
    (PYTEST_XDIST_WORKER gwN of PYTEST_XDIST_WORKER_COUNT) gets its own
    slice of 2..254, so that no two workers ever share an address: a
    "dead" port one test picked cannot become another worker's sshd."""
    hosts = list(range(2, 255))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if worker.startswith("gw") and count > 1:
        hosts = hosts[int(worker[2:]) % count::count]
    return [f"127.0.0.{x}" for x in hosts]


_addresses = worker_addresses()
_used = set()


def free_endpoint():
    """An (address, port) of this worker that we can bind now, on an
    address no other server of this session has had while there are
    unused ones left (servers stop at the end of their test)."""
    for _ in range(200):
        fresh = [a for a in _addresses if a not in _used]
        if not fresh:
            _used.clear()
            fresh = _addresses
        addr = random.choice(fresh)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((addr, 0))
            port = s.getsockname()[1]
        except OSError:
            continue
        finally:
            s.close()
        _used.add(addr)
        return addr, port
    raise RuntimeError("no free loopback address")


class Sshd:
    """One sshd.  dir holds its config, keys, log and work directory.
    key_types are its host key types, the first one being the main one.

    For jump host tests: forwarding allows direct-tcpip channels (and
    logs them); netns runs the sshd inside that network namespace, so
    that only hosts in it reach it.  A bridge (netns and bridge=True)
    listens in the test's own namespace but serves each connection with
    `sshd -i` inside netns: a jump host that the coordinator reaches and
    whose forwarded connections land inside the namespace.

    chroot (a root filesystem, tests/arm64.py's) logs users into a copy of
    it: sshd runs in a private mount namespace where an overlay of the
    rootfs (its changes kept in dir/upper, the rootfs untouched) is mounted
    under a root-owned tmpfs on /mnt, sshd's ChrootDirectory, with /proc,
    /sys and /dev in it.  sshd refuses a ChrootDirectory any of whose
    parents is writable by others, as /tmp is; nothing of this is seen
    outside the namespace.  The user's home exists in it, and the host's
    workdir is HOME/work inside it."""

    def __init__(self, root, name, user_key, password_only=False,
                 key_types=("ed25519",), sftp=True, forwarding=False,
                 netns=None, bridge=False, chroot=None, agent_build=None):
        self.name = name
        self.chroot = chroot
        self.forwarding = forwarding
        self.netns = netns
        self.bridge = bridge
        self.listener = None
        self.children = []
        self.dir = Path(root) / f"sshd-{name}"
        self.dir.mkdir(parents=True)
        self.address, self.port = free_endpoint()
        self.user, uid, gid = test_user()
        self.user_key = user_key
        self.password_only = password_only
        self.sftp = sftp
        self.workdir = self.dir / "work"
        self.workdir.mkdir()
        # The user writes its work directory and may write beside it.
        for d in (self.dir, self.workdir):
            os.chown(d, uid, gid)
            d.chmod(0o755)
        self.host_keys = {t: self.dir / f"host_{t}" for t in key_types}
        self.host_key = self.host_keys[key_types[0]]
        self.known_hosts = self.dir / "known_hosts"
        self.log = self.dir / "sshd.log"
        self.proc = None
        for t, path in self.host_keys.items():
            keygen(path, f"host-{name}", kind=t)
        if agent_build is not None and chroot is None:
            seed_build(self.workdir, agent_build, (uid, gid))
        self.trust()
        self._write_config()

    @property
    def known_name(self):
        return f"[{self.address}]:{self.port}"

    @property
    def host_fingerprint(self):
        return fingerprint(str(self.host_key) + ".pub")

    def trust(self, *types):
        """Make known_hosts hold exactly this server's current host keys of
        these types (default: the main one)."""
        lines = []
        for t in types or [next(iter(self.host_keys))]:
            key = Path(str(self.host_keys[t]) + ".pub").read_text().split()
            lines.append(f"{self.known_name} {key[0]} {key[1]}\n")
        self.known_hosts.write_text("".join(lines))

    def forget(self):
        """An empty known_hosts: the host key is unknown."""
        self.known_hosts.write_text("")

    def key_fingerprint(self, kind):
        return fingerprint(str(self.host_keys[kind]) + ".pub")

    def regenerate_host_key(self):
        """A new main host key (needs a restart to take effect)."""
        keygen(self.host_key, f"host-{self.name}-new",
               kind=next(iter(self.host_keys)))

    def authorize(self, key):
        """Also accept the user key pair at key (key.pub)."""
        with open(self.dir / "authorized_keys", "a") as f:
            f.write(Path(str(key) + ".pub").read_text())

    def _write_config(self):
        auth = self.dir / "authorized_keys"
        auth.write_text(Path(str(self.user_key) + ".pub").read_text())
        auth.chmod(0o644)	# sshd reads it as the user
        if self.password_only:
            methods = ("PubkeyAuthentication no\n"
                       "PasswordAuthentication yes\n"
                       "PermitRootLogin yes\n")
        else:
            methods = ("PubkeyAuthentication yes\n"
                       "PasswordAuthentication no\n"
                       "PermitRootLogin prohibit-password\n")
        (self.dir / "sshd_config").write_text(
            f"ListenAddress {self.address}:{self.port}\n"
            + "".join(f"HostKey {k}\n" for k in self.host_keys.values()) +
            f"PidFile {self.dir / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {auth}\n"
            + methods +
            "KbdInteractiveAuthentication no\n"
            "UsePAM no\n"
            "StrictModes no\n"
            + ("Subsystem sftp internal-sftp\n" if self.sftp else "")
            + ("LogLevel DEBUG1\nAllowTcpForwarding yes\n"
               if self.forwarding else
               "LogLevel VERBOSE\nAllowTcpForwarding no\n") +
            (f"ChrootDirectory {CHROOT_MOUNT}\n" if self.chroot else "") +
            "MaxStartups 100\n"
            "MaxSessions 100\n"
            "X11Forwarding no\n"
            "PrintMotd no\n")

    def _command(self, *args):
        cmd = [SSHD, *args, "-e", "-f", str(self.dir / "sshd_config")]
        if self.chroot:
            return self._chroot_command(cmd)
        return ["ip", "netns", "exec", self.netns, *cmd] if self.netns \
            else cmd

    def _chroot_command(self, cmd):
        """cmd run in a private mount namespace in which CHROOT_MOUNT is
        the overlay of self.chroot (see the class)."""
        _, uid, gid = test_user()
        home = pwd.getpwuid(uid).pw_dir
        upper, work = self.dir / "upper", self.dir / "overlay-work"
        for d in (upper, work):
            d.mkdir(exist_ok=True)
        r = CHROOT_MOUNT
        script = (
            "set -e; mount -t tmpfs -o mode=755 seqorch-chroot /mnt; "
            f"mkdir {r}; mount -t overlay overlay -o lowerdir={self.chroot},"
            f"upperdir={upper},workdir={work} {r}; "
            f"mount -t proc proc {r}/proc; mount --rbind /sys {r}/sys; "
            f"mount --rbind /dev {r}/dev; "
            f"mkdir -p {r}{home}/work; "
            f"chown {uid}:{gid} {r}{home} {r}{home}/work; "
            'exec "$@"')
        return ["unshare", "--mount", "--propagation", "private", "--",
                "sh", "-c", script, "sh", *cmd]

    def _serve_bridge(self, listener):
        """Accept in this namespace; serve each with sshd -i in netns."""
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # stop() closed the listener
            with open(self.log, "a") as log:
                child = subprocess.Popen(
                    self._command("-i"), stdin=conn, stdout=conn,
                    stderr=log, start_new_session=True)
            conn.close()
            self.children.append(child)

    def start(self, timeout=10):
        """Start sshd and wait until it listens."""
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.log.write_text("")
        if self.bridge:
            self.listener = socket.socket()
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,
                                     1)
            self.listener.bind((self.address, self.port))
            self.listener.listen(64)
            threading.Thread(target=self._serve_bridge,
                             args=(self.listener,), daemon=True).start()
            return self
        log = open(self.log, "a")
        self.proc = subprocess.Popen(
            self._command("-D"),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "Server listening on" in self.log.read_text():
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"sshd {self.name} did not start:\n"
                           + self.log.read_text())

    def sessions(self):
        """Pids of the processes serving connections (sshd puts each in
        its own session, so the listener's process group misses them)."""
        if self.bridge:
            live = [c.pid for c in self.children if c.poll() is None]
            return live + [d for pid in live for d in descendants(pid)]
        if self.proc is None:
            return []
        return descendants(self.proc.pid)

    def session_commands(self):
        """{pid: command name} of the processes below the listener."""
        out = {}
        for pid in self.sessions():
            try:
                out[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                pass  # it ended meanwhile
        return out

    def freeze(self):
        """Stop the sshd processes serving connections (not the commands
        they run): the host no longer answers, yet its kernel still does
        TCP.  Returns the pids, for thaw()."""
        pids = [p for p, name in self.session_commands().items()
                if name == "sshd"]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        return pids

    def thaw(self, pids):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def kill_sessions(self):
        """Drop every open connection; the listener keeps running."""
        for pid in self.sessions():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self):
        """Stop the server and every session process it forked."""
        if self.bridge:
            if self.listener is not None:
                try:
                    self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept
                except OSError:
                    pass
                self.listener.close()
                self.listener = None
            self.kill_sessions()
            for c in self.children:
                c.wait()
            self.children = []
            return
        if self.proc is None:
            return
        self.kill_sessions()
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def host_entry(self, **extra):
        """The values of this server's [hosts.NAME] table."""
        entry = {
            "address": self.address,
            "port": self.port,
            "user": self.user,
            "identity": str(self.user_key),
            "known_hosts": str(self.known_hosts),
            "workdir": (pwd.getpwnam(self.user).pw_dir + "/work"
                        if self.chroot else str(self.workdir)),
            "connect_timeout": 5,
        }
        entry.update(extra)
        return entry


def toml_value(v):
    """A TOML value; JSON string escapes are valid in TOML basic strings."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def write_hosts_toml(path, hosts):
    """Write hosts.toml for {name: {key: value}} (Sshd.host_entry())."""
    lines = []
    for name, entry in hosts.items():
        lines.append(f"[hosts.{name}]")
        for k, v in entry.items():
            if v is not None:
                lines.append(f"{k} = {toml_value(v)}")
        lines.append("")
    Path(path).write_text("\n".join(lines))
    return Path(path)


@pytest.fixture
def user_key(tmp_path):
    """An ed25519 key pair authorized on every server of the test."""
    path = tmp_path / "id_ed25519"
    keygen(path, "seqorch-user")
    return path


@pytest.fixture
def sshd_factory(tmp_path, user_key, agent_build):
    """make(name, password_only=False) -> a started Sshd; all are stopped
    and their directories removed at teardown, also when the test failed.
    They live in a directory of their own that TEST_USER can reach.
    Each workdir starts with the session's agent build (conftest's
    agent_build), so that only the builds a test is about, another
    compiler, flags or wrapper, compile on its hosts; prebuilt=False
    leaves the workdir empty, for a test of the default build itself."""
    servers = []
    base = Path(tempfile.mkdtemp(prefix="seqorch-sshd-"))
    base.chmod(0o755)

    def make(name, password_only=False, start=True, key_types=("ed25519",),
             sftp=True, prebuilt=True, **kw):
        s = Sshd(base, name, user_key, password_only=password_only,
                 key_types=key_types, sftp=sftp,
                 agent_build=agent_build if prebuilt else None, **kw)
        servers.append(s)
        return s.start() if start else s

    yield make
    for s in servers:
        s.stop()
    shutil.rmtree(base, ignore_errors=True)
