"""The fault suite (issue 10): runs on loopback sshd hosts and on the local
host, a fault in each case, and after every case the same checks of
results.db: PRAGMA integrity_check is ok, no sample is stored twice, and
every sample the agent finished (its own records file on the host, where
the coordinator did not get to read and remove it) is stored with the
agent's own numbers or reported as lost, with the reason, in the host's
error, an event or the coordinator's stderr.

Faults: sshd killed, stopped (SIGSTOP) or blackholed (a listener that
accepts and never answers) during the build, while the agent waits for the
host lock after its self-tests, and mid-window; the agent killed
mid-sample; the coordinator SIGKILLed mid-window, then --resume (results.db
locked while the resume stores what it left); results.db locked past the
busy timeout and released (the run waits and stores everything; past the
lease expiry, a second run does not take its window, its holder on this
machine or on another), or past
--db-wait (with Ctrl-C meanwhile too), then --resume; the disk
full, the database's and the host's (mid-window, or before the launch); raw output the artifact store cannot
take; a read-only database; a host whose clock jumps by hours mid-window, forward or back,
the wall clock only or the monotonic clocks too (libfaketime preloaded by
the test sshd); a host whose digest disagrees, built with the test-only
flag that breaks kernels/sha3/c-fused after N steps (docs/reliability.md,
"Test-only faults")."""
import errno
import fcntl
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import (SEQORCH, agent_pids, locked, seed_build, seqorch,
                      session_root, sha3_chain)
import sshd
from sshd import sshd_factory, user_key  # noqa: F401
from lib_common import OTHER_MACHINE, faketime_lib
from lib_fakecc import FAKE_CC
from lib_ssh_runs import hosts  # noqa: F401 (a fixture)
from lib_ssh_runs import (LONG_STEPS, VARIANTS, clean_env, finish,
                          finished_samples, nsamples, q, start, wait_for,
                          write_hosts)


def check_db(db, workdir, host, stderr, steps, bad_variant=None):
    """The checks made after every case.  Samples of bad_variant must be
    stored invalid, as digest mismatches; every other one valid, ending in
    hashlib's chain."""
    assert q(db, "PRAGMA integrity_check") == [("ok",)]
    rows = q(db, "SELECT variant, build_id, sample_index, ns, digest, valid "
             "FROM samples WHERE host = ?", host)
    cells = [(v, b, i) for v, b, i, *_ in rows]
    assert len(cells) == len(set(cells)), "a sample stored twice"
    for v, *_, digest, valid in rows:
        if v == bad_variant:
            assert digest != sha3_chain(steps) and valid == 0
        else:
            assert digest == sha3_chain(steps) and valid == 1
    stored = {(v, b, i): ns for v, b, i, ns, *_ in rows}
    finished = finished_samples(workdir)
    for cell, ns in finished.items():
        if cell in stored:
            assert stored[cell] == ns, cell     # the agent's own numbers
    lost = set(finished) - set(stored)
    if lost:
        said = [m for m, in q(db, "SELECT message FROM events WHERE "
                              "host = ?", host)]
        said += [e for e, in q(db, "SELECT error FROM run_hosts WHERE "
                               "host = ? AND error IS NOT NULL", host)]
        said.append(stderr)
        assert any("lost" in m or "`seqorch run --resume" in m
                   for m in said), (lost, said)
    return rows


