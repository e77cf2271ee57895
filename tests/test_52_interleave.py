"""Builds measured in one alternating order (issue 22): a host with two
compilers runs one conductor agent (seqorch-agent --conduct) that drives
each build's agent (--serve) through one order over the (build, variant)
cells.  Everything is checked from results.db: the builds alternate in
time, each sample has its place in the host's whole order, every cell
takes every place of a round once (no position bias over the whole
order), the report gives the paired gcc/clang ratio with an interval, a
resumed run continues the same order, and a conductor or build agent
killed mid-window is handled as an agent that died."""
import json
import os
import re
import signal
import subprocess

import pytest

from conftest import SEQORCH, query, seqorch, sha3_chain, write_hosts
from lib_ssh_runs import finish, nsamples, q, wait_for

VARIANTS = ("c-fused", "openssl-evp")      # openssl-evp is the control
STEPS = 20000
SAMPLES = 8                                 # twice the cells: 2 builds x 2


def two_compilers(path, workdir):
    return write_hosts(path / "hosts.toml", workdir,
                       extra='cc = ["gcc", "clang"]\n')


def run_args(steps, samples, *extra):
    return [str(SEQORCH), "run", "--study", "sha3", "--hosts", "local",
            "--variants", ",".join(VARIANTS), "--steps", str(steps),
            "--samples", str(samples), *map(str, extra)]


@pytest.fixture(scope="module")
def run(tmp_path_factory, workdir, gcc_clang):
    d = tmp_path_factory.mktemp("interleave")
    two_compilers(d, workdir)
    r = subprocess.run(run_args(STEPS, SAMPLES), cwd=d, capture_output=True,
                       text=True, timeout=900)
    return d, r


def order(db, run_id=None):
    """(host_position, compiler, variant, sample_index, received id) of
    every sample, in the host's order."""
    return query(db, "SELECT s.host_position, b.compiler, s.variant, "
                 "s.sample_index, s.id FROM samples s JOIN builds b ON "
                 "b.id = s.build_id ORDER BY s.host_position")


def switches(rows):
    return sum(1 for a, b in zip(rows, rows[1:]) if a[1] != b[1])


def test_builds_alternate_in_one_order(run):
    d, r = run
    assert r.returncode == 0, r.stderr
    db = d / "results.db"
    rows = order(db)
    n = 2 * len(VARIANTS) * SAMPLES
    assert len(rows) == n
    # One order for the host: every place once, none missing.
    assert [p for p, *_ in rows] == list(range(n))
    # Stored as they ran: the database's ids follow the order.
    ids = [sid for *_, sid in rows]
    assert ids == sorted(ids)
    # The builds alternate: never a block of one build's samples.
    assert {c for _, c, *_ in rows} == {"gcc", "clang"}
    assert switches(rows) >= (n - 1) * 3 // 4, rows
    # Within the host's round of each index, both builds of a variant
    # sample next to each other.
    for p, c, v, i, _ in rows:
        assert p // 4 == i
    # One window for the host, not one per build.
    assert query(db, "SELECT count(*), count(finished_at) FROM windows") == \
        [(1, 1)]
    assert query(db, "SELECT DISTINCT digest, valid FROM samples") == \
        [(sha3_chain(STEPS), 1)]


