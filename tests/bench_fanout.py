#!/usr/bin/env python3
"""make bench, part 2: fan-out of deploy + build to 1, 4 and 16 loopback
hosts (real sshd instances on 127.0.0.X), cold and warm.

Cold: empty work directories, so every host gets the sources uploaded and
builds the agent.  Warm: the same again, so nothing may be uploaded or
built.  Wall times are reported as ratios to the 1-host time of the same
kind, and the coordinator's own CPU time per host (user + system of the
seqorch process) is reported for the warm re-deploy.

The "hosts" are sshd processes on the same cores as the coordinator, so
their work counts in the wall time too.  The CPU time each sshd spends per
connection (read from its listener's reaped children) is reported beside
the coordinator's, with the fan-out ratio that CPU time alone allows on
this machine's cores.  Everything happens on this machine; no address
outside 127.0.0.0/8 is used."""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sshd import Sshd, keygen, write_hosts_toml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEQORCH = ROOT / "seqorch"


def reaped_cpu(servers):
    """CPU seconds of the listeners' finished children (the per-connection
    sshd processes and what they ran)."""
    total = 0
    for s in servers:
        f = Path(f"/proc/{s.proc.pid}/stat").read_text().rsplit(")", 1)
        total += int(f[1].split()[13]) + int(f[1].split()[14])
    return total / os.sysconf("SC_CLK_TCK")


def deploy(cwd, servers):
    """Run seqorch deploy; returns (wall s, coordinator cpu s, table,
    sshd cpu s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sshd0 = reaped_cpu(servers)
    t0 = time.monotonic()
    r = subprocess.run([str(SEQORCH), "deploy", "--hosts", "all"], cwd=cwd,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"seqorch deploy failed:\n{r.stdout}{r.stderr}")
    time.sleep(0.5)  # the listeners reap their children after we return
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                  before.ru_stime)
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    return wall, cpu, rows, reaped_cpu(servers) - sshd0


def main():
    root = Path(tempfile.mkdtemp(prefix="seqorch-fanout-"))
    servers = []
    try:
        key = root / "id_ed25519"
        keygen(key, "seqorch-bench")
        for i in range(16):
            servers.append(Sshd(root, f"h{i:02d}", key).start())
        results = {}
        for n in (1, 4, 16):
            cwd = root / f"n{n}"
            cwd.mkdir()
            for s in servers[:n]:
                shutil.rmtree(s.workdir)
                s.workdir.mkdir()
            write_hosts_toml(cwd / "hosts.toml", {
                s.name: s.host_entry() for s in servers[:n]})
            cold = deploy(cwd, servers[:n])
            # Median of several warm re-deploys: each takes a fraction
            # of a second on a shared machine.
            warms = sorted((deploy(cwd, servers[:n]) for _ in range(5)),
                           key=lambda w: w[0])
            warm = warms[len(warms) // 2]
            for w in warms:
                for _, files, nbytes, builds, *_ in w[2]:
                    if (files, nbytes, builds) != ("0", "0", "0"):
                        sys.exit(f"warm re-deploy uploaded or built: {w[2]}")
            results[n] = (cold, warm)
            print(f"{n:2d} hosts: cold {cold[0]:6.2f} s, warm "
                  f"{warm[0]:5.3f} s, warm cpu per host: coordinator "
                  f"{1000 * warm[1] / n:5.1f} ms, sshd "
                  f"{1000 * warm[3] / n:5.1f} ms", file=sys.stderr)
        c1, w1 = results[1][0][0], results[1][1][0]
        print("deploy + build fan-out over ssh (loopback sshd per host)")
        print(f"{'hosts':>5} {'cold s':>8} {'x 1-host':>8} {'warm s':>8} "
              f"{'x 1-host':>8} {'seqorch cpu/host':>16} "
              f"{'sshd cpu/host':>14}")
        for n, (cold, warm) in results.items():
            print(f"{n:5d} {cold[0]:8.2f} {cold[0] / c1:8.2f} "
                  f"{warm[0]:8.3f} {warm[0] / w1:8.2f} "
                  f"{1000 * warm[1] / n:13.1f} ms "
                  f"{1000 * warm[3] / n:11.1f} ms")
        warm16 = results[16][1]
        ok16 = warm16[0] < 2 * w1
        cpu16 = 1000 * warm16[1] / 16 < 50
        # The 16 sshd processes alone need this much wall time here.
        floor = warm16[3] / (os.cpu_count() or 1)
        print(f"target: warm 16-host < 2x warm 1-host: "
              f"{'met' if ok16 else 'NOT met'}; coordinator cpu per host "
              f"< 50 ms: {'met' if cpu16 else 'NOT met'}")
        print(f"the 16 sshd servers used {warm16[3]:.3f} cpu-s on "
              f"{os.cpu_count()} cores: at least {floor:.3f} s of wall "
              f"time, {floor / w1:.2f}x the 1-host time, whatever the "
              f"coordinator does")
        return 0
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
