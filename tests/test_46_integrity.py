"""Regression tests of issue 10, on the local host: a resume measures every
requested variant, a run never replays another run's records, an agent
binary that is not the one built is refused, the database path must be a
file, and agent protocol gaps fail the host naming the line."""
import json
import os
import pwd
import re
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

from conftest import (AGENT, SEQORCH, agent_pids, execute, query, seed_build,
                      seqorch, sha3_chain, write_hosts)
from lib_common import wait_for
from sshd import TEST_USER, sshd_factory, user_key  # noqa: F401

RUN = ["run", "--study", "sha3", "--hosts", "local"]


def forget_variants(db, *variants):
    """What a first attempt leaves when the database filled up before these
    variants' rows: no variant row and no sample, run not finished."""
    con = sqlite3.connect(db)
    with con:
        for v in variants:
            con.execute("DELETE FROM samples WHERE variant = ?", (v,))
            con.execute("DELETE FROM variants WHERE variant = ?", (v,))
        con.execute("UPDATE runs SET status = 'failed'")
    con.close()


def test_resume_measures_variants_the_first_attempt_never_recorded(scratch):
    r = seqorch(scratch, *RUN, "--variants", "c-fused,c-wrapped,openssl-evp",
                "--steps", "2000", "--samples", "2")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    forget_variants(db, "c-wrapped", "openssl-evp")
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    rows = query(db, "SELECT variant, sample_index, digest, valid FROM "
                 "samples")
    cells = [(v, i) for v, i, _, _ in rows]
    assert sorted(cells) == sorted(
        (v, i) for v in ("c-fused", "c-wrapped", "openssl-evp")
        for i in range(2))
    assert all(d == sha3_chain(2000) and ok == 1 for _, _, d, ok in rows)
    assert "4 samples" in r.stderr, r.stderr
    assert query(db, "SELECT status FROM runs") == [("ok",)]


def test_resume_of_all_variants_expects_only_this_architecture(scratch):
    """Without --variants, a resume expects every variant built for the
    host's architecture (not the aarch64 ones on x86-64)."""
    r = seqorch(scratch, *RUN, "--steps", "1000", "--samples", "1")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    ok = {v for v, in query(db, "SELECT variant FROM variants WHERE "
                            "status = 'ok'")}
    assert "c-fused" in ok and len(ok) >= 3
    forget_variants(db, "c-fused")
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    assert "1 samples" in r.stderr, r.stderr
    got = {v for v, in query(db, "SELECT variant FROM samples")}
    assert got == ok


MUL = ["run", "--study", "mul", "--variants", "c", "--steps", "1000",
       "--samples", "2"]


def test_resume_that_adds_nothing_leaves_a_partial_run_partial(scratch,
                                                               workdir):
    """One host unreachable (a port bound and not listening refuses), the
    local one measured: the run is partial, and stays so after a resume
    that stores nothing, the host unreachable again; its summary counts
    the whole run, and the local host, with nothing missing, keeps its
    facts.  Before, the resume's own 0 samples made the run failed."""
    db = scratch / "results.db"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        write_hosts(scratch / "hosts.toml", workdir,
                    '[hosts.dead]\naddress = "127.0.0.1"\n'
                    f'port = {s.getsockname()[1]}\nconnect_timeout = 2\n')
        r = seqorch(scratch, *MUL)
        assert r.returncode == 1, r.stderr
        assert query(db, "SELECT status FROM runs") == [("partial",)]
        r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 1, r.stderr
    assert "seqorch: run 1 partial: 2 samples (0 invalid), 0 of them " \
        "stored by this resume, 1 host ok, 1 failed\n" in r.stderr, r.stderr
    assert query(db, "SELECT status, resumes FROM runs") == [("partial", 1)]
    assert query(db, "SELECT host, status, pin_cpu FROM run_hosts ORDER BY "
                 "host") == [("dead", "failed", None), ("local", "ok", 0)]


ADAPT = ["run", "--study", "sha3", "--hosts", "local", "--variants",
         "c-fused,c-wrapped,openssl-evp", "--steps", "300000"]


