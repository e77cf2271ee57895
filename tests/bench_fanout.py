#!/usr/bin/env python3
"""make bench, part 2: fan-out of deploy + build to 1, 4, 16 and 64
loopback hosts (real sshd instances on 127.0.0.X), measured against its
floor.

The "hosts" are sshd processes on the same cores as the coordinator, and
every connection costs sshd CPU time of its own (key exchange, host key
signature, public key check, the SFTP server and the commands it runs).
That CPU time divided by the cores is the least wall time any coordinator
could take here: the floor.  For each host count this prints the warm
re-deploy's wall time (median of five), the floor measured in the same
deploys, their ratio, the coordinator's own CPU time per host, and the
cold deploy (upload and build) per host up to 16 hosts; then deploys
through one jump host.

Targets (issue 14): wall time at most 1.3x the floor at 16 and 64 hosts,
and at most 10 ms of coordinator CPU per host.

Everything happens on this machine; no address outside 127.0.0.0/8 is
used."""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sshd import Sshd, keygen, test_user, write_hosts_toml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEQORCH = ROOT / "seqorch"
COUNTS = (1, 4, 16, 64)
COLD_MAX = 16  # host counts above this are not deployed cold
WARM_RUNS = 5
TARGET_RATIO = 1.3
TARGET_CPU_MS = 10.0


class SshdCpu:
    """CPU seconds of every sshd process and of all they start.

    The servers are put in a cgroup of their own (cgroup v1 cpuacct or
    v2, needs root): what a process in it forks stays in it, whoever
    reaps it.  Without one, the listeners' own and reaped children's
    times from /proc, which count a process only when its parent reaps
    it and that parent is itself reaped below the listener: side by side
    with the cgroup it fell 20-60% short, and varied from one deploy to
    the next."""

    def __init__(self, servers):
        self.servers, self.path, self.how = servers, None, "reaped children"
        name = f"seqorch-bench-{os.getpid()}"
        for base, usage in (("/sys/fs/cgroup/cpuacct", "cpuacct.usage"),
                            ("/sys/fs/cgroup/unified", "cpu.stat"),
                            ("/sys/fs/cgroup", "cpu.stat")):
            d = Path(base) / name
            try:
                d.mkdir()
            except OSError:
                continue
            try:
                for srv in servers:
                    (d / "cgroup.procs").write_text(f"{srv.proc.pid}\n")
                (d / usage).read_text()
            except OSError:
                self._remove(d)
                continue
            self.path, self.usage = d, d / usage
            self.how = f"cgroup {d}"
            break

    def seconds(self):
        if self.path is None:
            total = 0
            for srv in self.servers:
                f = Path(f"/proc/{srv.proc.pid}/stat").read_text()
                f = f.rsplit(")", 1)[1].split()
                total += sum(map(int, f[11:15]))
            return total / os.sysconf("SC_CLK_TCK")
        text = self.usage.read_text()
        if self.usage.name == "cpuacct.usage":
            return int(text) / 1e9
        return int(text.split("usage_usec")[1].split()[0]) / 1e6

    @staticmethod
    def _remove(d):
        # Processes still in it go back to the root group first.
        try:
            for pid in (d / "cgroup.procs").read_text().split():
                (d.parent / "cgroup.procs").write_text(pid + "\n")
            d.rmdir()
        except OSError:
            pass

    def close(self):
        if self.path is not None:
            self._remove(self.path)


def deploy(cwd, servers, n, cpu_of):
    """seqorch deploy of every host in cwd's hosts.toml, all at once.
    Returns (wall s, coordinator cpu s, table rows, sshd cpu s), the
    servers' CPU time read with cpu_of (an SshdCpu)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sshd0 = cpu_of.seconds()
    t0 = time.monotonic()
    r = subprocess.run([str(SEQORCH), "deploy", "--hosts", "all",
                        "--parallel", str(n)], cwd=cwd,
                       capture_output=True, text=True,
                       env={"PATH": os.environ["PATH"], "HOME": str(cwd),
                            "LANG": "C"})
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"seqorch deploy failed:\n{r.stdout}{r.stderr}")
    # Every connection's processes are gone before the count is read (the
    # /proc count has them only once their listener reaped them).
    reaped_by = time.monotonic() + 10
    while any(Path(f"/proc/{s.proc.pid}/task/{s.proc.pid}/children")
              .read_text().strip() for s in servers):
        if time.monotonic() > reaped_by:
            sys.exit("sshd listeners still have children 10 s after the "
                     "deploy")
        time.sleep(0.02)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                  before.ru_stime)
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    return wall, cpu, rows, cpu_of.seconds() - sshd0


def warm_median(cwd, servers, n, cpu_of):
    """Median (by wall time) of WARM_RUNS warm re-deploys, each checked
    to upload and build nothing."""
    runs = sorted((deploy(cwd, servers, n, cpu_of) for _ in
                   range(WARM_RUNS)),
                  key=lambda w: w[0])
    for w in runs:
        for _, files, nbytes, builds, *_ in w[2]:
            if (files, nbytes, builds) != ("0", "0", "0"):
                sys.exit(f"warm re-deploy uploaded or built: {w[2]}")
    return runs[len(runs) // 2]


def give_back(path):
    """The servers log in TEST_USER when this runs as root: what the
    bench makes in a work directory must be that user's."""
    _, uid, gid = test_user()
    for d, _, files in os.walk(path):
        os.chown(d, uid, gid)
        for f in files:
            os.chown(os.path.join(d, f), uid, gid, follow_symlinks=False)


