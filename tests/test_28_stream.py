"""The stream of a detached agent's records (rscript_stream) on the
measured host: every wait has a deadline, and the non-GNU path (macOS,
BSD tail) runs no process per second but one sleep.  The local host,
with PATH chosen per test; the nohup and tail here are the machine's own,
behind a PATH entry that makes them behave as on macOS."""
import os
import re
import shutil
import subprocess
import time

from conftest import SEQORCH, query, seqorch


def bindir(tmp_path, tools):
    d = tmp_path / "bin"
    d.mkdir()
    for name, body in tools.items():
        (d / name).write_text("#!/bin/sh\n" + body)
        (d / name).chmod(0o755)
    return d


def env_with(d):
    return {"PATH": f"{d}:{os.environ['PATH']}", "HOME": str(d.parent),
            "LANG": "C"}


def test_failed_nohup_start_is_an_error_not_a_hang(scratch, tmp_path):
    """nohup that cannot detach (macOS under some sessions says so and
    exits 1) starts no agent: the run fails within the deadline and says
    the agent did not start, instead of waiting for a pid forever."""
    d = bindir(tmp_path, {"nohup": 'echo "nohup: can\'t detach from '
                          'console: Inappropriate ioctl for device" >&2\n'
                          "exit 1\n"})
    t0 = time.monotonic()
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "100", "--samples", "1", "--variants", "c-fused",
                env=env_with(d), timeout=240)
    took = time.monotonic() - t0
    assert r.returncode != 0
    assert "the agent did not start: no pid file in 30 s" in r.stderr, \
        r.stderr
    assert took < 120, took
    events = [m for m, in query(scratch / "results.db",
                                "SELECT message FROM events")]
    assert any("did not start" in m for m in events), events


def test_non_gnu_stream_forks_nothing_per_second(scratch, tmp_path):
    """A tail that is not GNU's (here the machine's, not saying GNU to
    --version) takes the macOS path: every record arrives, and while the
    agent measures the host sees only the loop's sleep, not wc, tail and
    head each second."""
    strace = shutil.which("strace")
    assert strace, "strace not found: install strace"
    real = shutil.which("tail")
    d = bindir(tmp_path, {"tail": f'[ "$1" = --version ] && exit 1\n'
                          f'exec {real} "$@"\n'})
    log = tmp_path / "exec.log"
    env = env_with(d)
    r = subprocess.run([strace, "-f", "-qq", "-e", "trace=execve", "-o",
                        str(log), str(SEQORCH), "run", "--study", "sha3",
                        "--hosts", "local", "--steps", "3000000",
                        "--samples", "3", "--variants", "c-fused"],
                       cwd=scratch, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    n, = query(scratch / "results.db",
               "SELECT count(*) FROM samples WHERE variant = 'c-fused'")[0]
    assert n == 3
    execs = [m.group(1) for m in re.finditer(
        r'execve\("[^"]*/([^"/]+)"', log.read_text())]
    assert "wc" not in execs and "head" not in execs, sorted(set(execs))
    # The stream's tail -f started once (not once a second).
    assert execs.count("tail") <= 4, execs.count("tail")
