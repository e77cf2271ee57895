"""`seqorch run` and `seqorch deploy` over SSH, end to end, on real sshd
instances on 127.0.0.X (tests/sshd.py): several hosts at once, a compiler
sweep, and the failures a long run must survive or record: an sshd killed
mid-run (then the run resumed), a connection dropped or frozen mid-window,
dropped while waiting for the window or after the agent's last record, an
agent killed on its host, a failed build, a host that is down or never
speaks SSH, an untrusted host key, Ctrl-C during a run and during a build,
two coordinators sharing a host, a workdir with a space and a quote, and
`seqorch deploy` cold, warm and with failures.

Every test drives ./seqorch as a user would, with a clean environment (a
HOME without keys or ssh-agent), and checks results.db.  The runs use
small --steps/--samples and two variants; the tests that act in the middle
of a run wait for samples to reach the database rather than sleeping."""
import itertools
import os
import pty
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from conftest import SEQORCH, agent_pids, gcc_build, seed_build
from lib_common import dead_port
import sshd
from sshd import (free_endpoint, sshd_factory, user_key,  # noqa: F401
                  write_hosts_toml)
from lib_ssh_runs import hosts  # noqa: F401 (a fixture)
from lib_ssh_runs import (LONG_STEPS, VARIANTS, check_samples, clean_env,
                          finish, finished_samples, integrity_ok, nsamples,
                          q, run, run_args, start, wait_for, write_hosts)


