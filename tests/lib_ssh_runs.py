"""`seqorch run` over SSH as the SSH tests drive it: a clean environment,
runs in the foreground or the background, polling results.db while it is
written, the `hosts` fixture (sshd servers, their leftover agents killed)
and the checks of the samples a run stored."""
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import SEQORCH, agent_pids, sha3_chain
from lib_common import wait_for  # noqa: F401 (the files here import it)
from sshd import write_hosts_toml

VARIANTS = ("c-fused", "openssl-evp")
# Long enough per sample that a run can be acted on in its middle, even on
# an idle machine: ~0.3 s of CPU per sample here, much more under load.
LONG_STEPS = 300000


def clean_env(tmp_path):
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C"}


def run_args(steps, samples, *extra):
    """All hosts unless extra names its own (an option is given once)."""
    extra = [str(e) for e in extra]
    hosts = [] if "--hosts" in extra else ["--hosts", "all"]
    return [str(SEQORCH), "run", "--study", "sha3", *hosts,
            "--variants", ",".join(VARIANTS), "--steps", str(steps),
            "--samples", str(samples), *extra]


def run(tmp_path, steps, samples, *extra, timeout=600):
    """seqorch run to completion; returns the CompletedProcess."""
    return subprocess.run(run_args(steps, samples, *extra), cwd=tmp_path,
                          env=clean_env(tmp_path), capture_output=True,
                          text=True, timeout=timeout)


def start(tmp_path, steps, samples, *extra):
    """seqorch run in the background (stdout and stderr to files, so a
    long run cannot block on a full pipe)."""
    out = open(tmp_path / "run.out", "w")
    err = open(tmp_path / "run.err", "w")
    try:
        return subprocess.Popen(run_args(steps, samples, *extra),
                                cwd=tmp_path, env=clean_env(tmp_path),
                                stdout=out, stderr=err, text=True)
    finally:
        out.close()
        err.close()


def finish(p, tmp_path, timeout=300):
    """Wait for a background run; returns (exit code, stderr)."""
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail("seqorch run did not finish in time:\n"
                    + (tmp_path / "run.err").read_text())
    return rc, (tmp_path / "run.err").read_text()


def q(db, sql, *args):
    """A query that tolerates a database being written right now (or not
    created yet): [] until the table exists."""
    if not Path(db).exists():
        return []
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise
    finally:
        con.close()


def nsamples(db, host):
    rows = q(db, "SELECT count(*) FROM samples WHERE host = ?", host)
    return rows[0][0] if rows else 0


@pytest.fixture
def hosts(tmp_path, sshd_factory):  # noqa: F811
    """make(*names) -> started Sshd servers.  Agents the runs left
    detached on them (a host whose sshd was stopped keeps its agent
    running) are killed at the end, before the servers stop."""
    made = []

    def make(*names, prebuilt=True):
        servers = [sshd_factory(n, prebuilt=prebuilt) for n in names]
        made.extend(servers)
        return servers

    yield make
    for s in made:
        for pid in agent_pids(s.workdir):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def write_hosts(tmp_path, servers, **extra):
    """hosts.toml for the servers, pinned to CPUs 0 and 1 in turn;
    extra[name] adds keys to that host."""
    write_hosts_toml(tmp_path / "hosts.toml", {
        s.name: s.host_entry(cpu=i % 2, **extra.get(s.name, {}))
        for i, s in enumerate(servers)})


def check_samples(db, host, steps, samples, complete=True):
    """The host's samples are valid, end in hashlib's chain, and hold no
    (variant, build, index) twice; complete: every cell is there."""
    rows = q(db, "SELECT variant, build_id, sample_index, digest, valid, "
             "steps FROM samples WHERE host = ?", host)
    want = sha3_chain(steps)
    for v, b, i, digest, valid, n in rows:
        assert (digest, valid, n) == (want, 1, steps), (host, v, i)
    cells = [(v, b, i) for v, b, i, *_ in rows]
    assert len(cells) == len(set(cells)), f"duplicate samples on {host}"
    if complete:
        builds = {b for _, b, _ in cells}
        assert set(cells) == {(v, b, i) for v in VARIANTS for b in builds
                              for i in range(samples)}, host
    return rows


def finished_samples(workdir):
    """(variant, build id, index) -> ns of every sample record the agents
    wrote in workdir's run directories (complete lines only)."""
    out = {}
    for f in Path(workdir).glob("runs/*/records"):
        for line in f.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue    # a line being written
            if r.get("type") == "sample":
                out[(r["variant"], int(r["build_id"]), r["sample"])] = r["ns"]
    return out


def integrity_ok(db):
    assert q(db, "PRAGMA integrity_check") == [("ok",)]
