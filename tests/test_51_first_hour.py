"""A user's first hour (issue 23): a compare gate that fails when it
cannot decide, warnings that stay on a terminal, the report's unstable
cells, -o's format from the extension, the end of a run, and the help a
mistyped or unknown name gets.  Runs are real (the local host, the
session's agent build); the terminal tests run seqorch in a real pty
(script(1))."""
import json
import re
import shutil
import sqlite3

import pytest

from conftest import SEQORCH, query, seqorch, write_hosts

VARIANTS = "c-fused,openssl-evp"


def run(cwd, *args, check=True):
    p = seqorch(cwd, *args)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def site(tmp_path_factory, workdir):
    """Runs 1 and 2: two variants, same steps; 3: an unreachable host
    (failed); 4: the two variants with other steps; 5: one variant."""
    d = tmp_path_factory.mktemp("firsthour")
    write_hosts(d / "hosts.toml", workdir,
                '[hosts.dead]\naddress = "127.0.0.1"\nport = 1\n'
                'user = "nobody"\n')
    for _ in range(2):
        run(d, "run", "--study", "sha3", "--hosts", "local", "--variants",
            VARIANTS, "--steps", 2000, "--samples", 3)
    p = run(d, "run", "--study", "sha3", "--hosts", "dead", "--steps", 2000,
            "--samples", 1, check=False)
    assert p.returncode != 0
    run(d, "run", "--study", "sha3", "--hosts", "local", "--variants",
        VARIANTS, "--steps", 4000, "--samples", 3)
    run(d, "run", "--study", "sha3", "--hosts", "local", "--variants",
        "c-fused", "--steps", 2000, "--samples", 3)
    st = dict(query(d / "results.db", "SELECT id, status FROM runs"))
    assert st == {1: "ok", 2: "ok", 3: "failed", 4: "ok", 5: "ok"}
    return d


def copy_db(site, tmp_path):
    shutil.copy(site / "results.db", tmp_path / "results.db")
    return tmp_path


def test_gate_fails_when_no_cell_compared(site):
    p = run(site, "compare", 1, 4, "--fail-slower", 90, check=False)
    assert p.returncode == 1, p.stderr
    assert "--fail-slower cannot decide: no cell could be compared" in \
        p.stderr
    # Without the gate, compare still reports and exits 0.
    p = run(site, "compare", 1, 4)
    assert "cannot decide: no cell could be compared" in p.stdout


def test_gate_fails_on_failed_new_run(site):
    p = run(site, "compare", 1, 3, "--fail-slower", 90, check=False)
    assert p.returncode == 1, p.stderr
    assert "run 3 is not ok (failed)" in p.stderr


def test_gate_fails_on_missing_cells(site):
    p = run(site, "compare", 1, 5, "--fail-slower", 90, check=False)
    assert p.returncode == 1, p.stderr
    assert "1 cell of the baseline missing from run 5" in p.stderr
    doc = json.loads(run(site, "compare", 1, 5, "--format", "json").stdout)
    assert doc["undecided"] == "1 cell of the baseline missing from run 5"


def test_gate_passes_when_decided(site):
    """Run 2 repeats run 1: every cell compared; 90% slower it is not."""
    p = run(site, "compare", 1, 2, "--fail-slower", 90)
    assert "cannot decide" not in p.stdout + p.stderr
    doc = json.loads(run(site, "compare", 1, 2, "--format", "json").stdout)
    assert doc["undecided"] is None
    assert len(doc["cells"]) == 2


def test_baseline_alone_takes_newest_ok_run(site, tmp_path):
    """Run 3 failed: --baseline 2 compares with run 4 and says run 3 was
    passed over; with only failed runs after it, there is nothing to
    compare with."""
    p = run(site, "compare", "--baseline", 2, "--fail-slower", 90,
            check=False)
    assert "run 2 (baseline) -> run 5" in p.stdout, p.stdout
    d = copy_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE runs SET status = 'interrupted' WHERE id >= 4")
    con.close()
    p = run(d, "compare", "--baseline", 2, "--format", "json", check=False)
    assert p.returncode == 2, p.stderr
    assert ('no ok run of study "sha3" after run 2 to compare it with '
            '(newer: 5 interrupted, 4 interrupted, 3 failed)') in p.stderr
    assert p.stdout == ""
    p = run(d, "compare", "--baseline", 1)
    assert "run 1 (baseline) -> run 2" in p.stdout
    assert ("comparing with run 2, the newest ok run of study \"sha3\"; "
            "newer, not ok: 5 interrupted, 4 interrupted, 3 failed") in \
        p.stderr


def test_compare_prints_noise(site, tmp_path):
    d = copy_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE windows SET verdict = 'quiet' WHERE run_id = 1")
        con.execute("UPDATE windows SET verdict = 'noisy' WHERE run_id = 2")
    con.close()
    (w,), = query(d / "results.db",
                  "SELECT count(*) FROM windows WHERE run_id = 2")
    assert w >= 1
    doc = json.loads(run(d, "compare", 1, 2, "--format", "json").stdout)
    assert (doc["baseline_noise"], doc["new_noise"]) == ("quiet", "noisy")
    assert (doc["baseline_status"], doc["new_status"]) == ("ok", "ok")
    text = run(d, "compare", 1, 2).stdout
    assert "  baseline  run 1: ok, quiet\n" in text
    assert f"  new       run 2: ok, noisy (local {w}/{w} noisy windows)\n" \
        in text
    md = run(d, "compare", 1, 2, "--format", "markdown").stdout
    assert "Baseline run 1: ok, quiet.  New run 2: ok, noisy" in md