def interrupted_adaptive(path, *args, until):
    """A --max-cv run of ADAPT and args, interrupted (SIGINT) once the
    query until counts something; returns the database."""
    db = path / "results.db"
    err = open(path / "run.err", "w")
    p = subprocess.Popen([str(SEQORCH), *ADAPT, *map(str, args)], cwd=path,
                         stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    try:
        wait_for(lambda: query(db, until)[0][0] > 0, "samples", p, path,
                 ignore=sqlite3.Error)
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 130, (path / "run.err").read_text()
    assert query(db, "SELECT status FROM runs") == [("interrupted",)]
    return db


def cells(db):
    """variant -> {sample index: (id, host_position, reason)}."""
    out = {}
    for v, i, sid, pos, why in query(db, "SELECT variant, sample_index, id, "
                                     "host_position, reason FROM samples "
                                     "WHERE warmup = 0"):
        assert i not in out.setdefault(v, {}), (v, i)
        out[v][i] = (sid, pos, why)
    return out


def test_resume_of_an_adaptive_run_gives_its_extra_rounds(scratch):
    """A --max-cv run interrupted during its extra rounds: the resume gives
    each variant still too spread out its extra rounds up to
    --max-samples, after every index and place the run stored, judged on
    every sample stored (a variant whose stored samples agree, here made
    so, gets nothing).  Before, every planned cell was there, the resume
    said "nothing missing", and the run ended with variants judged
    unstable and never given the rounds asked for."""
    # A spread no real variant meets: each takes its 8 samples.
    db = interrupted_adaptive(scratch, "--samples", 2, "--max-cv",
                              "0.0001%", "--max-samples", 8,
                              until="SELECT count(*) FROM samples WHERE "
                              "sample_index >= 2")
    before = cells(db)
    assert all(len(c) < 8 for c in before.values()), before
    assert all(set(range(2)) <= set(c) for c in before.values()), before
    # openssl-evp's samples made steady: cv 0, nothing more to take.
    execute(db, ("UPDATE samples SET ns = (SELECT min(ns) FROM samples "
                 "WHERE variant = 'openssl-evp') WHERE variant = "
                 "'openssl-evp'",))
    last = max(i for c in before.values() for i in c)
    end = max(pos for c in before.values() for _, pos, _ in c.values())
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    after = cells(db)
    assert after["openssl-evp"] == before["openssl-evp"]
    for v in ("c-fused", "c-wrapped"):
        new = {i: x for i, x in after[v].items() if i not in before[v]}
        # What was stored stays as it was.
        assert {i: after[v][i] for i in before[v]} == before[v]
        assert len(after[v]) == 8, (v, after[v])
        assert min(new) > last, (v, last, sorted(new))
        for i, (_, pos, why) in new.items():
            assert pos > end, (v, i, pos, end)
            assert re.fullmatch(r"cv [0-9.e+-]+% > 0\.0001% after \d+ "
                                r"samples \(\d+ stored before the "
                                r"resume\)", why), why
    positions = [pos for c in after.values() for _, pos, _ in c.values()]
    assert len(positions) == len(set(positions))
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    # Nothing more to give (an ok run is not resumed at all, so marked
    # interrupted again): every variant steady or at --max-samples, the
    # resume starts no agent.
    execute(db, ("UPDATE runs SET status = 'interrupted'",))
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    assert "0 of them stored by this resume" in r.stderr, r.stderr
    assert cells(db) == after
    assert query(db, "SELECT count(*) FROM windows") == [(2,)]


def test_resume_during_planned_samples_judges_the_stored_ones(scratch):
    """A --max-cv run interrupted during its planned samples: the resumed
    agent's extra rounds are decided on the samples stored before it too.
    A stored sample 100 times the others (made so) keeps c-fused over
    --max-cv 50% up to --max-samples; before, the resumed agent judged its
    own few samples, found them steady, and stopped short."""
    db = interrupted_adaptive(scratch, "--samples", 4, "--max-cv", "50%",
                              "--max-samples", 6,
                              until="SELECT count(*) >= 4 FROM samples")
    before = cells(db)
    # Round 0 stored (so re-timed by no one), the planned ones not all.
    assert all(0 in c for c in before.values()), before
    assert sum(len(c) for c in before.values()) < 3 * 4, before
    execute(db, ("UPDATE samples SET ns = ns * 100 WHERE variant = "
                 "'c-fused' AND sample_index = 0",))
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    after = cells(db)
    assert sorted(after["c-fused"]) == list(range(6))
    for v, c in after.items():
        assert set(range(4)) <= set(c) and len(c) <= 6, (v, sorted(c))
    for i in (4, 5):
        assert "stored before the resume" in after["c-fused"][i][2]
    positions = [pos for c in after.values() for _, pos, _ in c.values()]
    assert len(positions) == len(set(positions))
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]