def fresh(servers):
    for s in servers:
        shutil.rmtree(s.workdir)
        s.workdir.mkdir()
        give_back(s.workdir)


def main():
    root = Path(tempfile.mkdtemp(prefix="seqorch-fanout-"))
    root.chmod(0o755)  # the servers' test user must reach its keys
    cores = os.cpu_count() or 1
    servers, jump, cpu_of = [], None, None
    try:
        key = root / "id_ed25519"
        keygen(key, "seqorch-bench")
        for i in range(max(COUNTS)):
            servers.append(Sshd(root, f"h{i:02d}", key).start())
        jump = Sshd(root, "jump", key, forwarding=True).start()
        cpu_of = SshdCpu(servers + [jump])
        results = {}
        for n in COUNTS:
            cwd = root / f"n{n}"
            cwd.mkdir()
            write_hosts_toml(cwd / "hosts.toml", {
                s.name: s.host_entry() for s in servers[:n]})
            if n <= COLD_MAX:
                fresh(servers[:n])
                cold = deploy(cwd, servers[:n], n, cpu_of)
            else:
                # 64 cold builds take minutes on two cores: the work
                # directories are copies of a deployed one instead, and
                # the warm re-deploy checks that nothing is missing.
                cold = None
                for s in servers[COLD_MAX:n]:
                    shutil.rmtree(s.workdir)
                    shutil.copytree(servers[0].workdir, s.workdir,
                                    symlinks=True)
                    give_back(s.workdir)
            warm = warm_median(cwd, servers[:n], n, cpu_of)
            results[n] = (cold, warm)
            print(f"{n:2d} hosts: warm {warm[0]:5.3f} s, floor "
                  f"{warm[3] / cores:5.3f} s", file=sys.stderr)
        # Through one jump host: every session crosses the jump's sshd,
        # whose CPU time counts in the floor too.  The jump is given as
        # user@address:port and trusted in each host's known_hosts.
        jumped = {}
        spec = f"{jump.user}@{jump.address}:{jump.port}"
        for s in servers:
            with open(s.known_hosts, "a") as f:
                f.write(jump.known_hosts.read_text())
        for n in (1, 16):
            cwd = root / f"jump{n}"
            cwd.mkdir()
            fresh(servers[:n])
            write_hosts_toml(cwd / "hosts.toml", {
                s.name: s.host_entry(proxy_jump=spec) for s in servers[:n]})
            cold = deploy(cwd, servers[:n] + [jump], n, cpu_of)
            warm = warm_median(cwd, servers[:n] + [jump], n, cpu_of)
            jumped[n] = (cold, warm)

        load = os.getloadavg()
        print("deploy fan-out over ssh, loopback sshd per host, "
              f"{cores} cores shared by coordinator and servers (load "
              f"average at the end {load[0]:.1f} / {load[1]:.1f} / "
              f"{load[2]:.1f}: other work on the machine inflates the wall "
              f"times, not the floor; sshd CPU from the {cpu_of.how})")
        print(f"{'hosts':>5} {'warm s':>8} {'floor s':>8} {'ratio':>6} "
              f"{'coord cpu/host':>15} {'sshd cpu/host':>14} "
              f"{'cold s/host':>12}")
        for n, (cold, warm) in results.items():
            floor = warm[3] / cores
            print(f"{n:5d} {warm[0]:8.3f} {floor:8.3f} "
                  f"{warm[0] / floor:6.2f} {1000 * warm[1] / n:12.1f} ms "
                  f"{1000 * warm[3] / n:11.1f} ms "
                  + (f"{cold[0] / n:12.3f}" if cold else f"{'-':>12}"))
        for n, (cold, warm) in jumped.items():
            floor = warm[3] / cores
            print(f"through one jump host, {n:2d} host{'s' if n > 1 else ' '}: "
                  f"warm {warm[0]:.3f} s (floor {floor:.3f} s, ratio "
                  f"{warm[0] / floor:.2f}), coordinator cpu "
                  f"{1000 * warm[1] / n:.1f} ms/host, cold "
                  f"{cold[0] / n:.3f} s/host")
        for n in (16, 64):
            cold, warm = results[n]
            ratio = warm[0] / (warm[3] / cores)
            cpu = 1000 * warm[1] / n
            print(f"target at {n} hosts: wall <= {TARGET_RATIO}x floor: "
                  f"{'met' if ratio <= TARGET_RATIO else 'NOT met'} "
                  f"({ratio:.2f}x); coordinator cpu per host <= "
                  f"{TARGET_CPU_MS:.0f} ms: "
                  f"{'met' if cpu <= TARGET_CPU_MS else 'NOT met'} "
                  f"({cpu:.1f} ms)")
        return 0
    finally:
        if cpu_of is not None:
            cpu_of.close()
        for s in servers:
            s.stop()
        if jump is not None:
            jump.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
