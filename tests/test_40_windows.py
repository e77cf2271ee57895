"""Serialized measurement windows: the lease across coordinators sharing a
database, the host lock across coordinators with different databases,
takeover of a dead holder, --no-wait, exploratory runs, adaptive samples
and --resume."""
import os
import re
import signal
import sqlite3
import subprocess
import time
from datetime import datetime

import pytest

from conftest import SEQORCH, query, seed_build, seqorch, sha3_chain
from lib_common import OTHER_MACHINE, faketime_lib, wait_for

RUN = ["run", "--study", "sha3", "--variants", "c-fused,c-wrapped"]


@pytest.fixture
def sides(tmp_path, agent_build):
    """This test's own left and right workdirs (a host lock each), both
    holding the session's agent build: no test here waits for a cold
    build, and tests on other workers never queue for these locks."""
    root = tmp_path / "work"
    for side in ("left", "right"):
        seed_build(root / side, agent_build)
    return root


def two_hosts(path, workdir):
    """Two local hosts, one per CPU, each with its own workdir."""
    path.write_text(
        "[defaults]\n"
        'transport = "local"\n'
        "[hosts.left]\n"
        f'workdir = "{workdir}/left"\n'
        "cpu = 0\n"
        "[hosts.right]\n"
        f'workdir = "{workdir}/right"\n'
        "cpu = 1\n")