def test_resume_of_a_run_another_machine_marks_running(scratch):
    """A run marked running by a coordinator on another machine (a copied
    database, a renamed host): this one cannot tell whether it lives, so
    the resume refuses, naming --take-over, which resumes it."""
    r = seqorch(scratch, *MUL)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    execute(db, ("DELETE FROM samples WHERE sample_index = 1",),
            ("UPDATE runs SET status = 'running', coordinator = "
             "'elsewhere.invalid pid 4242'",))
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 1, r.stderr
    assert 'run 1 is still running on "elsewhere.invalid" (pid 4242), or ' \
        "its coordinator there stopped without ending it: this machine " \
        'cannot tell; resume it on "elsewhere.invalid", or add --take-over ' \
        "if that coordinator is gone" in r.stderr, r.stderr
    assert query(db, "SELECT status, resumes FROM runs") == [("running", 0)]
    assert "stopped" not in seqorch(scratch, "report").stdout
    # On this machine, a coordinator that is gone: the report says so
    # (pid 4194304 is above any pid_max).
    execute(db, ("UPDATE runs SET coordinator = ?",
                 f"{socket.gethostname()} pid 4194304"))
    text = seqorch(scratch, "report").stdout
    assert "run 1: running\n  stopped   its coordinator (pid 4194304 on " \
        "this machine) is gone: `seqorch run\n    --resume 1` finishes it\n" \
        in text, text
    r = seqorch(scratch, "run", "--resume", "1", "--take-over")
    assert r.returncode == 0, r.stderr
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    # Two samples (1 variant x 2) again: the one the resume measured.
    assert query(db, "SELECT count(*) FROM samples WHERE valid = 1") == \
        [(2,)]


def test_resume_refuses_host_settings_changed_since_the_run(scratch,
                                                            workdir):
    """A host's compilers, cflags or cpu changed in hosts.toml, or a host
    added to the run's selection: the resume refuses, naming what and
    both values, and changes nothing.  Before, it measured with the new
    settings (a second build, pinned and unpinned samples mixed) and said
    ok."""
    r = seqorch(scratch, *MUL)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    execute(db, ("DELETE FROM samples WHERE sample_index = 1",),
            ("UPDATE runs SET status = 'interrupted'",))
    state = ("SELECT (SELECT group_concat(status || resumes) FROM runs), "
             "(SELECT count(*) FROM samples), (SELECT count(*) FROM "
             "builds), (SELECT group_concat(pin_cpu) FROM run_hosts)")
    before = query(db, state)
    hosts = scratch / "hosts.toml"
    toml = hosts.read_text()
    for text, why in [
            (toml + 'cflags = "-O0"\n',
             'host "local": cflags is now "-O0", the run was built with '
             '"-O3"'),
            (toml + 'cc = ["cc", "gcc"]\n',
             'host "local": cc is now ["cc", "gcc"], the run was built '
             'with ["cc"]'),
            (toml.replace("cpu = 0", "cpu = 999"),
             "host \"local\": cpu is now 999, the run's agents were asked "
             "for 0"),
            (toml + f'[hosts.more]\ntransport = "local"\n'
             f'workdir = "{workdir}"\n',
             'host "more" was not in the run, and hosts.toml selects it '
             'now')]:
        hosts.write_text(text)
        r = seqorch(scratch, "run", "--resume", "1")
        assert r.returncode == 2, r.stderr
        assert r.stderr == f"seqorch: run 1: {why}: resume with the run's " \
            "settings, or start a new run\n"
        assert query(db, state) == before
    hosts.write_text(toml)
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    assert query(db, "SELECT count(*) FROM samples") == [(2,)]


