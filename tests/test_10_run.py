"""seqorch run on the local host, end to end: build, self-test, samples in
results.db checked against Python's hashlib, and the report."""
import re
import signal
import subprocess
import time

from conftest import (SEQORCH, agent_pids, query, seqorch, sha3_chain,
                      vectors)


def test_run_stores_checked_samples(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "3000", "--samples", "3")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    want = sha3_chain(3000)
    rows = query(db, "SELECT variant, sample_index, position, steps, ns, "
                 "digest, valid, build_id FROM samples")
    variants = {v for v, *_ in rows}
    assert {"c-wrapped", "c-fused", "openssl-evp"} <= variants
    assert len(rows) == 3 * len(variants)
    for variant, idx, pos, steps, ns, digest, valid, build in rows:
        assert steps == 3000 and ns > 0 and build > 0
        assert digest == want, variant
        assert valid == 1
    # The order alternates: each variant takes more than one position.
    for v in variants:
        positions = {p for var, _, p, *_ in rows if var == v}
        assert len(positions) > 1, v
    (status, steps, k), = query(db, "SELECT status, steps, "
                                "samples_per_variant FROM runs")
    assert (status, steps, k) == ("ok", 3000, 3)
    (cc, version, target, src, binsum), = query(
        db, "SELECT compiler, compiler_version, target, source_sha256, "
        "binary_sha256 FROM builds")
    assert cc == "cc" and version and target
    assert len(src) == 64 and len(binsum) == 64
    (pinned, pin_cpu, openssl), = query(
        db, "SELECT pinned, pin_cpu, openssl FROM run_hosts")
    assert pinned == 1 and pin_cpu == 0 and openssl.startswith("OpenSSL")
    summary = query(db, "SELECT variant, n, median_rate FROM summary")
    assert {v for v, _, _ in summary} == variants
    assert all(n == 3 and rate > 0 for _, n, rate in summary)
    # The reference is cached per (study, seed, steps).
    refs = dict(query(db, "SELECT steps, digest FROM refs"))
    assert refs[3000] == want and refs[1000] == vectors()["sha3-256"][
        "digest_after_steps"]["1000"]

    rep = seqorch(scratch, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    assert "c-fused" in rep.stdout and "best" in rep.stdout
    # 80 columns, but for a table that says above it how much wider it is.
    wide = 80
    for line in rep.stdout.splitlines():
        m = re.fullmatch(r"  \(table is (\d+) columns wide\)", line)
        wide = int(m[1]) if m else 80 if line == "" else wide
        assert len(line) <= wide, line


def test_second_run_reuses_build(scratch):
    for _ in range(2):
        r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                    "--steps", "100", "--samples", "1", "--variants",
                    "c-fused")
        assert r.returncode == 0, r.stderr
    sums = query(scratch / "results.db",
                 "SELECT DISTINCT binary_sha256 FROM builds")
    assert len(sums) == 1
    assert "building" in r.stderr


def test_million_step_digest_matches_vectors(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "1000000", "--samples", "1", "--variants",
                "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr
    want = vectors()["sha3-256"]["digest_after_steps"]["1000000"]
    digests = query(scratch / "results.db",
                    "SELECT DISTINCT digest FROM samples WHERE valid = 1")
    assert digests == [(want,)]


def interrupted(scratch, n, *args):
    """`seqorch run ARGS` in scratch, Ctrl-C once it stored n samples (or
    after 120 s): its exit status and stderr."""
    p = subprocess.Popen([str(SEQORCH), "run", *args], cwd=scratch,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            if query(scratch / "results.db",
                     "SELECT count(*) FROM samples")[0][0] >= n:
                break
        except Exception:
            pass
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    return p.returncode, err


def test_interrupt_keeps_samples(scratch, workdir):
    rc, err = interrupted(scratch, 2, "--study", "sha3", "--hosts", "local",
                          "--steps", "300000", "--samples", "50",
                          "--variants", "c-fused")
    assert rc == 130, err
    db = scratch / "results.db"
    (status,), = query(db, "SELECT status FROM runs")
    assert status == "interrupted"
    n = query(db, "SELECT count(*) FROM samples WHERE valid = 1")[0][0]
    assert 2 <= n < 50
    (hstatus,), = query(db, "SELECT status FROM run_hosts")
    assert hstatus == "interrupted"
    # No agent is left running (allow a moment for the exit to finish);
    # only this worker's agents run from its workdir.
    for _ in range(50):
        left = agent_pids(workdir)
        if not left:
            break
        time.sleep(0.1)
    assert not left


def test_interrupt_names_the_studies_not_run(scratch):
    """--study mul,div32 stopped during mul: mul's run is interrupted (and
    resumable), and div32, which has no run, is named with its command."""
    rc, err = interrupted(scratch, 1, "--study", "mul,div32", "--hosts",
                          "local", "--steps", "300000000", "--samples", "20")
    assert rc == 130, err
    db = scratch / "results.db"
    assert query(db, "SELECT study, status FROM runs") == \
        [("mul", "interrupted")]
    assert "resume: seqorch run --resume 1" in err, err
    assert "seqorch: not run: div32 (a run of its own each: seqorch run " \
        "--study div32)\n" in err, err


def test_studies_and_hosts_list(scratch):
    r = seqorch(scratch, "studies")
    assert r.returncode == 0
    assert "sha3" in r.stdout and "c-fused" in r.stdout
    r = seqorch(scratch, "hosts")
    assert r.returncode == 0, r.stderr
    assert "local" in r.stdout


def test_help_everywhere(scratch):
    r = seqorch(scratch, "--help")
    assert r.returncode == 0 and "exit codes" in r.stdout
    for cmd in ("run", "report", "studies", "hosts", "windows", "deploy"):
        r = seqorch(scratch, cmd, "--help")
        assert r.returncode == 0, cmd
        assert "usage: seqorch " + cmd in r.stdout, cmd