def t(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def spans(db):
    """run id -> (earliest window start, latest window end)."""
    out = {}
    for run, start, end in query(db, "SELECT run_id, started_at, "
                                 "finished_at FROM windows"):
        assert end is not None, "window left open"
        lo, hi = out.get(run, (t(start), t(end)))
        out[run] = (min(lo, t(start)), max(hi, t(end)))
    return out


def start(cwd, *args, wrap=()):
    return subprocess.Popen([*wrap, str(SEQORCH), *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, err


def test_same_db_windows_never_overlap(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    args = RUN + ["--hosts", "all", "--steps", "150000", "--samples", "2"]
    a = start(tmp_path, *args)
    b = start(tmp_path, *args)
    for p in (a, b):
        rc, err = finish(p)
        assert rc == 0, err
    db = tmp_path / "results.db"
    s = spans(db)
    assert len(s) == 2
    (a0, a1), (b0, b1) = s.values()
    assert a1 <= b0 or b1 <= a0, s
    # Inside one window the hosts measure at the same time.
    for run in s:
        w = query(db, "SELECT started_at, finished_at FROM windows WHERE "
                  "run_id = ?", run)
        assert len(w) == 2
        (s0, e0), (s1, e1) = [(t(x), t(y)) for x, y in w]
        assert s0 < e1 and s1 < e0
    events = [e for e, in query(db, "SELECT event FROM lease_events")]
    assert events.count("acquired") == 2 and events.count("released") == 2
    assert "waited" in events
    assert query(db, "SELECT count(*) FROM leases") == [(0,)]
    # Every window carries host-state snapshots.
    for before, after in query(db, "SELECT before_state, after_state "
                               "FROM windows"):
        assert '"calib_mhz"' in before and '"load1"' in after
    r = seqorch(tmp_path, "windows")
    assert r.returncode == 0 and "left" in r.stdout and "right" in r.stdout
    # Every window is closed and lasted as long as its row says.
    rows = [line.split() for line in r.stdout.splitlines()
            if line.split()[:1] and line.split()[0].isdigit()]
    assert len(rows) == query(db, "SELECT count(*) FROM windows")[0][0] \
        == 4, r.stdout
    for row in rows:
        (secs,), = query(db, "SELECT (julianday(finished_at) - "
                         "julianday(started_at)) * 86400 FROM windows "
                         "WHERE id = ?", int(row[0]))
        assert row[5] == f"{secs:.1f}s", (row, secs)
    assert "no one holds the measurement window now" in r.stdout


@pytest.mark.parametrize("machine", ["this", "another"])
def test_dead_holder_is_taken_over(tmp_path, sides, machine):
    """The holder is killed.  On this machine its process is seen gone, and
    the next run takes its window at once; on another machine (a real
    coordinator in a UTS namespace named lease-container) only its
    silence tells, so a --no-wait run takes it once its heartbeat is older
    than --lease-expiry (2 s) and still the same one a heartbeat interval
    (1 s) later, saying so (before, at the first look)."""
    two_hosts(tmp_path / "hosts.toml", sides)
    db = tmp_path / "results.db"
    a = start(tmp_path, *RUN, "--hosts", "left", "--steps", "100000",
              "--samples", "4",
              wrap=OTHER_MACHINE if machine == "another" else ())
    wait_for(lambda: query(db, "SELECT count(*) FROM leases")[0][0] == 1,
             "the lease", a, ignore=sqlite3.Error)
    holder_a = query(db, "SELECT holder FROM leases")[0][0]
    if machine == "another":
        wait_for(lambda: query(db, "SELECT count(*) FROM windows")[0][0],
                 "the window", a)
    else:
        # Stopped, 40 s silent: alive on this machine, so still the holder
        # (before, windows said it ran on another machine).
        a.send_signal(signal.SIGSTOP)
        w = seqorch(tmp_path, "windows", env=dict(
            os.environ, FAKETIME="+40", LD_PRELOAD=str(faketime_lib())))
        assert w.returncode == 0, w.stderr
        assert re.search(r"^window held now by " + re.escape(holder_a) +
                         r" \(run 1, study sha3\) since \S+, last heartbeat "
                         r"4\d s ago", w.stdout, re.M), w.stdout
    a.send_signal(signal.SIGKILL)
    a.wait()
    t0 = time.time()
    if machine == "this":
        r = seqorch(tmp_path, *RUN, "--hosts", "left", "--steps", "1000",
                    "--samples", "1", "--lease-expiry", "20")
        assert "took over the measurement window from " \
            f"{holder_a} (its process is gone)" in r.stderr, r.stderr
    else:
        # 40 s on (libfaketime), past the default expiry: still its window.
        w = seqorch(tmp_path, "windows", env=dict(
            os.environ, FAKETIME="+40", LD_PRELOAD=str(faketime_lib())))
        assert w.returncode == 0, w.stderr
        assert re.search(
            r"^window held now by " + re.escape(holder_a) + r" \(run 1, "
            r"study sha3\) since \S+, silent for 4\d s, over the expiry "
            r"\(30 s\): it runs on another machine, so the next run takes "
            r"the window over if it stays silent 10 s more with results.db "
            r"free$", w.stdout, re.M), w.stdout
        assert " open  " in w.stdout and "never closed" not in w.stdout, \
            w.stdout
        # Until then a --no-wait run is refused (the holder may beat).
        wait_for(lambda: time.time() - query(db, "SELECT heartbeat_unix "
                                             "FROM leases")[0][0] > 2,
                 "the heartbeat to age past the expiry")
        r = seqorch(tmp_path, *RUN, "--hosts", "left", "--steps", "1000",
                    "--samples", "1", "--lease-expiry", "2", "--no-wait")
        assert f"no heartbeat from {holder_a} for over 2 s: it runs on " \
            "another machine, so the measurement window is taken over " \
            "only if it stays silent 1 s more with results.db free" \
            in r.stderr, r.stderr
        assert "took over the measurement window from " \
            f"{holder_a} (silent for over 2 s)" in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert time.time() - t0 < 60
    took = query(db, "SELECT previous FROM lease_events WHERE event = "
                 "'takeover'")
    assert took == [(holder_a,)]


def test_no_wait_fails_at_once(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    db = tmp_path / "results.db"
    a = start(tmp_path, *RUN, "--hosts", "left", "--steps", "200000",
              "--samples", "3")
    wait_for(lambda: query(db, "SELECT count(*) FROM leases")[0][0] == 1,
             "the lease", a, ignore=sqlite3.Error)
    r = seqorch(tmp_path, *RUN, "--hosts", "right", "--steps", "1000",
                "--samples", "1", "--no-wait")
    assert r.returncode == 1
    assert "held by" in r.stderr and "--no-wait" in r.stderr
    # Refused before a run is created: the holder's run is the only one.
    assert "run 2" not in r.stderr
    assert query(db, "SELECT count(*) FROM runs")[0][0] == 1
    rc, err = finish(a)
    assert rc == 0, err


def test_different_databases_serialized_by_host_lock(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    args = RUN + ["--hosts", "left", "--steps", "150000", "--samples", "2"]
    a = start(tmp_path, *args, "--db", "one.db")
    b = start(tmp_path, *args, "--db", "two.db")
    for p in (a, b):
        rc, err = finish(p)
        assert rc == 0, err
    (a0, a1), = spans(tmp_path / "one.db").values()
    (b0, b1), = spans(tmp_path / "two.db").values()
    assert a1 <= b0 or b1 <= a0
    waits = [m for db in ("one.db", "two.db") for m, in
             query(tmp_path / db, "SELECT message FROM events WHERE "
                   "message LIKE 'waiting for the host lock%'")]
    assert len(waits) == 1 and "pid" in waits[0]


def test_explore_takes_no_window(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    r = seqorch(tmp_path, *RUN, "--hosts", "left", "--steps", "1000",
                "--samples", "1", "--explore")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    assert query(db, "SELECT count(*) FROM windows") == [(0,)]
    assert query(db, "SELECT count(*) FROM lease_events") == [(0,)]
    assert query(db, "SELECT exploratory FROM runs") == [(1,)]


def test_adaptive_samples_record_why(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    r = seqorch(tmp_path, *RUN, "--hosts", "left", "--steps", "2000",
                "--samples", "2", "--max-cv", "0.000001%",
                "--max-samples", "4")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    rows = query(db, "SELECT variant, sample_index, reason FROM samples")
    for v in ("c-fused", "c-wrapped"):
        idx = sorted(i for var, i, _ in rows if var == v)
        assert idx == [0, 1, 2, 3]
    for _, i, why in rows:
        assert (why is None) == (i < 2), (i, why)
        if why:
            assert "cv" in why


def test_resume_fills_exactly_the_missing_cells(tmp_path, sides):
    two_hosts(tmp_path / "hosts.toml", sides)
    db = tmp_path / "results.db"
    a = start(tmp_path, *RUN, "--hosts", "all", "--steps", "200000",
              "--samples", "6")
    wait_for(lambda: query(db, "SELECT count(*) FROM samples")[0][0] >= 3,
             "3 samples", a, ignore=sqlite3.Error)
    a.send_signal(signal.SIGINT)
    rc, err = finish(a)
    assert rc == 130, err
    before = query(db, "SELECT id, host, variant, sample_index FROM samples")
    assert 3 <= len(before) < 24
    (run_id,), = query(db, "SELECT id FROM runs")
    r = seqorch(tmp_path, "run", "--resume", run_id)
    assert r.returncode == 0, r.stderr
    after = query(db, "SELECT id, host, variant, sample_index, digest, "
                  "valid FROM samples")
    cells = [(h, v, i) for _, h, v, i, _, _ in after]
    assert len(cells) == len(set(cells)) == 2 * 2 * 6
    assert set(cells) == {(h, v, i) for h in ("left", "right")
                          for v in ("c-fused", "c-wrapped")
                          for i in range(6)}
    # What was there is untouched; everything is correct.
    old = {row[0]: row[1:] for row in before}
    want = sha3_chain(200000)
    for sid, h, v, i, digest, valid in after:
        if sid in old:
            assert old[sid] == (h, v, i)
        assert digest == want and valid == 1
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]


def test_busy_pinned_cpu_is_flagged_as_drift(tmp_path, sides):
    """A process spinning on the pinned CPU shows in the window's snapshots
    and the report warns about it."""
    two_hosts(tmp_path / "hosts.toml", sides)
    spinner = subprocess.Popen(
        ["/usr/bin/python3", "-c", "import os\nos.sched_setaffinity(0, {0})"
         "\nwhile True:\n    pass"])
    try:
        r = seqorch(tmp_path, *RUN, "--hosts", "left", "--steps", "100000",
                    "--samples", "2")
    finally:
        spinner.kill()
        spinner.wait()
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    (drift,), = query(db, "SELECT drift FROM windows")
    assert drift and "busy on the pinned cpu" in drift
    assert "python3" in drift
    rep = seqorch(tmp_path, "report", "--latest")
    assert "drifted" in rep.stdout