def test_runs_in_fresh_pid_namespaces_each_measure(tmp_path, agent_build):
    """Two runs, each in a fresh PID namespace (the coordinator is pid 1
    both times) with its own database, on one workdir: the second one
    measures instead of replaying the first one's records, and no run
    directory is left behind."""
    workdir = seed_build(tmp_path / "work", agent_build)
    got = []
    for i in range(2):
        d = tmp_path / f"run{i}"
        d.mkdir()
        (d / "hosts.toml").write_text(
            f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
            f'workdir = "{workdir}"\n')
        r = subprocess.run(
            ["unshare", "-pf", "--mount-proc", str(SEQORCH), *RUN,
             "--variants", "c-fused", "--steps", "20000", "--samples",
             "3"], cwd=d, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        got.append(query(d / "results.db", "SELECT sample_index, ns FROM "
                         "samples ORDER BY sample_index"))
    assert len(got[0]) == len(got[1]) == 3
    # Three nanosecond timings of ~1 ms do not repeat exactly.
    assert got[0] != got[1]
    assert list((workdir / "runs").iterdir()) == []


def test_agent_echoes_the_run_token(tmp_path):
    out = subprocess.run([str(AGENT), "--study", "sha3", "--variants",
                          "c-fused", "--steps", "10", "--samples", "1",
                          "--token", "0123abcd"], capture_output=True,
                         text=True, check=True).stdout
    hello = json.loads(out.splitlines()[0])
    assert hello["type"] == "hello" and hello["token"] == "0123abcd"
    for bad in ("", "ABCD", "xyz", "a" * 65):
        r = subprocess.run([str(AGENT), "--study", "sha3", "--token", bad],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "invalid --token" in r.stderr, bad


def interrupt_run(tmp_path, sig, agent_build):
    """A long local run stopped with sig once samples arrive; returns
    (exit code, stderr, database, workdir, agent pids right after)."""
    workdir = seed_build(tmp_path / "work", agent_build)
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\n')
    db = tmp_path / "results.db"
    err = open(tmp_path / "run.err", "w")
    p = subprocess.Popen([str(SEQORCH), *RUN, "--variants",
                          "c-fused,c-wrapped", "--steps", "300000",
                          "--samples", "50"], cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and p.poll() is None:
            if db.exists() and query(db, "SELECT count(*) FROM "
                                     "sqlite_master WHERE name = "
                                     "'samples'") == [(1,)] and \
                    query(db, "SELECT count(*) FROM samples")[0][0] >= 2:
                break
            time.sleep(0.1)
        assert p.poll() is None, (tmp_path / "run.err").read_text()
        p.send_signal(sig)
        rc = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return rc, (tmp_path / "run.err").read_text(), db, workdir, \
        agent_pids(workdir)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_the_agent_and_keeps_what_it_finished(tmp_path, sig,
                                                              agent_build):
    rc, err, db, workdir, alive = interrupt_run(tmp_path, sig, agent_build)
    assert rc == 130, err
    # No agent outlives the run (and so its lease).
    assert alive == [], err
    stored = query(db, "SELECT count(*) FROM samples")[0][0]
    assert 2 <= stored < 100
    (msg,), = query(db, "SELECT message FROM events WHERE message LIKE "
                    "'interrupted:%'")
    assert msg.startswith("interrupted: the agent (cc) was stopped; all "
                          f"{stored} samples it finished are stored"), msg
    assert query(db, "SELECT status FROM runs") == [("interrupted",)]
    assert query(db, "SELECT count(*) FROM windows WHERE finished_at IS "
                 "NULL") == [(0,)]
    assert query(db, "SELECT drift FROM windows") == [
        ("interrupted: the agent was stopped",)]
    rows = query(db, "SELECT variant, sample_index FROM samples")
    assert len(rows) == len(set(rows))
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert list((workdir / "runs").iterdir()) == []


def local_hosts(tmp_path, workdir):
    (tmp_path / "hosts.toml").write_text(
        f'[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{workdir}"\n')


def test_replaced_agent_binary_is_refused(tmp_path, agent_build):
    workdir = seed_build(tmp_path / "work", agent_build)  # its own copy
    local_hosts(tmp_path, workdir)
    args = [*RUN, "--variants", "c-fused", "--steps", "1000", "--samples",
            "1"]
    r = seqorch(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    agent, = workdir.glob("build/*/seqorch-agent")
    # Still a working agent, just not the binary that was built.
    with open(agent, "ab") as f:
        f.write(b"\0")
    got = subprocess.run(["sha256sum", str(agent)], capture_output=True,
                         text=True, check=True).stdout.split()[0]
    r = seqorch(tmp_path, *args)
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    (built,), = set(query(db, "SELECT binary_sha256 FROM builds"))
    assert built != got
    assert f'agent binary "{agent}" is not the one built: its sha256 is ' \
        f'"{got}", the build recorded {built}; refusing to run it' in \
        r.stderr, r.stderr
    assert query(db, "SELECT run_id, count(*) FROM samples GROUP BY "
                 "run_id") == [(1, 1)]
    assert query(db, "SELECT id, status FROM runs") == [(1, "ok"),
                                                        (2, "failed")]


@pytest.mark.parametrize("mode,msg", [
    ("unrequested", 'variant record for "c-unrolled", which was not asked '
     'for'),
    ("dupdiff", 'second sample 0 of "c-'),
    ("donecount", "done counts 5 samples, 4 were sent"),
    ("endfirst", "window end before its begin"),
    ("twobegins", "window begin while the window is open"),
    ("nowindow", "sample outside the measurement window (no window begin "
     "yet)"),
    ("okfailed", 'second variant record for "c-fused" (status failed)'),
    ("selftest", "self-test chain of 1000 steps ends in f"),
    ("buildid", 'sample of build "999", but the agent was started as '
     'build 1'),
    ("waits", "wait record repeated (one at most)"),
    ("ctrl", 'error record: field "message" holds control character 0x1b '
     'at byte 5'),
])
def test_agent_protocol_gaps_fail_the_host(scratch, workdir, bad_cc, mode,
                                           msg):
    """helpers/bad_agent.py breaks one rule of the protocol per mode, in
    the agent that conftest's bad_cc built."""
    write_hosts(scratch / "hosts.toml", workdir, f'cc = "{bad_cc}"\n')
    r = seqorch(scratch, *RUN, "--variants", "c-fused,c-wrapped", "--steps",
                "500", "--samples", "2",
                env=dict(os.environ, SEQORCH_BAD_AGENT=mode))
    assert r.returncode == 1, r.stderr
    assert msg in r.stderr, r.stderr
    assert re.search(r"agent output line \d+: ", r.stderr), r.stderr
    assert "\x1b" not in r.stderr
    db = scratch / "results.db"
    assert query(db, "SELECT status FROM run_hosts") == [("failed",)]
    (run_status,), = query(db, "SELECT status FROM runs")
    assert run_status in ("partial", "failed")
    events = [m for m, in query(db, "SELECT message FROM events WHERE "
                                "level = 'error'")]
    assert any(msg in m for m in events), events
    # Nothing wrong was stored: what was stored is correct and unique.
    rows = query(db, "SELECT variant, sample_index, digest, valid, ns FROM "
                 "samples")
    assert len({(v, i) for v, i, *_ in rows}) == len(rows)
    assert all(d == sha3_chain(500) and ok == 1 for _, _, d, ok, _ in rows)
    assert all(v in ("c-fused", "c-wrapped") for v, *_ in rows)


@pytest.mark.parametrize("path,why", [
    ("", "empty: is the variable unset?"),
    (":memory:", "in memory only"),
])
def test_database_that_keeps_nothing_is_refused(scratch, path, why):
    r = seqorch(scratch, *RUN, "--variants", "c-fused", "--steps", "100",
                "--samples", "1", "--db", path)
    assert r.returncode == 3, r.stderr
    assert f'seqorch: database path "{path}" is not a file: SQLite would ' \
        f'keep nothing ({why})' in r.stderr
    assert "run 1" not in r.stderr
    assert sorted(p.name for p in scratch.iterdir()) == ["hosts.toml"]


def test_negative_schema_version_is_named(scratch):
    db = scratch / "results.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = -5")
    con.close()
    for cmd in (["report", "--latest"], ["windows"]):
        r = seqorch(scratch, *cmd)
        assert r.returncode == 3
        assert 'database: schema version -5 was not written by seqorch ' \
            '(versions run from 0 to ' in r.stderr, r.stderr
        assert "not an error" not in r.stderr


def test_bad_seed_creates_no_database(scratch):
    r = seqorch(scratch, *RUN, "--seed", "abc", "--steps", "100")
    assert r.returncode == 2
    assert 'invalid --seed "abc": study "sha3" needs 64 hex digits' in \
        r.stderr, r.stderr
    assert not (scratch / "results.db").exists()


@pytest.mark.parametrize("value", [" 5", "\t5", "5 ", "+ 5"])
def test_integer_options_take_no_blanks(scratch, value):
    r = seqorch(scratch, *RUN, "--steps", value)
    assert r.returncode == 2
    assert f'invalid --steps "{value}"' in r.stderr, r.stderr


def test_huge_port_is_echoed_exactly(tmp_path):
    (tmp_path / "hosts.toml").write_text(
        '[hosts.x]\naddress = "127.0.0.1"\nport = 9223372036854775807\n')
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2
    assert 'key "port" must be an integer from 1 to 65535, got ' \
        '9223372036854775807' in r.stderr, r.stderr


def test_control_characters_in_host_names_are_not_echoed(tmp_path):
    (tmp_path / "hosts.toml").write_text(
        '[hosts."a\\u001b[2Jb"]\naddress = "127.0.0.1"\n'
        '[hosts.ok]\naddress = "127.0.0.1"\n')
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2 and 'invalid host name "a?[2Jb"' in r.stderr
    (tmp_path / "hosts.toml").write_text('[hosts.ok]\naddress = "1.2.3.4"\n')
    r = seqorch(tmp_path, *RUN[:3], "--hosts", "x\x1b[2J\x07")
    assert r.returncode == 2 and 'unknown host "x?[2J?"' in r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr


def refuse(db, table, op):
    """A trigger that makes SQLite refuse every `op` on table."""
    con = sqlite3.connect(db)
    con.execute(f"CREATE TRIGGER refuse_{table} BEFORE {op} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} refused'); END")
    con.close()


def test_database_write_errors_are_not_dropped(scratch):
    args = [*RUN, "--variants", "c-fused", "--steps", "1000", "--samples",
            "1"]
    r = seqorch(scratch, *args)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    # The host's outcome (runner.c) and the lease's history (window.c).
    refuse(db, "run_hosts", "UPDATE OF status")
    refuse(db, "lease_events", "INSERT")
    r = seqorch(scratch, *args)
    assert r.returncode == 1, r.stderr
    assert 'seqorch: host "local": the host\'s outcome not stored: ' \
        'database: ' in r.stderr and "run_hosts refused" in r.stderr
    assert "seqorch: warning: lease event not stored: " in r.stderr
    assert "lease_events refused" in r.stderr
    assert query(db, "SELECT id, status FROM runs") == [(1, "ok"),
                                                        (2, "partial")]


def test_windows_of_a_killed_coordinator_are_not_shown_open(tmp_path,
                                                           agent_build):
    workdir = seed_build(tmp_path / "work", agent_build)
    local_hosts(tmp_path, workdir)
    db = tmp_path / "results.db"
    p = subprocess.Popen([str(SEQORCH), *RUN, "--variants", "c-fused",
                          "--steps", "300000", "--samples", "50"],
                         cwd=tmp_path, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if db.exists() and query(db, "SELECT count(*) FROM "
                                     "sqlite_master WHERE name = "
                                     "'samples'") == [(1,)] and \
                    query(db, "SELECT count(*) FROM samples")[0][0] >= 1:
                break
            assert p.poll() is None
            time.sleep(0.1)
        r = seqorch(tmp_path, "windows")
        assert r.returncode == 0 and " open " in r.stdout, r.stdout
        assert "window held now by" in r.stdout
        p.kill()
        p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in agent_pids(workdir):
            os.kill(pid, signal.SIGKILL)
    r = seqorch(tmp_path, "windows")
    assert r.returncode == 0, r.stderr
    assert " open " not in r.stdout and " cut " in r.stdout, r.stdout
    assert "never closed: its coordinator stopped before the window's " \
        "end" in r.stdout
    assert re.search(r"no one holds the measurement window now: .* is gone "
                     r"\(its process \d+ no longer runs on ", r.stdout), \
        r.stdout


@pytest.mark.parametrize("text,where", [
    (b"\n\xef\xba\xbf", "2:1"),                 # found by make fuzz
    (b'[hosts.a]\naddress = "x"\n\xc3\xa9 = 1\n', "3:1"),
    (b'[hosts.a]\nworkdir = """a\\\n  \xc3\xa9"""\n', "3:3"),
])
def test_non_ascii_outside_strings_is_a_clear_error(tmp_path, text, where):
    """toml++ 3.3 reaches __builtin_unreachable() on these (UBSan under
    make fuzz): the front end refuses them first, naming the place."""
    (tmp_path / "hosts.toml").write_bytes(text)
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2
    assert f"hosts.toml:{where}: a non-ASCII character outside a string " \
        "or comment" in r.stderr, r.stderr


def test_a_byte_order_mark_is_not_text(tmp_path):
    """A UTF-8 BOM, as some Windows editors write, starts the file without
    being part of it; anywhere else it is a non-ASCII character."""
    body = b'[hosts.a]\naddress = "x"\nuser = "u"\n'
    (tmp_path / "hosts.toml").write_bytes(b"\xef\xbb\xbf" + body)
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 0, r.stderr
    assert r.stdout == seqorch_text(tmp_path, body)
    (tmp_path / "hosts.toml").write_bytes(body + b"\xef\xbb\xbf")
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2
    assert "hosts.toml:4:1: a non-ASCII character" in r.stderr, r.stderr


def seqorch_text(tmp_path, body):
    """`hosts list` of body without a mark."""
    d = tmp_path / "plain"
    d.mkdir(exist_ok=True)
    (d / "hosts.toml").write_bytes(body)
    r = seqorch(d, "hosts", "list")
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("text", [b"[!x]\n", b"[!\0st3-120-14-uc7e-.entra 1\n",
                                  b"[[ ?]]\n"])
def test_table_header_without_a_key_is_a_clear_error(tmp_path, text):
    """toml++ 3.3 aborts on an assertion here (found by make fuzz)."""
    (tmp_path / "hosts.toml").write_bytes(text)
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2, r.stderr
    assert "hosts.toml:1:" in r.stderr and "a table header must start " \
        "with a key" in r.stderr, r.stderr


@pytest.mark.parametrize("text,where,what", [
    # found by make fuzz: toml++ scans on from a bare value through the
    # quote into the string, and reached __builtin_unreachable() there
    (b'port = 444"ZZ\xef\xbb\x97"\n', "1:8",
     "error while parsing value: could not determine value type"),
    (b's=5$/rs="s=tgenoa\xef\xb3\xbfs=:t', "1:3",
     "error while parsing value: could not determine value type"),
    (b'[defaults]\nport = 444\x01\x00wor "\xef\xbb\x97"\n', "2:11",
     "control character 0x01 (not allowed in TOML)"),
])
def test_text_toml_read_unsafely_is_a_clear_error(tmp_path, text, where,
                                                       what):
    (tmp_path / "hosts.toml").write_bytes(text)
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2, r.stderr
    assert f"hosts.toml:{where}: {what}" in r.stderr, r.stderr


def test_non_ascii_in_strings_and_comments_is_fine(tmp_path):
    (tmp_path / "hosts.toml").write_text(
        '# Zürich lab\n[hosts.a] # café\naddress = "10.0.0.1"\n'
        'user = "bench"\nworkdir = """/tmp/é\\\n  x"""\n'
        "cflags = '-O2 é'\n"
        '[hosts.b]\naddress="10.0.0.2"\nuser=\'bench\'\n'
        'cc = [ "gcc",\n  "-O2" ] # ü\n[ hosts . "c" ]\n"address" = "c"\n'
        "[hosts.'d']\naddress='d'\n", encoding="utf-8")
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 0, r.stderr
    assert "-O2 é" in r.stdout, r.stdout


def test_ssh_sessions_run_no_dotfiles(tmp_path, sshd_factory):
    """The test servers log in a user whose shell is /bin/sh (created by
    make deps or the tests): root's .bashrc never runs."""
    s = sshd_factory("a")
    if os.geteuid() == 0:
        assert s.user == TEST_USER
    assert pwd.getpwnam(s.user).pw_shell == "/bin/sh"
    out = subprocess.run(
        ["ssh", "-F", "/dev/null", "-i", str(s.user_key), "-p",
         str(s.port), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=yes",
         "-o", f"UserKnownHostsFile={s.known_hosts}",
         f"{s.user}@{s.address}", "id -un; ps -o comm= -p $$"],
        capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [s.user, "sh"]


def test_progress_of_extra_rounds_says_they_are_extra(scratch):
    """--samples 2 --max-cv no variant meets --max-samples 4: samples 3
    and 4 are extra rounds, and the progress line said "sample 3/2" of
    them, the planned count as if it were the total."""
    r = seqorch(scratch, "run", "--study", "mul", "--variants", "c",
                "--steps", "1000", "--samples", "2", "--max-cv", "0.0001%",
                "--max-samples", "4", "--hosts", "local")
    assert r.returncode == 0, r.stderr
    err = r.stderr
    assert re.search(r"^seqorch: local: \S+: sample 2/2 of c \(", err,
                     re.M), err
    for i in (3, 4):
        assert re.search(rf"^seqorch: local: \S+: sample {i} \(extra, up to "
                         r"4\) of c \(", err, re.M), err
    assert not re.search(r"sample \d+/2 of c", err.replace("sample 1/2",
                         "").replace("sample 2/2", "")), err