def test_three_hosts_end_to_end(tmp_path, hosts):
    servers = hosts("genoa", "graviton", "m4")
    write_hosts(tmp_path, servers)
    steps, samples = LONG_STEPS, 2
    r = run(tmp_path, steps, samples)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    names = {s.name for s in servers}
    (run_id, status), = q(db, "SELECT id, status FROM runs")
    assert status == "ok", r.stderr
    assert set(q(db, "SELECT host, status FROM run_hosts")) == \
        {(n, "ok") for n in names}
    for n in names:
        rows = check_samples(db, n, steps, samples)
        assert len(rows) == samples * len(VARIANTS)
    # One build per host, fully described, from the same sources.
    builds = q(db, "SELECT host, status, compiler, compiler_version, "
               "target, source_sha256, binary_sha256, commands, openssl "
               "FROM builds")
    assert sorted(b[0] for b in builds) == sorted(names)
    for host, st, cc, version, target, src, binsum, cmds, ssl in builds:
        assert (st, cc) == ("ok", "cc"), host
        assert version and re.search(r"\d+\.\d+", version), version
        assert re.fullmatch(r"\S+-linux-gnu\S*", target), target
        assert re.fullmatch(r"[0-9a-f]{64}", src)
        assert re.fullmatch(r"[0-9a-f]{64}", binsum)
        assert cmds and ssl.startswith("OpenSSL")
    assert len({b[5] for b in builds}) == 1
    # Samples name the build of their own host.
    assert q(db, "SELECT count(*) FROM samples s JOIN builds b ON "
             "b.id = s.build_id WHERE b.host != s.host") == [(0,)]
    # One closed window per host, all open at the same time.
    wins = q(db, "SELECT host, started_at, finished_at, holder FROM windows "
             "WHERE run_id = ?", run_id)
    assert sorted(w[0] for w in wins) == sorted(names), wins
    assert all(w[2] is not None and w[1] < w[2] for w in wins), wins
    assert max(w[1] for w in wins) < min(w[2] for w in wins), wins
    assert len({w[3] for w in wins}) == 1
    assert q(db, "SELECT count(*) FROM leases") == [(0,)]

    rep = subprocess.run([str(SEQORCH), "report", "--latest"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    out = rep.stdout
    best = out.split("best valid variant per host", 1)[1]
    ratios = best.split("ratios of best rates", 1)[1]
    for n in names:
        assert re.search(rf"^\s*{n}\s+\S", best, re.M), out
    pairs = re.findall(r"^  (\S+) / (\S+) = (\d+\.\d\d)x  \[", ratios, re.M)
    assert {frozenset(p[:2]) for p in pairs} == \
        {frozenset(c) for c in itertools.combinations(names, 2)}, out
    assert all(float(p[2]) >= 1.0 for p in pairs)
    assert max(len(line) for line in out.splitlines()) <= 100


def test_sshd_killed_mid_run(tmp_path, hosts):
    servers = hosts("a", "b", "victim")
    victim = servers[2]
    write_hosts(tmp_path, servers)
    steps, samples = LONG_STEPS, 8
    total = samples * len(VARIANTS)
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        wait_for(lambda: nsamples(db, "victim") > 0,
                 "samples from the victim", p, tmp_path)
        victim.stop()       # the listener and every session: no reconnect
        at_stop = nsamples(db, "victim")
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
    assert at_stop < total, "the victim finished before its sshd stopped"
    assert rc == 1, err
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    integrity_ok(db)
    st = dict(q(db, "SELECT host, status FROM run_hosts"))
    assert st == {"a": "ok", "b": "ok", "victim": "failed"}, err
    (error,), = q(db, "SELECT error FROM run_hosts WHERE host = 'victim'")
    assert 'host "victim"' in error and victim.address in error, error
    # Its agent measures on, out of reach; what it finishes is not lost
    # (before, the error said it was).
    left = victim.workdir / "runs"
    assert re.search(r"the agent could not be stopped: .*; it may go on "
                     r"measuring, and what it finishes stays in "
                     f'"{re.escape(str(left))}/[^"]+": '
                     r"`seqorch run --resume 1` stores it\)$", error), error
    ev = q(db, "SELECT level, message FROM events WHERE host = 'victim'")
    assert ("error", error) in ev or any(
        lvl == "error" and 'host "victim"' in m for lvl, m in ev), ev
    for n in ("a", "b"):
        assert len(check_samples(db, n, steps, samples)) == total
    # What the victim sent before it went away is kept, and valid.
    kept = check_samples(db, "victim", steps, samples, complete=False)
    assert at_stop <= len(kept) < total
    # The other hosts' windows are closed; the victim's stays open.
    wins = dict(q(db, "SELECT host, finished_at FROM windows"))
    assert wins["a"] and wins["b"] and wins["victim"] is None, wins
    assert q(db, "SELECT count(*) FROM leases") == [(0,)]

    # The host is back: resuming the run stores what its agent finished,
    # with the agent's own numbers, and measures only what it missed.
    wait_for(lambda: list(left.glob("*/exit")), "the victim's agent to end")
    finished = finished_samples(victim.workdir)
    victim.start()
    r = subprocess.run([str(SEQORCH), "run", "--resume", "1"], cwd=tmp_path,
                       env=clean_env(tmp_path), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert q(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    for n in ("a", "b", "victim"):
        assert len(check_samples(db, n, steps, samples)) == total, n
    # Nothing was measured again on the hosts that had finished.
    assert q(db, "SELECT count(*) FROM samples WHERE host != 'victim'") == \
        [(2 * total,)]
    assert {(v, b, i): ns for v, b, i, ns in q(
        db, "SELECT variant, build_id, sample_index, ns FROM samples WHERE "
        "host = 'victim'") if (v, b, i) in finished} == finished
    assert dict(q(db, "SELECT host, status FROM run_hosts")) == \
        {"a": "ok", "b": "ok", "victim": "ok"}
    # The victim's first window ends by its agent's record, read now.
    assert q(db, "SELECT count(*) FROM windows WHERE finished_at IS NULL "
             "OR finished_at < started_at") == [(0,)]
    integrity_ok(db)


def test_connection_dropped_mid_window_is_collected(tmp_path, hosts):
    servers = hosts("a", "flaky")
    flaky = servers[1]
    write_hosts(tmp_path, servers)
    steps, samples = LONG_STEPS, 8
    total = samples * len(VARIANTS)
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        wait_for(lambda: nsamples(db, "flaky") > 0,
                 "samples from flaky", p, tmp_path)
        before = len(flaky.sessions())
        flaky.kill_sessions()   # the listener stays: reconnecting works
        at_drop = nsamples(db, "flaky")
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
    assert before > 0
    assert at_drop < total, "flaky finished before its connection dropped"
    assert rc == 0, err
    assert q(db, "SELECT status FROM runs") == [("ok",)]
    integrity_ok(db)
    for n in ("a", "flaky"):
        rows = check_samples(db, n, steps, samples)
        # Not lost, not duplicated: each (variant, index) exactly once.
        assert len(rows) == total
        assert sorted((v, i) for v, _, i, *_ in rows) == \
            sorted(itertools.product(VARIANTS, range(samples)))
    ev = q(db, "SELECT level, message FROM events WHERE host = 'flaky'")
    assert any(lvl == "warning" and "reconnect" in m for lvl, m in ev), ev
    assert not [m for lvl, m in ev if lvl == "error"], ev
    assert not q(db, "SELECT * FROM events WHERE host = 'a' AND level = "
                 "'error'")
    # Two connections to flaky were authenticated: the first and the one
    # the coordinator made again.
    assert flaky.log.read_text().count("Accepted publickey") >= 2
    assert dict(q(db, "SELECT host, status FROM run_hosts")) == \
        {"a": "ok", "flaky": "ok"}


def test_frozen_session_mid_window_is_collected(tmp_path, hosts):
    # The sshd serving the stream stops answering (a paused VM whose
    # kernel still does TCP): unanswered keepalives give it up, the
    # coordinator reconnects (the listener is fine) and collects the rest.
    s, = hosts("frozen")
    write_hosts(tmp_path, [s], frozen={"connect_timeout": 2})
    steps, samples = LONG_STEPS, 8
    total = samples * len(VARIANTS)
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    stopped = []
    try:
        wait_for(lambda: nsamples(db, "frozen") > 0,
                 "samples from frozen", p, tmp_path)
        stopped = s.freeze()
        at_freeze = nsamples(db, "frozen")
        rc, err = finish(p, tmp_path)
    finally:
        s.thaw(stopped)
        if p.poll() is None:
            p.kill()
    assert stopped
    assert at_freeze < total, "the run finished before the freeze"
    assert rc == 0, err
    assert q(db, "SELECT status FROM runs") == [("ok",)]
    rows = check_samples(db, "frozen", steps, samples)
    assert len(rows) == total
    ev = q(db, "SELECT level, message FROM events")
    assert any(lvl == "warning" and "reconnect" in m for lvl, m in ev), ev


def test_connection_dropped_while_waiting_for_the_window(tmp_path, hosts):
    # "a" is ready long before "slow" (its build waits 15 s), and its idle
    # connection drops meanwhile: the coordinator reconnects to launch.
    a, slow = hosts("a", "slow")
    write_hosts(tmp_path, [a, slow], slow={"build_wrapper": "sleep 15 &&"})
    steps, samples = 2000, 2
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        wait_for(lambda: "a: ready, waiting for the window" in
                 (tmp_path / "run.err").read_text(), "a to be ready", p,
                 tmp_path)
        assert "slow: ready" not in (tmp_path / "run.err").read_text()
        a.kill_sessions()
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 0, err
    assert q(db, "SELECT status FROM runs") == [("ok",)]
    for n in ("a", "slow"):
        assert len(check_samples(db, n, steps, samples)) == \
            samples * len(VARIANTS)
    ev = q(db, "SELECT level, message FROM events WHERE host = 'a'")
    assert any(lvl == "warning" and "reconnect" in m for lvl, m in ev), ev


def agent_wrappers(workdir):
    """Pids of the `sh -c` that runs a detached agent in workdir/runs/ and
    writes its exit file when it ends: the parents of the agents that have
    started.  Not matched by its command line: the child it forks for the
    agent has that command line too until it execs the agent, and a child
    stopped there never starts the agent (CI saw the done record never
    come, and the agent start once the test gave up)."""
    out = []
    for pid in agent_pids(workdir):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            argv = Path(f"/proc/{ppid}/cmdline").read_bytes().decode(
                errors="replace").split("\0")
        except (OSError, ValueError):
            continue
        if (len(argv) > 2 and argv[1] == "-c" and "nohup" not in argv[2]
                and f"{workdir}/runs/" in argv[2] and "wait $!" in argv[2]):
            out.append(ppid)
    return out


def test_connection_dropped_after_the_done_record(tmp_path, hosts):
    # The agent's exit file is held back (its wrapper shell is stopped), so
    # the done record has arrived while the stream command still runs;
    # then the connection drops.  Nothing is missing: the host is ok.
    a, = hosts("a")
    write_hosts(tmp_path, [a])
    steps, samples = LONG_STEPS, 2
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    held = []
    try:
        # Stopped once it wrote the agent's pid (the stream waits for
        # that file) and the agent runs.
        held = wait_for(lambda: [
            f for f in a.workdir.glob("runs/*/pid")
            if f.read_text().strip()] and agent_wrappers(a.workdir),
            "the agent's wrapper", p, tmp_path)
        for pid in held:
            os.kill(pid, signal.SIGSTOP)
        records = wait_for(lambda: list(a.workdir.glob("runs/*/records")),
                           "the records file", p, tmp_path)
        wait_for(lambda: '"type":"done"' in records[0].read_text() and
                 q(db, "SELECT count(*) FROM windows WHERE finished_at IS "
                   "NOT NULL") == [(1,)], "the done record", p, tmp_path)
        time.sleep(4)       # the stream polls every second
        assert p.poll() is None
        a.kill_sessions()
        time.sleep(3)
    except BaseException:
        p.kill()
        raise
    finally:
        for pid in held:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
    rc, err = finish(p, tmp_path)
    assert len(check_samples(db, "a", steps, samples)) == \
        samples * len(VARIANTS)
    assert q(db, "SELECT host, status, error FROM run_hosts") == \
        [("a", "ok", None)], err
    assert rc == 0, err
    assert q(db, "SELECT status FROM runs") == [("ok",)]
    # The drop is on record, as a warning.
    ev = q(db, "SELECT level, message FROM events WHERE host = 'a'")
    assert any(lvl == "warning" and "connection" in m for lvl, m in ev), ev


def test_agent_killed_on_the_host(tmp_path, hosts):
    a, b = hosts("a", "b")
    write_hosts(tmp_path, [a, b])
    steps, samples = LONG_STEPS, 8
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        wait_for(lambda: nsamples(db, "a") > 0, "samples from a", p,
                 tmp_path)
        for pid in agent_pids(a.workdir):
            os.kill(pid, signal.SIGKILL)
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 1, err
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    (st, error), = q(db, "SELECT status, error FROM run_hosts WHERE "
                     "host = 'a'")
    assert st == "failed"
    assert error == "agent (cc) died of signal 9 before its done record"
    assert ("error", error) in q(db, "SELECT level, message FROM events "
                                 "WHERE host = 'a'")
    kept = check_samples(db, "a", steps, samples, complete=False)
    assert 0 < len(kept) < samples * len(VARIANTS)
    assert len(check_samples(db, "b", steps, samples)) == \
        samples * len(VARIANTS)
    integrity_ok(db)


def test_two_coordinators_share_an_ssh_host(tmp_path, hosts):
    # Different databases, so no common lease: the host lock in the
    # workdir serializes their windows, and the one that waits says so.
    a, = hosts("a")
    write_hosts(tmp_path, [a])
    other = tmp_path / "other"
    other.mkdir()
    (other / "hosts.toml").write_text((tmp_path / "hosts.toml").read_text())
    db1, db2 = tmp_path / "results.db", other / "results.db"
    p1 = start(tmp_path, LONG_STEPS, 10)
    p2 = None
    try:
        wait_for(lambda: nsamples(db1, "a") > 0, "samples of the first run",
                 p1, tmp_path)
        p2 = start(other, LONG_STEPS, 2)
        rc1, err1 = finish(p1, tmp_path)
        rc2, err2 = finish(p2, other)
    finally:
        for p in (p1, p2):
            if p is not None and p.poll() is None:
                p.kill()
    assert (rc1, rc2) == (0, 0), err1 + err2
    (start1, end1), = q(db1, "SELECT started_at, finished_at FROM windows")
    (start2, end2), = q(db2, "SELECT started_at, finished_at FROM windows")
    assert end1 < start2, ((start1, end1), (start2, end2))
    (pid1,) = {int(x) for x in re.findall(r"pid (\d+)", q(
        db1, "SELECT holder FROM windows")[0][0])}
    assert pid1 == p1.pid
    ev = q(db2, "SELECT level, message FROM events WHERE message LIKE "
           "'waiting for the host lock%'")
    assert ev and ev[0][0] == "info" and f"pid {p1.pid}" in ev[0][1], ev
    assert len(check_samples(db1, "a", LONG_STEPS, 10)) == 10 * len(VARIANTS)
    assert len(check_samples(db2, "a", LONG_STEPS, 2)) == 2 * len(VARIANTS)


def test_build_failure_on_one_host(tmp_path, hosts):
    servers = hosts("a", "b", "c")
    write_hosts(tmp_path, servers, b={"cc": "/nonexistent/cc"})
    steps, samples = 2000, 2
    r = run(tmp_path, steps, samples)
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    integrity_ok(db)
    builds = {h: (st, cc, log) for h, st, cc, log in q(
        db, "SELECT host, status, compiler, log FROM builds")}
    st, cc, log = builds["b"]
    assert (st, cc) == ("failed", "/nonexistent/cc")
    assert log and "/nonexistent/cc" in log, log
    assert builds["a"][0] == builds["c"][0] == "ok"
    (bid,), = q(db, "SELECT id FROM builds WHERE host = 'b'")
    vs = q(db, "SELECT variant, status, reason FROM variants WHERE "
           "host = 'b'")
    # Only the variants the run asked for.
    assert sorted(vs) == [(v, "unavailable", "build failed")
                          for v in sorted(VARIANTS)], vs
    assert q(db, "SELECT count(*) FROM samples WHERE host = 'b'") == [(0,)]
    for n in ("a", "c"):
        assert len(check_samples(db, n, steps, samples)) == \
            samples * len(VARIANTS)
    st = dict(q(db, "SELECT host, status FROM run_hosts"))
    assert st == {"a": "ok", "b": "failed", "c": "ok"}
    ev = q(db, "SELECT level, message FROM events WHERE host = 'b'")
    assert any(lvl == "error" and "/nonexistent/cc" in m for lvl, m in ev)
    rep = subprocess.run([str(SEQORCH), "report", "--latest"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    assert re.search(r'^  build \d+ \(/nonexistent/cc\) on "b" failed$',
                     rep.stdout, re.M), rep.stdout
    assert 'host "b" failed' in rep.stdout


def test_failed_build_marks_the_runs_variants_unavailable(tmp_path, hosts):
    s, = hosts("b")
    write_hosts(tmp_path, [s], b={"cc": "/nonexistent/cc"})
    r = run(tmp_path, 2000, 1)
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("failed",)]
    vs = q(db, "SELECT variant, status, reason FROM variants")
    assert sorted(vs) == [(v, "unavailable", "build failed")
                          for v in sorted(VARIANTS)]
    rep = subprocess.run([str(SEQORCH), "report", "--latest"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    # A warning wider than 80 columns goes on under itself, 4 in.
    flat = re.sub(r"\n {4}(?=\S)", " ", rep.stdout)
    assert re.search(r'^  variants (c-fused|openssl-evp), (c-fused|'
                     r'openssl-evp) on "b" \(/nonexistent/cc\) unavailable: '
                     r'build failed$', flat, re.M), rep.stdout


def test_host_down_at_start(tmp_path, hosts):
    servers = hosts("a", "b")
    addr, _ = free_endpoint()
    port = dead_port(addr)
    entries = {s.name: s.host_entry(cpu=i) for i, s in enumerate(servers)}
    entries["down"] = dict(servers[0].host_entry(), address=addr, port=port,
                           connect_timeout=3)
    write_hosts_toml(tmp_path / "hosts.toml", entries)
    steps, samples = 2000, 2
    t = time.monotonic()
    r = run(tmp_path, steps, samples)
    elapsed = time.monotonic() - t
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    st = dict(q(db, "SELECT host, status FROM run_hosts"))
    assert st == {"a": "ok", "b": "ok", "down": "failed"}
    (error,), = q(db, "SELECT error FROM run_hosts WHERE host = 'down'")
    assert (f'host "down": connect to {addr}:{port}: connection refused'
            in error), error
    ev = q(db, "SELECT level, message FROM events WHERE host = 'down'")
    assert any(lvl == "error" and 'host "down"' in m and "connect" in m
               for lvl, m in ev), ev
    assert f'host "down": connect to {addr}:{port}' in r.stderr
    for n in ("a", "b"):
        assert len(check_samples(db, n, steps, samples)) == \
            samples * len(VARIANTS)
    assert q(db, "SELECT count(*) FROM samples WHERE host = 'down'") == \
        [(0,)]
    assert q(db, "SELECT count(*) FROM builds WHERE host = 'down'") == [(0,)]
    assert elapsed < 300, elapsed


def test_stalled_host_fails_in_time(tmp_path, hosts):
    # Accepts TCP connections (the kernel does) but never speaks SSH.
    a, = hosts("a")
    addr, _ = free_endpoint()
    stall = socket.socket()
    stall.bind((addr, 0))
    stall.listen(8)
    try:
        write_hosts_toml(tmp_path / "hosts.toml", {
            "a": a.host_entry(cpu=0),
            "stall": dict(a.host_entry(), address=addr,
                          port=stall.getsockname()[1], connect_timeout=2)})
        steps, samples = 2000, 2
        r = run(tmp_path, steps, samples)
    finally:
        stall.close()
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    (error,), = q(db, "SELECT error FROM run_hosts WHERE host = 'stall'")
    assert re.fullmatch(r'host "stall": ssh handshake with [\d.:]+: timed '
                        r'out after 2 s', error), error
    assert len(check_samples(db, "a", steps, samples)) == \
        samples * len(VARIANTS)
    # The window did not wait for it: a's samples came after its failure.
    (failed_at,), = q(db, "SELECT at FROM events WHERE host = 'stall' "
                      "AND level = 'error'")
    (first,), = q(db, "SELECT min(received_at) FROM samples")
    assert failed_at < first


def test_untrusted_host_key_is_refused(tmp_path, hosts):
    good, = hosts("good")
    # An empty workdir, so that the listing below shows nothing arrived.
    stranger, = hosts("stranger", prebuilt=False)
    stranger.forget()
    write_hosts(tmp_path, [good, stranger])
    steps, samples = 2000, 2
    r = run(tmp_path, steps, samples)
    assert r.returncode == 1, r.stderr
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("partial",)]
    (error,), = q(db, "SELECT error FROM run_hosts WHERE host = 'stranger'")
    assert f"host key for {stranger.known_name} is not in known_hosts" \
        in error, error
    assert stranger.host_fingerprint in error
    assert 'run "seqorch hosts trust stranger"' in error, error
    # Nothing about it is stored as a result, and nothing ran there.
    for table in ("samples", "builds", "variants", "windows"):
        assert q(db, f"SELECT count(*) FROM {table} WHERE host = "
                 "'stranger'") == [(0,)], table
    assert q(db, "SELECT facts, openssl FROM run_hosts WHERE host = "
             "'stranger'") == [(None, None)]
    assert stranger.known_hosts.read_text() == ""
    assert "Accepted publickey" not in stranger.log.read_text()
    assert os.listdir(stranger.workdir) == []
    assert len(check_samples(db, "good", steps, samples)) == \
        samples * len(VARIANTS)


def test_run_prints_the_whole_host_error(tmp_path, hosts):
    stranger, = hosts("stranger")
    stranger.forget()
    write_hosts(tmp_path, [stranger])
    r = run(tmp_path, 2000, 1)
    assert r.returncode == 1, r.stderr
    assert 'run "seqorch hosts trust stranger"' in r.stderr, r.stderr
    assert stranger.host_fingerprint in r.stderr


def test_live_progress_ends_with_the_whole_host_error(tmp_path, hosts):
    # On a terminal the live lines are cut to fit; the failure is then
    # said whole after them.
    stranger, = hosts("stranger")
    stranger.forget()
    write_hosts(tmp_path, [stranger])
    master, slave = pty.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        p = subprocess.run(run_args(2000, 1), cwd=tmp_path,
                           env=dict(clean_env(tmp_path), TERM="xterm"),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=slave, timeout=600)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    err = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    assert p.returncode == 1, err
    assert "\033[" in err, "not drawn as live lines"
    last = [line for line in err.splitlines()
            if line.startswith('seqorch: host "stranger" failed: ')]
    assert len(last) == 1, err
    assert 'run "seqorch hosts trust stranger"' in last[0], err
    assert stranger.host_fingerprint in last[0]


def test_ctrl_c_during_a_long_build(tmp_path, hosts):
    a, slow = hosts("a", "slow")
    write_hosts(tmp_path, [a, slow], slow={"build_wrapper": "sleep 45 &&"})
    p = start(tmp_path, 2000, 2)
    try:
        wait_for(lambda: "slow: building with cc" in
                 (tmp_path / "run.err").read_text() and
                 "sleep" in slow.session_commands().values(),
                 "the slow build", p, tmp_path)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc, err = finish(p, tmp_path, timeout=180)
        elapsed = time.monotonic() - t
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 130, err
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM runs") == [("interrupted",)]
    assert q(db, "SELECT count(*) FROM leases") == [(0,)]
    # Stopped at once, as a running agent is, not after the build.
    assert elapsed < 15, elapsed


def test_ctrl_c_during_ssh_run(tmp_path, hosts):
    servers = hosts("a", "b")
    write_hosts(tmp_path, servers)
    steps, samples = LONG_STEPS, 50
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples)
    try:
        wait_for(lambda: all(agent_pids(s.workdir) for s in servers) and
                 all(nsamples(db, s.name) > 0 for s in servers),
                 "samples from both hosts", p, tmp_path)
        for s in servers:
            assert subprocess.run(
                ["pgrep", "-f", f"{s.workdir}/build/.*/seqorch-agent"],
                stdout=subprocess.DEVNULL).returncode == 0, s.name
        p.send_signal(signal.SIGINT)
        rc, err = finish(p, tmp_path, timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 130, err
    assert q(db, "SELECT status FROM runs") == [("interrupted",)]
    assert set(q(db, "SELECT host, status FROM run_hosts")) == \
        {("a", "interrupted"), ("b", "interrupted")}
    integrity_ok(db)
    for s in servers:
        kept = check_samples(db, s.name, steps, samples, complete=False)
        assert 0 < len(kept) < samples * len(VARIANTS)
        # The detached agent was stopped, not left measuring.
        wait_for(lambda: not agent_pids(s.workdir) and subprocess.run(
            ["pgrep", "-f", f"{s.workdir}/build/.*/seqorch-agent"],
            stdout=subprocess.DEVNULL).returncode == 1,
            f"the agent on {s.name} to exit", timeout=30)
    assert q(db, "SELECT count(*) FROM leases") == [(0,)]
    assert q(db, "SELECT event FROM lease_events ORDER BY id") == \
        [("acquired",), ("released",)]


DEPLOY_ROW = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(.*)$")


def deploy(tmp_path):
    r = subprocess.run([str(SEQORCH), "deploy"], cwd=tmp_path,
                       env=clean_env(tmp_path), capture_output=True,
                       text=True, timeout=600)
    lines = r.stdout.splitlines()
    assert lines and lines[0].split()[:4] == ["host", "files", "bytes",
                                              "builds"], r.stdout
    rows = {}
    for line in lines[1:]:
        m = DEPLOY_ROW.match(line)
        assert m, line
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)),
                            int(m.group(4)), m.group(6))
    return r, rows


def test_deploy_over_ssh_then_cached(tmp_path, hosts, gcc_clang,
                                    tmp_path_factory):
    """b builds with two compilers, clang cold, while its workdir holds
    a copy of the session's gcc build (conftest's gcc_clang), and a's
    the session's build of cc (sshd.py): each deploy finds those by
    their keys and does not build them again, though the sources are
    uploaded.  A run on b then measures under both deployed builds (the
    compiler sweep) without building again."""
    servers = hosts("a", "b")
    seed_build(servers[1].workdir, gcc_build(gcc_clang, tmp_path_factory),
               sshd.test_user()[1:])
    write_hosts(tmp_path, servers, b={"cc": ["gcc", "clang"]})
    r, rows = deploy(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(rows) == {"a", "b"}
    for name, ncc in (("a", 0), ("b", 1)):
        files, nbytes, builds, status = rows[name]
        assert files > 0 and nbytes > 0, rows
        assert builds == ncc and status == "ok", rows
    seen = {s.name: len(s.log.read_text()) for s in servers}
    r, rows = deploy(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rows == {"a": (0, 0, 0, "ok"), "b": (0, 0, 0, "ok")}, r.stdout
    # The warm deploy ran no command (no login shell): one SFTP session.
    time.sleep(0.2)
    for s in servers:
        log = s.log.read_text()[seen[s.name]:]
        assert re.findall(r"Starting session: (\S+)", log) == ["subsystem"], \
            log
    # Deploying measures nothing and needs no database.
    assert not (tmp_path / "results.db").exists()
    compiler_sweep(tmp_path, servers[1])


def compiler_sweep(tmp_path, s):
    """A run of both of s's compilers, deployed already: every variant is
    measured under each build, and nothing is built again."""
    write_hosts(tmp_path, [s], **{s.name: {"cc": ["gcc", "clang"]}})
    deployed = sorted(os.listdir(s.workdir / "build"))
    steps, samples = 2000, 2
    r = run(tmp_path, steps, samples)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(s.workdir / "build")) == deployed
    db = tmp_path / "results.db"
    builds = dict(q(db, "SELECT compiler, id FROM builds WHERE status = "
                    "'ok'"))
    assert sorted(builds) == ["clang", "gcc"]
    versions = dict(q(db, "SELECT compiler, compiler_version FROM builds"))
    assert "clang" in versions["clang"] and "gcc" in versions["gcc"].lower()
    # Every variant is measured under each build, every sample says which.
    rows = check_samples(db, s.name, steps, samples)
    assert {(v, b) for v, b, *_ in rows} == \
        {(v, b) for v in VARIANTS for b in builds.values()}
    assert len(rows) == len(VARIANTS) * 2 * samples
    assert set(q(db, "SELECT build_id, variant, status FROM variants")) == \
        {(b, v, "ok") for v in VARIANTS for b in builds.values()}
    # The best is a (variant, compiler) pair, as the summary view says.
    (variant, compiler), = q(
        db, "SELECT variant, compiler FROM summary ORDER BY median_rate "
        "DESC LIMIT 1")
    rep = subprocess.run([str(SEQORCH), "report", "--latest"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    best = rep.stdout.split("best valid variant per host", 1)[1]
    assert re.search(rf"^\s*{s.name}\s+{re.escape(variant)} \({compiler}\)"
                     r"\s", best, re.M), rep.stdout


def test_deploy_reports_failures_one_line_per_host(tmp_path, hosts):
    a, bad = hosts("a", "bad")
    addr, _ = free_endpoint()
    port = dead_port(addr)
    write_hosts_toml(tmp_path / "hosts.toml", {
        "a": a.host_entry(),
        "bad": bad.host_entry(cc="/nonexistent/cc"),
        "down": dict(a.host_entry(), address=addr, port=port)})
    r, rows = deploy(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert set(rows) == {"a", "bad", "down"}, r.stdout
    assert rows["a"][3] == "ok"
    assert rows["down"][:3] == (0, 0, 0)
    assert rows["down"][3].startswith(
        f'host "down": connect to {addr}:{port}: connection refused')
    assert rows["bad"][2] == 1
    assert rows["bad"][3].startswith('build with "/nonexistent/cc" failed')


def test_run_in_a_workdir_with_a_space_and_a_quote(tmp_path, hosts):
    # An empty workdir: the listing below shows nothing landed beside the
    # literal directory.
    a, = hosts("a", prebuilt=False)
    workdir = f"{a.workdir}/it's a dir"
    write_hosts(tmp_path, [a], a={"workdir": workdir})
    steps, samples = 2000, 2
    r = run(tmp_path, steps, samples)
    db = tmp_path / "results.db"
    assert q(db, "SELECT status FROM builds") == [("ok",)], q(
        db, "SELECT log FROM builds")
    assert r.returncode == 0, r.stderr
    assert len(check_samples(db, "a", steps, samples)) == \
        samples * len(VARIANTS)
    # Everything went where it was told, under the literal directory.
    assert set(os.listdir(workdir)) >= {"build", "runs", "src"}
    assert sorted(os.listdir(a.workdir)) == ["it's a dir"]


def test_cflags_are_not_globbed(tmp_path, hosts):
    a, = hosts("a")
    write_hosts(tmp_path, [a], a={"cflags": "-O2 agent/*.c"})
    r = run(tmp_path, 2000, 1)
    assert r.returncode == 1
    (status, commands), = q(tmp_path / "results.db",
                            "SELECT status, commands FROM builds")
    assert status == "failed"
    # The word reached the compiler as written (which then rejects it):
    # the first command is the libs probe, which runs it with the flags.
    first = commands.splitlines()[0]
    assert first.startswith("sh kernels/registry.sh libs cc -O2 agent/*.c "), \
        first