def test_every_cell_takes_every_place_of_the_round(run):
    """Position bias over the whole order: in every 4 rounds (4 cells)
    each (build, variant) cell is at each place of the host's round once,
    each build's place in its own round (position) is balanced too, and
    neither build of a variant is always the first of its pair: every 4
    rounds they swap."""
    d, _ = run
    db = d / "results.db"
    rows = order(db)
    for block in (0, 1):
        cells = {}
        for p, c, v, i, _ in rows:
            if i // 4 == block:
                cells.setdefault((c, v), []).append(p - 4 * i)
        assert len(cells) == 4
        for cell, places in cells.items():
            assert sorted(places) == [0, 1, 2, 3], (block, cell, places)
    own = query(db, "SELECT b.compiler, s.variant, s.position, count(*) "
                "FROM samples s JOIN builds b ON b.id = s.build_id "
                "GROUP BY 1, 2, 3")
    assert {n for *_, n in own} == {SAMPLES // 2}, own
    first = {}
    for v in VARIANTS:
        for i in range(SAMPLES):
            (c, _), = [(c, p) for p, c, vv, ii, _ in rows
                       if vv == v and ii == i][:1]
            first[(v, c)] = first.get((v, c), 0) + 1
    assert set(first.values()) == {SAMPLES // 2}, first


def test_report_gives_the_paired_ratio(run):
    d, _ = run
    rep = seqorch(d, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    out = rep.stdout
    assert "builds against their host's baseline, paired" in out, out
    lines = [ln.split() for ln in out.splitlines()
             if ln.startswith("  local  ") and " clang " in ln and
             " gcc " in ln]
    by = {ln[1]: ln for ln in lines}
    assert set(by) == set(VARIANTS), out
    ctl = next(ln for ln in out.splitlines() if "(control)" in ln)
    assert "openssl-evp (control)" in ctl
    for v, ln in by.items():
        i = ln.index("gcc")
        assert ln[i + 1] == str(SAMPLES)            # pairs
        ratio = float(ln[i + 2].rstrip("x"))
        lo = float(ln[i + 3].strip("[,"))
        hi = float(ln[i + 4].strip("]"))
        assert 0 < lo <= ratio <= hi, ln
    # The best valid (variant, compiler) is weighed against the other
    # build by the same pairs.
    assert "best valid (variant, compiler) per host, against its other " \
        "builds, paired" in out
    best = out.split("against its other builds, paired\n")[1].splitlines()
    if best[0].startswith("  (table is "):      # wider than 80 columns
        best = best[1:]
    assert "against " in best[1]
    js = json.loads(seqorch(d, "report", "--latest", "--format",
                            "json").stdout)
    paired = js["runs"][0]["paired"]["against_baseline"]
    assert sorted(x["variant"] for x in paired) == sorted(VARIANTS)
    for x in paired:
        assert x["build"] == "clang" and x["baseline"] == "gcc"
        assert x["pairs"] == SAMPLES and x["lo"] <= x["ratio"] <= x["hi"]
        assert x["control"] == (x["variant"] == "openssl-evp")
        assert x["verdict"] in ("faster", "slower", "undecided")
    html = seqorch(d, "report", "--latest", "--format", "html").stdout
    assert "<h3>Paired ratios between builds</h3>" in html
    md = seqorch(d, "report", "--latest", "--format", "markdown").stdout
    assert "\n### Paired ratios between builds\n" in md, md
    rows = [ln for ln in md.splitlines()
            if ln.startswith("| local | ") and " | clang | gcc | " in ln]
    assert len(rows) == len(VARIANTS), md


def test_paired_ratio_is_the_median_of_the_pairs(run):
    """The ratio printed is the median of clang/gcc rate ratios of the
    samples of one index, computed here from results.db."""
    d, _ = run
    db = d / "results.db"
    js = json.loads(seqorch(d, "report", "--latest", "--format",
                            "json").stdout)
    for x in js["runs"][0]["paired"]["against_baseline"]:
        ns = {}
        for c, i, v in query(db, "SELECT b.compiler, s.sample_index, s.ns "
                             "FROM samples s JOIN builds b ON b.id = "
                             "s.build_id WHERE s.variant = ?", x["variant"]):
            ns[(c, i)] = v
        r = sorted(ns[("gcc", i)] / ns[("clang", i)] for i in range(SAMPLES))
        assert x["ratio"] == pytest.approx((r[3] + r[4]) / 2, rel=1e-9)


def agent_procs(workdir):
    """pid -> argv of this test's agents (binaries under workdir)."""
    out = {}
    prefix = str(workdir) + "/"
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        argv = [a.decode(errors="replace") for a in argv if a]
        if argv and argv[0].startswith(prefix) and \
                argv[0].endswith("/seqorch-agent"):
            out[int(d)] = argv
    return out


LONG = 400000


def start(tmp_path, steps, samples, *extra):
    out = open(tmp_path / "run.out", "w")
    err = open(tmp_path / "run.err", "w")
    try:
        return subprocess.Popen(run_args(steps, samples, *extra),
                                cwd=tmp_path, stdout=out, stderr=err)
    finally:
        out.close()
        err.close()


def kill_when_sampling(tmp_path, workdir, p, which):
    db = tmp_path / "results.db"
    wait_for(lambda: nsamples(db, "local") >= 2, "samples", p, tmp_path,
             timeout=900)
    procs = agent_procs(workdir)
    pids = [pid for pid, argv in procs.items() if which in argv]
    assert pids, procs
    os.kill(pids[0], signal.SIGKILL)
    return finish(p, tmp_path, timeout=600)


def test_conductor_killed_mid_window(tmp_path, workdir, gcc_clang):
    two_compilers(tmp_path, workdir)
    p = start(tmp_path, LONG, 8)
    try:
        rc, err = kill_when_sampling(tmp_path, workdir, p, "--conduct")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    db = tmp_path / "results.db"
    assert rc == 1, err
    (status, error), = q(db, "SELECT status, error FROM run_hosts")
    assert status == "failed"
    assert error == "agent (gcc + clang) died of signal 9 before its done " \
        "record", error
    # The window is ended by the coordinator, with why.
    (ended, drift), = q(db, "SELECT finished_at, drift FROM windows")
    assert ended is not None and "the agent stopped inside the window" in \
        drift
    # Its build agents do not outlive it.
    wait_for(lambda: not agent_procs(workdir), "the build agents to end",
             timeout=120)
    rows = q(db, "SELECT digest, valid FROM samples")
    assert 2 <= len(rows) < 2 * 2 * 8
    assert all(dg == sha3_chain(LONG) and v == 1 for dg, v in rows)


def test_a_build_agent_killed_leaves_the_others_measuring(tmp_path,
                                                          workdir,
                                                          gcc_clang):
    two_compilers(tmp_path, workdir)
    p = start(tmp_path, LONG, 6)
    try:
        rc, err = kill_when_sampling(tmp_path, workdir, p, "--serve")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    db = tmp_path / "results.db"
    assert rc == 1, err
    (error,), = q(db, "SELECT error FROM run_hosts")
    assert "(the other builds went on)" in error and "signal 9" in error, \
        error
    per = dict(q(db, "SELECT b.compiler, count(*) FROM samples s JOIN "
                 "builds b ON b.id = s.build_id GROUP BY 1"))
    # One build has all its samples, the killed one fewer.
    assert sorted(per.values())[-1] == 2 * 6, per
    assert sorted(per.values())[0] < 2 * 6, per
    # Said when it happened (the others still measuring), then as the
    # host's error at the end.
    said = [m for m, in q(db, "SELECT message FROM events WHERE level = "
                          "'error' AND message LIKE 'agent (%): the agent "
                          "of build % ended during a sample%' ORDER BY id")]
    assert len(said) == 2 and "went on" in said[1], said
    # Issue 29, item 3: the resume fills the killed build's cells, each in
    # the place the uninterrupted run gave it.  Before, its conductor
    # numbered the missing cells alone (2 cells a round, not 4), and their
    # host_position fell on the other build's.
    r = seqorch(tmp_path, "run", "--resume", "1", timeout=900)
    assert r.returncode == 0, r.stderr
    rows = order(db)
    assert sorted(p for p, *_ in rows) == list(range(24)), rows
    for p, c, v, i, _ in rows:
        assert p // 4 == i
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]


def test_resume_continues_the_same_order(tmp_path, workdir, gcc_clang):
    two_compilers(tmp_path, workdir)
    db = tmp_path / "results.db"
    p = start(tmp_path, LONG, 6)
    try:
        wait_for(lambda: nsamples(db, "local") >= 3, "samples", p, tmp_path)
        p.send_signal(signal.SIGINT)
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 130, err
    before = query(db, "SELECT id FROM samples")
    assert 3 <= len(before) < 24
    r = seqorch(tmp_path, "run", "--resume", "1", timeout=900)
    assert r.returncode == 0, r.stderr
    rows = order(db)
    assert len(rows) == 24
    cells = [(c, v, i) for _, c, v, i, _ in rows]
    assert len(set(cells)) == 24
    # Every sample where the uninterrupted run puts it: its place in the
    # host's order is its index's round and the cell's place in it.
    assert sorted(p for p, *_ in rows) == list(range(24))
    for p, c, v, i, _ in rows:
        assert p // 4 == i
    assert switches(rows) >= 17, rows
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]


ADAPT = ("--max-cv", "0.0001%", "--max-samples", 4)   # no cell meets it
CELLS = "SELECT b.compiler, s.variant, s.sample_index, s.host_position, " \
    "s.window_id, s.reason FROM samples s JOIN builds b ON b.id = s.build_id"


def per_cell(rows):
    """(compiler, variant) -> samples of CELLS rows."""
    per = {}
    for c, v, *_ in rows:
        per[(c, v)] = per.get((c, v), 0) + 1
    return per


def test_adaptive_builds_are_conducted_in_one_window(tmp_path, workdir,
                                                      gcc_clang):
    """A --max-cv run of two builds is conducted like any other: the
    planned rounds in their alternating order, then the extra rounds of
    the cells still too spread out, alternating among them, each extra
    sample with its reason, all in one window, so that the builds'
    samples pair.  Before, each build was measured alone in a window of
    its own, and the report paired none of them ("measured in a later
    launch ..., not paired")."""
    two_compilers(tmp_path, workdir)
    r = subprocess.run(run_args(STEPS, 2, *ADAPT), cwd=tmp_path,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    rows = query(db, CELLS + " ORDER BY s.host_position")
    assert per_cell(rows) == {(c, v): 4 for c in ("gcc", "clang")
                              for v in VARIANTS}, rows
    assert query(db, "SELECT count(*) FROM windows") == [(1,)]
    assert {w for *_, w, _ in rows} == {query(db, "SELECT id FROM "
                                              "windows")[0][0]}
    # One order: every place once; each index a round of the 4 cells,
    # the builds side by side, the extra rounds too.
    assert [p for _, _, _, p, _, _ in rows] == list(range(16))
    for c, v, i, p, _, why in rows:
        assert p // 4 == i, rows
        if i < 2:
            assert why is None, rows
        else:
            assert re.fullmatch(rf"cv \S+% > 0\.0001% after {i} samples",
                                why), why
    # The builds alternate: never three samples of one build in a row.
    assert all(len({c for c, *_ in rows[k:k + 3]}) == 2
               for k in range(len(rows) - 2)), rows
    js = json.loads(seqorch(tmp_path, "report", "--latest", "--format",
                            "json").stdout)
    paired = js["runs"][0]["paired"]
    assert sorted((x["variant"], x["pairs"]) for x in
                  paired["against_baseline"]) == [(v, 4) for v in VARIANTS]
    assert not paired.get("unpaired"), paired
    out = seqorch(tmp_path, "report", "--latest").stdout
    assert "builds against their host's baseline, paired" in out, out
    assert "not paired" not in out, out


def interrupt_adaptive_run(tmp_path, workdir, index, what):
    """A --max-cv run of two builds, 2 samples and up to 4 a cell,
    stopped by SIGINT once a sample of index index or above is stored;
    returns its results.db."""
    two_compilers(tmp_path, workdir)
    db = tmp_path / "results.db"
    p = start(tmp_path, LONG, 2, *ADAPT)
    try:
        wait_for(lambda: q(db, "SELECT count(*) FROM samples WHERE "
                           "sample_index >= ?", index) > [(0,)], what, p,
                 tmp_path, timeout=900)
        p.send_signal(signal.SIGINT)
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 130, err
    return db


def resume_adaptive(tmp_path, db):
    """Resume run 1: (rows before, rows after, new rows, resume's window),
    each cell at 4 samples and stored once, every place once."""
    before = query(db, CELLS)
    windows = query(db, "SELECT count(*) FROM windows")[0][0]
    assert query(db, "SELECT max_cv, max_samples FROM runs") == \
        [(0.000001, 4)]
    r = seqorch(tmp_path, "run", "--resume", "1", timeout=900)
    assert r.returncode == 0, r.stderr
    after = query(db, CELLS)
    assert set(before) <= set(after)
    keys = [(c, v, i) for c, v, i, *_ in after]
    assert len(keys) == len(set(keys)) == 16
    assert set(per_cell(after).values()) == {4}, after
    assert sorted(p for _, _, _, p, _, _ in after) == list(range(16))
    # One conductor: one window more, every new sample in it.
    assert query(db, "SELECT count(*) FROM windows") == [(windows + 1,)]
    new = set(after) - set(before)
    (win,), = {(w,) for *_, w, _ in new}
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]
    return before, after, new, win


def test_resume_of_an_adaptive_run_keeps_its_settings_and_places(
        tmp_path, workdir, gcc_clang):
    """Issue 29, item 4: a --max-cv run of two builds interrupted in its
    planned rounds resumes with its adaptive settings, conducted: the
    planned rounds from the first missing index, then the extra rounds,
    each sample in a place of the host's order of its own, the resumed
    builds' samples in one window."""
    db = interrupt_adaptive_run(tmp_path, workdir, 0, "planned samples")
    assert len(query(db, CELLS + " WHERE s.sample_index < 2")) < 8
    before, after, new, win = resume_adaptive(tmp_path, db)
    extra = [row for row in new if row[2] >= 2]
    assert {c for c, *_ in extra} == {"gcc", "clang"}, extra
    assert all(why is not None for *_, why in extra), extra


def test_resume_of_an_adaptive_run_gives_the_cells_their_rounds(
        tmp_path, workdir, gcc_clang):
    """A --max-cv run of two builds interrupted during its extra rounds:
    the resume conducts the extra rounds alone (every planned cell is
    stored) of the cells still short of --max-samples, judged on every
    sample the run stored, at indices after every stored one and places
    after every stored one of the host's order, which it fills without a
    gap; each says how many of its spread were stored before.  A cell
    stored once is never stored again."""
    db = interrupt_adaptive_run(tmp_path, workdir, 2, "extra samples")
    before = query(db, CELLS)
    assert len([r for r in before if r[2] < 2]) == 8, before
    assert any(n < 4 for n in per_cell(before).values()), before
    last = max(i for _, _, i, *_ in before)
    _, _, new, _ = resume_adaptive(tmp_path, db)
    assert new and all(i > last for _, _, i, *_ in new), new
    assert min(p for _, _, _, p, _, _ in new) == len(before)
    for c, v, i, _, _, why in new:
        n = len([r for r in before if r[:2] == (c, v)])
        assert why.endswith(f"({n} stored before the resume)"), why


def test_adaptive_conductor_outlives_its_killed_coordinator(
        tmp_path, workdir, gcc_clang):
    """The coordinator of a 2-build --max-cv run killed (SIGKILL) during
    the extra rounds: its conductor goes on on the host, and the resume
    follows it to its end and stores what it took, with the agent's own
    numbers (the extra rounds' indices included), then has nothing left
    to take: every cell at --max-samples, stored once, every sample of
    the one window."""
    two_compilers(tmp_path, workdir)
    db = tmp_path / "results.db"
    p = start(tmp_path, LONG, 2, *ADAPT)
    try:
        wait_for(lambda: q(db, "SELECT count(*) FROM samples WHERE "
                           "sample_index >= 2") > [(0,)], "extra samples",
                 p, tmp_path, timeout=900)
    finally:
        p.kill()
        p.wait()
    assert len(query(db, CELLS)) < 16
    r = seqorch(tmp_path, "run", "--resume", "1", timeout=900)
    assert r.returncode == 0, r.stderr
    rows = query(db, CELLS)
    keys = [(c, v, i) for c, v, i, *_ in rows]
    assert len(keys) == len(set(keys)) == 16, rows
    assert set(per_cell(rows).values()) == {4}, rows
    assert sorted(p for _, _, _, p, _, _ in rows) == list(range(16))
    assert query(db, "SELECT count(*) FROM windows") == [(1,)]
    assert {w for *_, w, _ in rows} == {query(db, "SELECT id FROM "
                                              "windows")[0][0]}
    assert query(db, "SELECT status, resumes FROM runs") == [("ok", 1)]


def test_summary_best_names_its_compiler(run):
    """The run's summary: the host's best is one build's, named (it read
    "local c-fused 1.234M" while the lines under it said "c-fused (clang)
    ran 1.05 times faster than c-fused (gcc)")."""
    d, r = run
    lines = r.stderr.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("best per "))
    assert re.match(r"^  local +\S+ \((gcc|clang)\) +\S+  ", lines[i + 1]), \
        r.stderr
    # Against the other build of its variant: the report's paired figure,
    # interval and verdict, not the ratio of medians the pairs contradict
    # ("ran 1.33 [0.87, 1.42] times faster" beside the report's 1.070x).
    js = json.loads(seqorch(d, "report", "--latest", "--format",
                            "json").stdout)
    best, = js["runs"][0]["paired"]["best"]
    x, = best["against"]
    assert x["build_id"] != best["build_id"] and x["pairs"] == SAMPLES
    words = {"faster": "faster", "slower": "slower",
             "undecided": "not distinguishable at this precision"}
    want = (f"    {best['variant']} ({best['build']}) against "
            f"{best['variant']} ({x['build']})"
            f"{' (control)' if best['variant'] == 'openssl-evp' else ''}, "
            f"paired over {SAMPLES} pairs: {x['ratio']:.3f}x "
            f"[{x['lo']:.3f}, {x['hi']:.3f}], {words[x['verdict']]}")
    assert want in lines, r.stderr