class Blackhole:
    """A listener on (address, port) that accepts and never answers."""

    def __init__(self, address, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((address, port))
        self.sock.listen(16)
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


def sshd_pids(s):
    """The listener and the sshd processes serving sessions (not the
    commands they run)."""
    return [s.proc.pid] + [p for p, n in s.session_commands().items()
                           if n == "sshd"]


def hold_host_lock(s):
    """Take the agents' host lock in s's workdir, as another coordinator's
    agent would; returns the open file (closing it releases the lock)."""
    path = s.workdir / "window.lock"
    f = open(path, "a+")
    _, uid, gid = sshd.test_user()
    os.chown(path, uid, gid)
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write("a test holding the host lock\n")
    f.flush()
    return f


@pytest.mark.parametrize("phase", ["build", "lockwait", "window"])
@pytest.mark.parametrize("fault", ["kill", "sigstop", "blackhole"])
def test_sshd_fault(tmp_path, hosts, fault, phase):
    s, = hosts("victim")
    extra = {"connect_timeout": 2}
    if phase == "build":
        extra["build_wrapper"] = "sleep 30 &&"
    write_hosts(tmp_path, [s], victim=extra)
    steps, samples = LONG_STEPS, 6
    db = tmp_path / "results.db"
    lock = hold_host_lock(s) if phase == "lockwait" else None
    p = start(tmp_path, steps, samples)
    stopped, hole = [], None
    try:
        if phase == "build":
            wait_for(lambda: "sleep" in s.session_commands().values(),
                     "the build", p, tmp_path)
        elif phase == "lockwait":
            wait_for(lambda: q(db, "SELECT 1 FROM events WHERE message "
                               "LIKE 'waiting for the host lock%'"),
                     "the agent to wait for the host lock", p, tmp_path)
        else:
            wait_for(lambda: nsamples(db, "victim") > 0,
                     "samples from the victim", p, tmp_path)
        if fault == "kill":
            s.stop()
        elif fault == "sigstop":
            stopped = sshd_pids(s)
            for pid in stopped:
                os.kill(pid, signal.SIGSTOP)
        else:
            addr, port = s.address, s.port
            s.stop()
            hole = Blackhole(addr, port)
        if lock is not None:
            lock.close()    # the orphaned agent goes on measuring
            lock = None
        rc, err = finish(p, tmp_path, timeout=400)
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if hole is not None:
            hole.close()
        if lock is not None:
            lock.close()
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 1, err
    assert q(db, "SELECT status FROM run_hosts") == [("failed",)]
    (error,), = q(db, "SELECT error FROM run_hosts")
    assert 'host "victim"' in error or "agent (cc)" in error, error
    assert q(db, "SELECT count(*) FROM leases") == [(0,)]
    rows = check_db(db, s.workdir, "victim", err, steps)
    if phase != "window":
        assert rows == []


@pytest.fixture(autouse=True)
def local_build(tmp_path, agent_build):
    """The local cases' workdir (local_hosts) starts with a copy of the
    session's agent build: their faults hit the run, not the build."""
    seed_build(tmp_path / "work", agent_build)


def local_hosts(tmp_path):
    workdir = tmp_path / "work"
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\n')
    return workdir


RUN = [str(SEQORCH), "run", "--study", "sha3", "--hosts", "local",
       "--variants", ",".join(VARIANTS), "--steps", str(LONG_STEPS)]


def start_local(tmp_path, samples, db="results.db", *args, wrap=()):
    """A local run, under the command wrap (unshare ...) if given."""
    out = open(tmp_path / "run.out", "w")
    err = open(tmp_path / "run.err", "w")
    try:
        return subprocess.Popen([*wrap, *RUN, "--samples", str(samples),
                                 "--db", str(db), *args], cwd=tmp_path,
                                stdout=out, stderr=err)
    finally:
        out.close()
        err.close()


def fault_mid_run(tmp_path, samples, fault, db="results.db", *args,
                  wrap=()):
    """A local run (start_local's arguments) in which fault(p) is done once
    its first sample is stored; its exit status and stderr."""
    p = start_local(tmp_path, samples, db, *args, wrap=wrap)
    try:
        wait_for(lambda: nsamples(tmp_path / db, "local") > 0, "samples",
                 p, tmp_path)
        fault(p)
        return finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_agent_killed_mid_sample(tmp_path):
    workdir = local_hosts(tmp_path)
    db = tmp_path / "results.db"
    def kill(p):
        for pid in agent_pids(workdir):
            os.kill(pid, signal.SIGKILL)
    rc, err = fault_mid_run(tmp_path, 8, kill)
    assert rc == 1, err
    (error,), = q(db, "SELECT error FROM run_hosts")
    assert error == "agent (cc) died of signal 9 before its done record"
    rows = check_db(db, workdir, "local", err, LONG_STEPS)
    assert 0 < len(rows) < 16


# The local host's agent, built through FAKE_CC, holds back its records
# after its GATE_AFTER-th sample until the file `go` exists beside
# hosts.toml ($SEQORCH_GATE, from the run's environment): the coordinator
# is killed while that agent runs, at a known point and without timing.
# Every record also goes to `seen`, which outlives the run directory a
# resume removes.
GATE_AFTER = 2
GATED = ('[ -n "$out" ] || exec "$0.real" "$@"\n'
         '"$0.real" "$@" | while IFS= read -r l; do\n'
         '    printf \'%%s\\n\' "$l" >> "$out"\n'
         '    printf \'%%s\\n\' "$l" >> "$SEQORCH_GATE/seen"\n'
         '    case $l in *\'"type":"sample"\'*) n=$((${n:-0} + 1))\n'
         '        [ $n = %(after)d ] &&\n'
         '            while [ ! -e "$SEQORCH_GATE/go" ]; do sleep 0.1; done\n'
         '    ;; esac\n'
         'done')


@pytest.fixture(scope="session")
def gated(tmp_path_factory, built):
    """(cc, its agent build): the gated agent built once per session by
    the first worker that needs it, while the others wait; the tests run
    a copy of the build, so their faults hit runs, not builds."""
    root = session_root(tmp_path_factory)
    d = root / "gated"
    with locked(root / "gated.lock"):
        if not (d / "built").exists():
            d.mkdir(exist_ok=True)
            cc = d / "cc"
            cc.write_text(FAKE_CC % (GATED % {"after": GATE_AFTER}))
            cc.chmod(0o755)
            (d / "hosts.toml").write_text(
                f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
                f'workdir = "{d / "work"}"\ncc = "{cc}"\n')
            r = seqorch(d, "deploy", "--hosts", "local")
            assert r.returncode == 0, r.stdout + r.stderr
            (d / "built").touch()
    build, = (d / "work" / "build").iterdir()
    return d / "cc", build


def gated_host(tmp_path, gated):
    """hosts.toml for the local host with the gated agent, built already;
    its workdir."""
    cc, build = gated
    workdir = seed_build(tmp_path / "work", build)
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\ncc = "{cc}"\n')
    return workdir


def seen_samples(path):
    """(variant, index) -> ns of the sample records in path, per token."""
    out, token = {}, None
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["type"] == "hello":
            token = r["token"]
        if r["type"] == "sample":
            out.setdefault(token, {})[(r["variant"], r["sample"])] = r["ns"]
    return out


def killed_once_gated(tmp_path, db):
    """A run of 3 samples on db whose coordinator is SIGKILLed once its
    agent's first GATE_AFTER samples are stored; the agent goes on."""
    p = seqorch_bg(tmp_path, *RUN_SHORT, "--db", db)
    try:
        wait_for(lambda: nsamples(db, "local") >= GATE_AFTER, "samples", p,
                 tmp_path)
    finally:
        p.kill()
        p.wait()


RUN_SHORT = ["run", "--study", "sha3", "--hosts", "local", "--variants",
             ",".join(VARIANTS), "--steps", "20000", "--samples", "3"]


def gate_env(tmp_path):
    return dict(os.environ, SEQORCH_GATE=str(tmp_path))


def seqorch_bg(tmp_path, *args):
    out = open(tmp_path / "run.out", "w")
    err = open(tmp_path / "run.err", "w")
    try:
        return subprocess.Popen([str(SEQORCH), *map(str, args)],
                                cwd=tmp_path, stdout=out, stderr=err,
                                env=gate_env(tmp_path))
    finally:
        out.close()
        err.close()


def ended(workdir, n):
    """Wait until n run directories in workdir have their exit file."""
    wait_for(lambda: len(list(workdir.glob("runs/*/exit"))) == n,
             "the killed runs' agents to end", timeout=300)


def test_resume_collects_the_agent_a_killed_coordinator_left_running(
        tmp_path, gated):
    """Issue 29, item 1: the resume starts while the killed run's agent
    still measures (it holds the host lock); the resume stores what that
    agent finishes and measures nothing again."""
    workdir = gated_host(tmp_path, gated)
    cc = gated[0]
    db = tmp_path / "results.db"
    killed_once_gated(tmp_path, db)
    r = seqorch_bg(tmp_path, "run", "--resume", "1")
    try:
        # Before issue 29 the resume waited on the lock and measured the
        # four missing cells again; it says it follows the agent instead.
        wait_for(lambda: r.poll() is not None or q(
            db, "SELECT 1 FROM events WHERE message LIKE '%still running%'"),
            "the resume to see the earlier agent")
    finally:
        (tmp_path / "go").touch()
    rc, err = finish(r, tmp_path)
    assert rc == 0, err
    (token, seen), = seen_samples(tmp_path / "seen").items()
    assert len(seen) == 6       # one agent only: nothing measured again
    stored = {(v, i): ns for v, i, ns in q(
        db, "SELECT variant, sample_index, ns FROM samples")}
    assert stored == seen       # every sample, with the agent's numbers
    # All six of the one window the killed coordinator stored: the four
    # the resume stored too, found by the agent's time of its begin.
    assert q(db, "SELECT COUNT(DISTINCT s.window_id), COUNT(s.window_id) "
             "FROM samples s JOIN windows w ON w.id = s.window_id") == \
        [(1, 6)]
    (d,), = q(db, "SELECT id FROM db_identity")
    assert q(db, "SELECT level, message FROM events WHERE message LIKE "
             "'%earlier%' ORDER BY id") == [
        ("info", f"agent ({cc}): an agent of this run that an earlier "
         "coordinator started is still running in "
         f'"{workdir}/runs/{d}-1-1-{token}": its records are stored as it '
         "writes them, and its cells are not measured again"),
        ("warning", f"agent ({cc}): an earlier coordinator of "
         "this run "
         "stopped before reading all of its agent's records (6 samples "
         "finished there); the 4 it had not stored are stored now, with "
         "the agent's own numbers")]
    assert q(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    assert list((workdir / "runs").iterdir()) == []
    assert q(db, "PRAGMA integrity_check") == [("ok",)]
    # The window the killed coordinator never saw end ends by the agent's
    # own record, as a complete one (before, `seqorch windows` said `cut`).
    end, = [r["state"] for r in map(json.loads, (tmp_path / "seen")
                                    .read_text().splitlines())
            if r["type"] == "window" and r["phase"] == "end"]
    (finished, after), = q(db, "SELECT finished_at, after_state FROM "
                           "windows")
    # cJSON prints a double in 15 digits where they read back within an
    # ulp (calib_mhz 2757.4462077393796 stored as 2757.44620773938).
    assert finished == end["at"]
    assert json.loads(after) == pytest.approx(end, rel=1e-14), after
    w = subprocess.run([str(SEQORCH), "windows"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert re.search(r"^ +1 +1 sha3 +local .* \d+\.\ds  ", w.stdout,
                     re.M) and "never closed" not in w.stdout, w.stdout


def test_interrupted_resume_ends_the_window_it_followed(tmp_path, gated):
    """Ctrl-C while the resume follows the agent the killed coordinator
    left running: the agent is stopped, and the window it had open ends
    then, saying why, as an interrupted launch's does (before, it stayed
    `cut`)."""
    gated_host(tmp_path, gated)
    db = tmp_path / "results.db"
    killed_once_gated(tmp_path, db)
    r = seqorch_bg(tmp_path, "run", "--resume", "1")
    try:
        wait_for(lambda: q(db, "SELECT 1 FROM events WHERE message LIKE "
                           "'%still running%'"), "the resume to follow the "
                 "earlier agent", r, tmp_path)
        r.send_signal(signal.SIGINT)
        rc, err = finish(r, tmp_path)
    finally:
        (tmp_path / "go").touch()
        if r.poll() is None:
            r.kill()
            r.wait()
    assert rc == 130, err
    (finished, drift), = q(db, "SELECT finished_at, drift FROM windows")
    assert finished and drift == "interrupted: the agent was stopped"


def test_resume_of_a_run_still_going_is_refused(tmp_path, gated):
    """A resume started while the run's own coordinator still measures (its
    agent held back at the gate) is refused and changes nothing; before, it
    took the run over, and the first coordinator then failed it although
    every sample was stored."""
    gated_host(tmp_path, gated)
    db = tmp_path / "results.db"
    p = seqorch_bg(tmp_path, *RUN_SHORT, "--db", db)
    try:
        wait_for(lambda: nsamples(db, "local") >= GATE_AFTER, "samples", p,
                 tmp_path)
        before = q(db, "SELECT status, resumes, coordinator FROM runs")
        r = seqorch(tmp_path, "run", "--resume", "1", "--db", db,
                    timeout=60, env=gate_env(tmp_path))
        assert r.returncode == 1, r.stderr
        assert r.stderr.splitlines()[-1] == "seqorch: run 1 is still " \
            f"running (pid {p.pid} on this machine): wait for it, or stop " \
            "it first", r.stderr
        assert q(db, "SELECT status, resumes, coordinator FROM runs") == \
            before
    finally:
        (tmp_path / "go").touch()
    rc, err = finish(p, tmp_path)
    assert rc == 0, err
    assert q(db, "SELECT status, resumes FROM runs") == [("ok", 0)]
    assert q(db, "SELECT count(*) FROM samples WHERE valid = 1") == [(6,)]


def test_resume_keeps_what_a_locked_database_could_not_store(tmp_path,
                                                             gated):
    """The resume follows the agent a killed coordinator left running, and
    results.db is locked past --db-wait meanwhile: the agent's
    records stay in its run directory, and the next resume stores them
    with the agent's own numbers.  Before, the resume removed the
    directory it could not store from (its samples lost for good) and
    measured those cells again."""
    workdir = gated_host(tmp_path, gated)
    db = tmp_path / "results.db"
    killed_once_gated(tmp_path, db)
    # Held past --db-wait (by default 600 s).
    r = seqorch_bg(tmp_path, "run", "--resume", "1", "--db-wait", "5")
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        wait_for(lambda: q(db, "SELECT 1 FROM events WHERE message LIKE "
                           "'%still running%'"), "the resume to follow the "
                 "earlier agent", r, tmp_path)
        con.execute("BEGIN EXCLUSIVE")
        (tmp_path / "go").touch()
        rc, err = finish(r, tmp_path)
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()
        (tmp_path / "go").touch()
    assert rc == 3, err
    (d,), = q(db, "SELECT id FROM db_identity")
    (token, seen), = seen_samples(tmp_path / "seen").items()
    left = workdir / "runs" / f"{d}-1-1-{token}"
    assert "agent (%s): cannot store the records an earlier coordinator " \
        f'of this run left in "{left}": database: ' % gated[0] in err, err
    assert "the rest stay there and `seqorch run --resume 1` stores " \
        "them" in err, err
    assert left.joinpath("records").exists()
    r = seqorch(tmp_path, "run", "--resume", "1", env=gate_env(tmp_path))
    assert r.returncode == 0, r.stderr
    # One agent only: nothing measured again, every sample its own.
    assert len(seen_samples(tmp_path / "seen")) == 1
    assert {(v, i): ns for v, i, ns in q(
        db, "SELECT variant, sample_index, ns FROM samples")} == seen
    assert q(db, "SELECT status FROM runs") == [("ok",)]
    assert list((workdir / "runs").iterdir()) == []


def test_resume_leaves_another_databases_run_directories(tmp_path,
                                                         gated):
    """Issue 29, item 2: two databases share the workdir, each with its
    run 1 killed; resuming one never counts or removes the other's run
    directory, whose own resume then stores its samples."""
    workdir = gated_host(tmp_path, gated)
    cc = gated[0]
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    try:
        killed_once_gated(tmp_path, a)
        killed_once_gated(tmp_path, b)
    finally:
        (tmp_path / "go").touch()
    ended(workdir, 2)
    (ida,), = q(a, "SELECT id FROM db_identity")
    (idb,), = q(b, "SELECT id FROM db_identity")
    assert ida != idb
    left_a, = workdir.glob(f"runs/{ida}-1-1-*")
    records_a = left_a.joinpath("records").read_text()
    for db, other in ((b, left_a), (a, None)):
        r = subprocess.run([str(SEQORCH), "run", "--resume", "1", "--db",
                            db], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600, env=gate_env(tmp_path))
        assert r.returncode == 0, r.stderr
        assert q(db, "SELECT message FROM events WHERE message LIKE "
                 "'%earlier%'") == [(
                     f"agent ({cc}): an earlier coordinator of "
                     "this run "
                     "stopped before reading all of its agent's records (6 "
                     "samples finished there); the 4 it had not stored are "
                     "stored now, with the agent's own numbers",)]
        if other is not None:
            assert other.joinpath("records").read_text() == records_a
    assert list((workdir / "runs").iterdir()) == []
    seen = {}
    for line in records_a.splitlines():
        rec = json.loads(line)
        if rec["type"] == "sample":
            seen[(rec["variant"], rec["sample"])] = rec["ns"]
    assert {(v, i): ns for v, i, ns in q(
        a, "SELECT variant, sample_index, ns FROM samples")} == seen


LOCKED_REST = {
    # Streaming stops at the first sample the database refuses.
    None: r'\(\d+ samples stored; the agent was stopped, and any other '
          r'sample it finished stays in "{left}": {resume}\)',
    # Ctrl-C meanwhile: the agent is stopped, what it finished not read.
    signal.SIGINT: r'interrupted: the agent \(cc\) was stopped, and its '
                   r'records cannot be stored now: database: cannot store '
                   r'sample: database is locked; \d+ samples are stored, '
                   r'any other it finished stays in "{left}": {resume}'}


def test_database_locked_past_the_busy_timeout_then_released(tmp_path):
    """Another writer holds results.db for 12 s, past the 10 s busy
    timeout: the run warns, names the holder, waits and stores every
    sample once the lock is released (before, the host failed at 10 s)."""
    workdir = local_hosts(tmp_path)
    db = tmp_path / "results.db"
    def hold(p):
        con = sqlite3.connect(db, timeout=30, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        try:
            time.sleep(12)
            assert p.poll() is None, (tmp_path / "run.err").read_text()
        finally:
            con.execute("ROLLBACK")
            con.close()
    rc, err = fault_mid_run(tmp_path, 8, hold)
    assert rc == 0, err
    # The holder is this test's process, whose lock /proc/locks shows.
    assert re.search(
        r'seqorch: warning: "' + re.escape(str(db)) + r'" is locked by '
        r'another writer \([^,]+, pid ' + str(os.getpid()) + r'\); waiting '
        r'for it up to 600 s \(the agents\' samples stay on their hosts '
        r'meanwhile\)', err), err
    check_db(db, workdir, "local", err, LONG_STEPS)
    assert sorted(q(db, "SELECT variant, sample_index FROM samples")) == \
        sorted((v, i) for v in VARIANTS for i in range(8))
    assert q(db, "SELECT status FROM runs") == [("ok",)]


def test_lease_of_a_run_waiting_for_the_database_is_not_taken_over(
        tmp_path):
    """Another writer holds results.db past the lease expiry (2 s here):
    the run, waiting to store, cannot beat, yet its agent measures on.  A
    second run on this machine sees the holder's process alive and does
    not take the window: with --no-wait it fails at once, the lock still
    held.  Before, the stale heartbeat let it through to its first write,
    and once the lock went it took the window over (lease_events
    'takeover') and measured beside the first."""
    local_hosts(tmp_path)
    db = tmp_path / "results.db"
    def hold(p):
        (holder,), = q(db, "SELECT holder FROM leases")
        con = sqlite3.connect(db, timeout=30, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        try:
            time.sleep(3)
            r = subprocess.run(RUN + ["--samples", "1", "--lease-expiry",
                                      "2", "--no-wait"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=15)
            assert p.poll() is None, (tmp_path / "run.err").read_text()
        finally:
            con.execute("ROLLBACK")
            con.close()
        assert r.returncode == 1, r.stderr
        assert f"seqorch: the measurement window is held by {holder} " \
            "(--no-wait given)" in r.stderr, r.stderr
    rc, err = fault_mid_run(tmp_path, 8, hold, "results.db",
                            "--lease-expiry", "2")
    assert rc == 0, err
    assert q(db, "SELECT count(*) FROM lease_events WHERE event = "
             "'takeover'") == [(0,)]
    assert q(db, "SELECT status FROM runs") == [("ok",)]


def test_lease_on_another_machine_is_not_taken_over_after_a_long_lock(
        tmp_path):
    """The holder runs on another machine (a real coordinator, host name
    "lease-container"): nothing tells the next run whether its process
    lives.  Another writer holds results.db past the lease expiry (2 s
    here), so the holder cannot beat, and a second run waits for the lock
    meanwhile.  Once it goes, the second run finds the heartbeat 3 s old
    and looks again a heartbeat interval (1 s) later, by when the holder
    has beaten: it waits for the window and measures after the first.
    The holder is stopped from before the lock goes until that first look,
    so the look surely comes first (else the two race for the lock), as a
    loaded container's would.  Before, the first look took the window
    over (lease_events 'takeover') and the two runs' windows overlapped."""
    local_hosts(tmp_path)
    db = tmp_path / "results.db"
    second = {}
    def hold(p):
        (holder, host), = q(db, "SELECT holder, holder_host FROM leases")
        assert host == "lease-container", holder
        con = sqlite3.connect(db, timeout=30, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        try:
            with open(tmp_path / "second.err", "w") as err:
                second["p"] = subprocess.Popen(
                    RUN + ["--samples", "1", "--lease-expiry", "2"],
                    cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
            time.sleep(3)
            os.kill(p.pid, signal.SIGSTOP)
        finally:
            con.execute("ROLLBACK")
            con.close()
        try:
            wait_for(lambda: "the measurement window" in
                     (tmp_path / "second.err").read_text(),
                     "the second run's look at the lease", second["p"])
        finally:
            os.kill(p.pid, signal.SIGCONT)
    try:
        rc, err = fault_mid_run(tmp_path, 8, hold, "results.db",
                                "--lease-expiry", "2", wrap=OTHER_MACHINE)
        assert rc == 0, err
        assert second["p"].wait(timeout=120) == 0, \
            (tmp_path / "second.err").read_text()
    finally:
        if "p" in second and second["p"].poll() is None:
            second["p"].kill()
            second["p"].wait()
    said = (tmp_path / "second.err").read_text()
    assert "took over" not in said, said
    assert q(db, "SELECT count(*) FROM lease_events WHERE event = "
             "'takeover'") == [(0,)]
    (first_end,), = q(db, "SELECT max(finished_at) FROM windows WHERE "
                      "run_id = 1")
    (second_start,), = q(db, "SELECT min(started_at) FROM windows WHERE "
                         "run_id = 2")
    assert first_end <= second_start
    assert q(db, "SELECT status FROM runs ORDER BY id") == [("ok",), ("ok",)]


@pytest.mark.parametrize("sig", LOCKED_REST, ids=["stream", "interrupt"])
def test_database_locked_longer_than_the_busy_timeout(tmp_path, sig):
    """Held past --db-wait (5 s here; by default 600), or Ctrl-C after the
    10 s busy timeout: the host fails, and a resume stores the rest."""
    workdir = local_hosts(tmp_path)
    db = tmp_path / "results.db"
    p = start_local(tmp_path, 8, db, *(["--db-wait", "5"] if sig is None
                                        else []))
    try:
        wait_for(lambda: nsamples(db, "local") > 0, "samples", p, tmp_path)
        con = sqlite3.connect(db, timeout=30, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        try:
            if sig is not None:
                # Once the coordinator waits to store a sample.
                stored = nsamples(db, "local")
                wait_for(lambda: len(finished_samples(workdir)) > stored,
                         "a sample not stored", p, tmp_path)
                p.send_signal(sig)
            # A sample arrives every ~0.5 s.
            rc = p.wait(timeout=120)
        finally:
            con.execute("ROLLBACK")
            con.close()
        err = (tmp_path / "run.err").read_text()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # EXIT_DB (cmd.h, docs/usage.md): the database cannot be written.
    assert rc == 3, err
    assert "database is locked" in err, err
    check_db(db, workdir, "local", err, LONG_STEPS)
    assert not agent_pids(workdir)
    # What the agent finished is on the host, not lost: the message says
    # where and how to store it, and a resume does (before, it said lost).
    (left,) = (workdir / "runs").iterdir()
    assert re.search(LOCKED_REST[sig].format(
        left=re.escape(str(left)),
        resume=re.escape("`seqorch run --resume 1` stores it")), err), err
    finished = finished_samples(workdir)
    r = seqorch(tmp_path, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    rows = q(db, "SELECT variant, build_id, sample_index, ns FROM samples")
    assert sorted((v, i) for v, _, i, _ in rows) == sorted(
        (v, i) for v in VARIANTS for i in range(8))
    assert {(v, b, i): ns for v, b, i, ns in rows
            if (v, b, i) in finished} == finished


def test_raw_output_that_cannot_be_kept_stays_on_the_host(tmp_path):
    """The artifact store cannot take the agent's raw output (here a file
    where its directory was): the records file stays on the host, and a
    warning says where.  Before, the run directory was removed with it."""
    workdir = local_hosts(tmp_path)
    db = tmp_path / "results.db"
    def unstorable(p):
        (tmp_path / "artifacts").rename(tmp_path / "store")
        (tmp_path / "artifacts").touch()
    rc, err = fault_mid_run(tmp_path, 3, unstorable)
    assert rc == 0, err
    (left,) = (workdir / "runs").iterdir()
    (msg,), = q(db, "SELECT message FROM events WHERE message LIKE "
                "'raw agent output not kept: %'")
    assert msg.endswith(f'; it stays in "{left}/records" on the host'), msg
    assert f"local: warning: {msg}" in err, err
    assert len(finished_samples(workdir)) == nsamples(db, "local") == 6


@pytest.fixture
def small_fs(tmp_path):
    """A 64 MB tmpfs (needs root; a run keeps several MB of artifacts),
    unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    d = tmp_path / "fs"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs",
                    str(d)], check=True)
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


def fill(fs):
    """Write fs/filler until the file system is full."""
    try:
        with open(fs / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
    except OSError as e:
        assert e.errno == errno.ENOSPC, e


def test_disk_full(tmp_path, small_fs):
    workdir = local_hosts(tmp_path)
    db = small_fs / "results.db"
    # 48 samples a variant: the run is still writing samples when the
    # disk is full (with 12, CI saw one finish before the filler did).
    p = start_local(tmp_path, 48, db)
    try:
        wait_for(lambda: nsamples(db, "local") > 0, "samples", p, tmp_path)
        # Empty the WAL first: a WAL that already holds room lets the
        # next commits reuse it (SQLite rewinds it after a checkpoint),
        # so whether a commit needs the disk would depend on timing.
        con = sqlite3.connect(db, timeout=30)
        for _ in range(200):
            busy, log, _ = con.execute(
                "PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy == 0 and log == 0:
                break
            time.sleep(0.05)
        con.close()
        assert busy == 0 and log == 0, "the WAL was never truncated"
        # Fill what is left; the next write the database needs fails.
        # (The run's artifacts may have filled it already: then even
        # creating the filler fails, which is the same full disk.)
        fill(small_fs)
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 3, err    # EXIT_DB, as for a locked database
    assert "full" in err, err
    # The coordinator's database failed, not the agent's output.
    assert "agent output line" not in err, err
    (small_fs / "filler").unlink(missing_ok=True)
    check_db(db, workdir, "local", err, LONG_STEPS)
    assert not agent_pids(workdir)


def test_host_disk_full(tmp_path, small_fs, agent_build):
    """The host's file system fills up mid-window: the agent cannot write
    its next record (nor its stderr).  Its exit status is still written
    (over blanks the launch wrote), and the host's error says the file
    system is full; before, 30 s later, `the agent (pid N) ended without
    an exit status (its wrapper shell was killed?)`."""
    workdir = seed_build(small_fs / "work", agent_build)
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\n')
    db = tmp_path / "results.db"
    rc, err = fault_mid_run(tmp_path, 48, lambda p: fill(small_fs))
    assert rc == 1, err
    (left,) = (workdir / "runs").iterdir()
    assert q(db, "SELECT error FROM run_hosts") == [(
        f'agent (cc) exited with status 3: the file system of "{left}" is '
        "full (0 KiB free)",)]
    (small_fs / "filler").unlink()
    rows = check_db(db, workdir, "local", err, LONG_STEPS)
    assert len(rows) == len(finished_samples(workdir)) < 96


def test_host_disk_full_before_launch(tmp_path, small_fs, agent_build):
    """The host's file system is full once its agent is built: the launch
    cannot write the run directory's files, and the host fails at once
    saying so, leaving no run directory for a resume to wait on.  Before,
    the launch went on in the background and the stream said, 30 s later,
    `the agent did not start: no pid file in 30 s (nohup could not start
    it?)`."""
    workdir = seed_build(small_fs / "work", agent_build)
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\n')
    r = seqorch(tmp_path, "deploy", "--hosts", "local")   # the upload
    assert r.returncode == 0, r.stderr
    fill(small_fs)
    t0 = time.monotonic()
    rc, err = finish(start_local(tmp_path, 1), tmp_path)
    assert rc == 1, err
    assert time.monotonic() - t0 < 20, err
    (error,), = q(tmp_path / "results.db", "SELECT error FROM run_hosts")
    runs = re.escape(str(workdir / "runs"))
    assert re.fullmatch(
        f'agent \\(cc\\): cannot start the agent in "{runs}/[^"]+": '
        f'the file system of "{runs}" is full \\(0 KiB free\\)',
        error), error
    assert not list((workdir / "runs").iterdir())


def test_read_only_database(tmp_path, small_fs):
    local_hosts(tmp_path)
    db = small_fs / "results.db"
    r = subprocess.run(RUN[:-2] + ["--steps", "1000", "--samples", "1",
                                   "--db", str(db)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    before = q(db, "SELECT count(*) FROM samples")
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    r = subprocess.run(RUN[:-2] + ["--steps", "1000", "--samples", "1",
                                   "--db", str(db)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr
    assert f'"{db}"' in r.stderr and "read" in r.stderr.lower(), r.stderr
    # Read as the file stands (a WAL database cannot be opened normally on
    # a read-only file system).
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("SELECT count(*) FROM samples").fetchall() == \
            before
    finally:
        con.close()


# The test-only fault of kernels/sha3/c-fused: built with this flag, its
# chains of more than N steps have one bit flipped after step N + 1.
BROKEN_AFTER = 1000


def broken_chain(steps, after=BROKEN_AFTER):
    """What c-fused built with -DSEQORCH_TEST_BROKEN_AFTER=after computes,
    with hashlib: the chain, bit 0 of its first byte flipped after step
    after + 1, then the rest of the chain."""
    x = bytes.fromhex(sha3_chain(after + 1))
    return sha3_chain(steps - after - 1, bytes([x[0] ^ 1]) + x[1:])


def test_digest_disagrees_on_a_broken_build(tmp_path, hosts):
    good, bad = hosts("good", "bad")
    write_hosts(tmp_path, [good, bad], bad={
        "cflags": f"-O2 -DSEQORCH_TEST_BROKEN_AFTER={BROKEN_AFTER}"})
    steps, samples = 20000, 2
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        rc, err = finish(p, tmp_path, timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 1, err
    assert "run 1 partial" in err, err
    # Only the flagged build has the fault; the self-tests passed on both.
    assert q(db, "SELECT host, cflags FROM builds ORDER BY host") == [
        ("bad", f"-O2 -DSEQORCH_TEST_BROKEN_AFTER={BROKEN_AFTER}"),
        ("good", "-O3")]
    (commands,), = q(db, "SELECT commands FROM builds WHERE host = 'good'")
    assert "SEQORCH_TEST" not in commands
    assert set(q(db, "SELECT host, variant, status FROM variants")) == {
        (h, v, "ok") for h in ("good", "bad") for v in VARIANTS}
    check_db(db, good.workdir, "good", err, steps)
    rows = check_db(db, bad.workdir, "bad", err, steps,
                    bad_variant="c-fused")
    assert len(rows) == 2 * samples
    bad_rows = q(db, "SELECT sample_index, digest, invalid_reason FROM "
                 "samples WHERE host = 'bad' AND variant = 'c-fused' "
                 "ORDER BY sample_index")
    assert bad_rows == [(i, broken_chain(steps), "digest differs from the "
                         "reference") for i in range(samples)]
    assert q(db, "SELECT count(*) FROM samples WHERE valid = 1") == [
        (3 * samples,)]
    r = subprocess.run([str(SEQORCH), "report", "--run", "1"],
                       cwd=tmp_path, env=clean_env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "study sha3, run 1: partial" in r.stdout
    for i in range(samples):
        assert (f"bad c-fused (cc) sample {i}: digest differs from the "
                "reference") in r.stdout, r.stdout
        assert q(db, "SELECT level FROM events WHERE host = 'bad' AND "
                 "message = ?", f'sample {i} of "c-fused" (cc) is invalid: '
                 "digest differs from the reference (got "
                 f"{broken_chain(steps)})") == [("error",)]
    # The broken cell has no rate and counts its invalid samples.
    assert re.search(r"^  c-fused +bad +- .* 0 +- +2$", r.stdout, re.M), \
        r.stdout
    assert not q(db, "SELECT 1 FROM events WHERE host = 'good' AND level "
                 "= 'error'")


def faketime_host(s, monotonic):
    """Restart s with libfaketime in every session's environment (so in
    the agent's), its offset read at each clock read from a file the test
    rewrites; with monotonic False only the wall clock is faked.  Returns
    the file."""
    f = s.dir / "faketime"
    f.write_text("+0\n")
    f.chmod(0o644)
    env = [f"LD_PRELOAD={faketime_lib()}", f"FAKETIME_TIMESTAMP_FILE={f}",
           "FAKETIME_NO_CACHE=1"]
    if not monotonic:
        env.append("FAKETIME_DONT_FAKE_MONOTONIC=1")
    with open(s.dir / "sshd_config", "a") as c:
        c.write("SetEnv " + " ".join(env) + "\n")
    s.restart()
    return f


def sample_lines(workdir):
    """The sample records the agents wrote in workdir so far."""
    n = 0
    for f in Path(workdir).glob("runs/*/records"):
        n += f.read_text(errors="replace").count('"type":"sample"')
    return n


@pytest.mark.parametrize("jump", ["+2h", "-2h"])
@pytest.mark.parametrize("clock", ["wall", "monotonic"])
def test_clock_jumps(tmp_path, hosts, clock, jump):
    s, = hosts("skewed")
    stamp = faketime_host(s, monotonic=clock == "monotonic")
    write_hosts(tmp_path, [s])
    steps, samples = LONG_STEPS, 4
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        # Mid-window, while a sample is timed: its chain takes most of
        # the time between two records (a calibration of ~6 ms before
        # it).  A monotonic jump that fell in a calibration instead (the
        # next sample came) is made again, by as much, in the next one.
        hours = 0
        for _ in range(3 if clock == "monotonic" else 1):
            n = wait_for(lambda: sample_lines(s.workdir), "a sample", p,
                         tmp_path)
            time.sleep(0.05)
            hours += int(jump[:-1])
            stamp.write_text(f"{hours:+d}h\n")
            if clock == "wall":
                break
            # The agent stops, and so does the run, or times the next
            # sample.
            wait_for(lambda: p.poll() is not None or
                     sample_lines(s.workdir) > n, "the agent", p, tmp_path)
            if p.poll() is not None:
                break
        rc, err = finish(p, tmp_path, timeout=400)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    rows = check_db(db, s.workdir, "skewed", err, steps)
    # Every window time is within the coordinator's own span of the run.
    (started, finished), = q(db, "SELECT started_at, finished_at FROM runs")
    for w in q(db, "SELECT started_at, finished_at FROM windows"):
        for t in w:
            assert t is None or started <= t <= finished, (w, started,
                                                          finished)
    for *_, ns, _, _ in rows:
        assert 0 < ns < 60e9, rows
    if clock == "wall":
        # The raw monotonic clock did not move: every sample is valid.
        assert rc == 0, err
        assert len(rows) == 2 * samples
        # The window's end came after the jump: it is kept at the
        # coordinator's time, and the skew is its drift and a warning.
        (drift,), = q(db, "SELECT drift FROM windows")
        m = re.match(r"the host's wall clock is at least (\d+)h(\d\d)m(\d\d)s "
                     r"(ahead of|behind) the coordinator's: window end at "
                     r"(\S+) by the host, kept at the coordinator's time",
                     drift)
        assert m, drift
        h, mi, sec = map(int, m.group(1, 2, 3))
        assert 7200 - 300 < h * 3600 + mi * 60 + sec <= 7200, drift
        assert m[4] == ("ahead of" if jump[0] == "+" else "behind"), drift
        assert not started <= m[5] <= finished, drift
        assert q(db, "SELECT level FROM events WHERE message = ?",
                 "measurement window drifted: " + drift) == [("warning",)]
    else:
        # The sample the jump fell in is not stored, nor anything after
        # it; those before it are valid.
        assert rc == 1, err
        (error,), = q(db, "SELECT error FROM run_hosts")
        assert re.fullmatch(
            r"agent \(cc\): the raw monotonic clock \(CLOCK_MONOTONIC_RAW\) "
            r'jumped during sample \d of "[a-z-]+": '
            + (r"it advanced 72\d\d\.\d+ s while the thread ran only "
               r"[\d.]+ s of cpu and waited [\d.]+ s for one \(or the "
               r"agent was stopped\)"
               if jump[0] == "+" else r"it went back 7[01]\d\d\.\d+ s") +
            "; the sample is dropped and nothing more is timed on this "
            "host", error), error
        assert 0 < len(rows) < 2 * samples
        assert q(db, "SELECT status FROM runs") == [("partial",)]
        # The window the agent stopped in is ended, by the coordinator,
        # with the reason: `seqorch windows` does not call it cut.
        (end, drift), = q(db, "SELECT finished_at, drift FROM windows")
        assert end is not None and started <= end <= finished
        assert drift == "the agent stopped inside the window: " + error
        out = subprocess.run([str(SEQORCH), "windows", "--db", str(db)],
                             capture_output=True, text=True).stdout
        assert "never closed" not in out and "drift: the agent stopped" in out


# Issue 29, items 5 and 6: one build's agent of a conducted host
# misbehaves, the other's is the session's healthy build.  The wrapper
# (built once for the module, its fault read from `mode` at each run)
# acts on its agent's records in --serve: at its second sample (its first
# for `first`, where its build comes first in the host's order), or on
# its self-test.  Its hangs last until the test makes `go`; the
# conductor's floors (SEQORCH_HANG_FLOOR_MS) are HANG_FLOOR_MS here.
HANG_FLOOR_MS = 3000
CONDUCTED_STEPS, CONDUCTED_SAMPLES = 2000, 3
MISBEHAVE = r'''case " $* " in *" --serve "*) ;;
*) exec "$0.real" "$@" ${out:+--out "$out"} ;; esac
mode=$(cat "%(dir)s/mode")
hang() { while [ ! -e "%(dir)s/go" ]; do sleep 0.1; done; }
"$0.real" "$@" | while IFS= read -r l; do
    case $l in
    *'"type":"variant"'*) [ "$mode" = variant ] && l=$(printf '%%s\n' "$l" |
        sed "s/\"variant\":\"[^\"]*\"/\"variant\":\"$(printf '%%100s' | tr ' ' x)\"/") ;;
    *'"type":"selftest"'*) case $mode in
        selftest) l=$(printf '%%s\n' "$l" |
            sed 's/"digest":"[0-9a-f]*"/"digest":"00"/') ;;
        setup) hang ;;
        esac ;;
    *'"type":"sample"'*) n=$((${n:-0} + 1))
        [ $n = 1 ] && [ "$mode" = first ] && hang
        [ $n = 2 ] && case $mode in
        garbage) l=$(printf 'not a record \033[31mred\001 \\ end') ;;
        long) l=$(head -c 70000 /dev/zero | tr '\0' x) ;;
        type) l='{"type":"bogus"}' ;;
        build) printf '%%s\n' '{"type":"build","build_id":""}' ;;
        digest) l=$(printf '%%s\n' "$l" |
            sed 's/"digest":"[0-9a-f]*"/"digest":"xyz"/') ;;
        index) l=$(printf '%%s\n' "$l" | sed 's/"sample":[0-9]*/"sample":99/') ;;
        hang) hang ;;
        esac ;;
    esac
    printf '%%s\n' "$l"
done'''


@pytest.fixture(scope="module")
def conducted(tmp_path_factory, agent_build):
    """(directory of mode and go, workdir, the misbehaving cc)."""
    d = tmp_path_factory.mktemp("conducted")
    cc = d / "cc"
    cc.write_text(FAKE_CC % (MISBEHAVE % {"dir": d}))
    cc.chmod(0o755)
    workdir = seed_build(d / "work", agent_build)
    yield d, workdir, cc
    (d / "go").touch()      # a hung wrapper's loop ends


@pytest.mark.parametrize("mode, what", [
    ("garbage", 'sent a line that is not a record (not a JSON object at '
     'byte 0), and was stopped; the line: "not a record \\x1b[31mred\\x01 '
     '\\\\ end"'),
    ("long", "sent a line longer than 65536 bytes, and was stopped; the "
     "line's first 200 bytes: \"" + "x" * 200 + '"'),
    ("type", 'sent a "bogus" record where a sample record was due, and '
     'was stopped; the line: "{"type":"bogus"}"'),
    ("build", 'sent a "build" record, which only a conductor sends, and '
     'was stopped; the line: "{"type":"build","build_id":""}"'),
    ("selftest", "sent a self-test chain that is not the reference's ("),
    # A name longer than the conductor quotes (its buffer overflowed).
    ("variant", 'sent a variant record for "' + "x" * 32 + '" (its first '
     '32 bytes), which was not asked for, and was stopped; the line: '
     '"{"type":"variant",'),
    ("hang", "sent nothing for "),
    ("setup", "did not end its setup and self-test in "),
    ("first", "sent nothing for "),
    # Well-formed records the coordinator refuses by their content.
    ("digest", 'sent a record that the coordinator refuses (sample record: '
     'field "digest" must be lowercase hex of at most 128 digits, got '
     '"xyz"), and its records are ignored from there on; the line\'s '
     'first 200 bytes (agent output line '),
    ("index", "sent a record that the coordinator refuses (sample index 99 "
     "out of range), and its records are ignored from there on; the line's "
     "first 200 bytes (agent output line "),
], ids=lambda x: x if " " not in x else "")
def test_a_bad_build_agent_fails_only_its_build(tmp_path, conducted, mode,
                                                what):
    d, workdir, cc = conducted
    hangs = mode in ("hang", "setup", "first")
    (d / "mode").write_text(mode + "\n")
    # `first`: the bad build's cell comes first in the host's order, so
    # no build has a sample when it hangs.
    ccs = [str(cc), "cc"] if mode == "first" else ["cc", str(cc)]
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\ncc = {json.dumps(ccs)}\n')
    db = tmp_path / "results.db"
    env = dict(os.environ)
    if hangs:
        env["SEQORCH_HANG_FLOOR_MS"] = str(HANG_FLOOR_MS)
    try:
        r = subprocess.run(RUN[:-2] + [
            "--steps", str(CONDUCTED_STEPS), "--samples",
            str(CONDUCTED_SAMPLES), "--db", str(db)], cwd=tmp_path,
            capture_output=True, text=True, timeout=900, env=env)
    finally:
        if hangs:
            (d / "go").touch()
    (d / "go").unlink(missing_ok=True)
    assert r.returncode == 1, r.stderr
    assert "run 1 partial" in r.stderr, r.stderr
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    (good,), = q(db, "SELECT id FROM builds WHERE compiler = 'cc'")
    (bad,), = q(db, "SELECT id FROM builds WHERE compiler = ?", str(cc))
    # The healthy build measured every cell, each with the right chain.
    rows = q(db, "SELECT variant, sample_index, digest, valid FROM samples "
             "WHERE build_id = ?", good)
    assert sorted((v, i) for v, i, *_ in rows) == sorted(
        (v, i) for v in VARIANTS for i in range(CONDUCTED_SAMPLES))
    assert {(dg, ok) for *_, dg, ok in rows} == {
        (sha3_chain(CONDUCTED_STEPS), 1)}
    # The bad build: what came before its fault, nothing after.
    n = 0 if mode in ("selftest", "setup", "first", "variant") else 1
    assert q(db, "SELECT count(*), count(DISTINCT digest) FROM samples "
             "WHERE build_id = ?", bad) == [(n, n)]
    said = f"agent ({cc}): the agent of build {bad} {what}"
    (error,), = q(db, "SELECT error FROM run_hosts")
    assert error.startswith(said) and error.endswith(
        "(the other builds went on)"), error
    # Said when it happened, the other build still measuring; then as
    # the host's error.
    events = [m for m, in q(db, "SELECT message FROM events WHERE level "
                            "= 'error' ORDER BY id")]
    assert len(events) == 2 and events[1] == error, events
    event = events[0]
    assert event.startswith(said), event
    assert said in r.stderr, r.stderr
    if mode in ("digest", "index"):
        # The line as relayed; the conductor went on asking the build,
        # and the coordinator stored none of what it sent after.
        assert re.search(r'line \d+\): "\{"type":"sample",.*%s' % (
            '"digest":"xyz"' if mode == "digest" else '"sample":99'),
            event), event
    if hangs:
        # Stopped at its deadline, the test's floor and its rule (the
        # floor is a lower bound of the wait, whatever the load).
        floor = HANG_FLOOR_MS / 1000
        rule = {"hang": "its longest sample",
                "first": "its setup and self-test scaled to a sample's steps",
                "setup": "the longest setup of the builds before it"}[mode]
        m = re.fullmatch(
            r".* (?:sent nothing for|did not end its setup and self-test "
            r"in) (\d+\.\d) s(?: after a sample request)? \(the deadline: "
            r"%g s and 10 times %s, \d+\.\d{3} s\), and was stopped" % (
                floor, re.escape(rule)), event)
        assert m and float(m[1]) >= floor, event
    assert "\x1b" not in r.stderr and "signal 9" not in error
    assert q(db, "PRAGMA integrity_check") == [("ok",)]
    assert not agent_pids(workdir)
