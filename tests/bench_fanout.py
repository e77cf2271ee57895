#!/usr/bin/env python3
"""make bench, part 2: fan-out of deploy + build to 1, 4 and 16 loopback
hosts (real sshd instances on 127.0.0.X), cold and warm.

Cold: empty work directories, so every host gets the sources uploaded and
builds the agent.  Warm: the same again, so nothing may be uploaded or
built.  Wall times are reported as ratios to the 1-host time of the same
kind, and the coordinator's own CPU time per host (user + system of the
seqorch process) is reported for the warm re-deploy.  Everything happens
on this machine; no address outside 127.0.0.0/8 is used."""
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


def deploy(cwd):
    """Run seqorch deploy; returns (wall s, coordinator cpu s, table)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run([str(SEQORCH), "deploy", "--hosts", "all"], cwd=cwd,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"seqorch deploy failed:\n{r.stdout}{r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                  before.ru_stime)
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    return wall, cpu, rows


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
            cold = deploy(cwd)
            warm = deploy(cwd)
            for _, files, nbytes, builds, *_ in warm[2]:
                if (files, nbytes, builds) != ("0", "0", "0"):
                    sys.exit(f"warm re-deploy uploaded or built: {warm[2]}")
            results[n] = (cold, warm)
            print(f"{n:2d} hosts: cold {cold[0]:6.2f} s, warm "
                  f"{warm[0]:5.2f} s, warm coordinator cpu "
                  f"{1000 * warm[1] / n:5.1f} ms/host", file=sys.stderr)
        c1, w1 = results[1][0][0], results[1][1][0]
        print("deploy + build fan-out over ssh (loopback sshd per host)")
        print(f"{'hosts':>5} {'cold s':>8} {'x 1-host':>8} {'warm s':>8} "
              f"{'x 1-host':>8} {'warm cpu/host':>14}")
        for n, (cold, warm) in results.items():
            print(f"{n:5d} {cold[0]:8.2f} {cold[0] / c1:8.2f} "
                  f"{warm[0]:8.3f} {warm[0] / w1:8.2f} "
                  f"{1000 * warm[1] / n:11.1f} ms")
        ok16 = results[16][1][0] < 2 * w1
        cpu16 = 1000 * results[16][1][1] / 16 < 50
        print(f"target: warm 16-host < 2x warm 1-host: "
              f"{'met' if ok16 else 'NOT met'}; coordinator cpu per host "
              f"< 50 ms: {'met' if cpu16 else 'NOT met'}")
        return 0
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
