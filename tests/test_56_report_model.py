"""The report's model (issue 25): the per-build sections (rates per build,
native/default ratios, phase shares) are loaded once and rendered in
every format, JSON included; phase names come from the run's
sample_metrics, whatever the study calls its phases.

The database is made from schema.sql with hand-chosen samples, so every
expected figure is computed here from the same numbers."""
import json
import re
import sqlite3
import subprocess

import pytest

from conftest import ROOT
from lib_common import complete, schema_db

SEQORCH = ROOT / "seqorch"
# (build id, targeting, variant) -> ns of its three samples of 1000 steps
SAMPLES = {
    (1, "default", "fast"): (1000, 1100, 1200),
    (2, "native", "fast"): (500, 550, 600),
    (1, "default", "slow"): (2000, 2100, 2200),
    (2, "native", "slow"): (2150, 2050, 1950),
}
# A study that is not randomx, with phases named its own way, recorded
# in this order; the agent's phase_other is the rest.
PHASES = (("phase_setup", 0.25), ("phase_crunch", 0.5), ("phase_other", 0.25))


def make_db(path):
    con = schema_db(path)
    con.execute("INSERT INTO runs (id, study, started_at, status, steps,"
                " samples_per_variant, command, seed, hosts, coordinator,"
                " version) VALUES (1, 'sha3', '2026-01-01T00:00:00Z', 'ok',"
                " 1000, 3, 'seqorch run', '00', 'local', 'test', '0.1.0')")
    for b, t in ((1, "default"), (2, "native")):
        con.execute("INSERT INTO builds (id, run_id, host, compiler, cflags,"
                    " status, created_at, targeting) VALUES (?, 1, 'local',"
                    " 'cc', '-O2', 'ok', '2026-01-01T00:00:00Z', ?)", (b, t))
    sid = 0
    for (b, _, v), nss in SAMPLES.items():
        for i, ns in enumerate(nss):
            sid += 1
            con.execute("INSERT INTO samples (id, run_id, host, build_id,"
                        " study, variant, sample_index, position, steps, ns,"
                        " digest, seed, valid, received_at) VALUES (?, 1,"
                        " 'local', ?, 'sha3', ?, ?, ?, 1000, ?, 'ab', '00',"
                        " 1, '2026-01-01T00:00:00Z')",
                        (sid, b, v, i, b - 1, ns))
    for name, f in PHASES:
        con.execute("INSERT INTO sample_metrics SELECT id, ?, ns * ?"
                    " FROM samples", (name, f))
    con.commit()
    con.close()


def report(db, fmt):
    p = subprocess.run([str(SEQORCH), "report", "--db", str(db), "--run",
                        "1", "--format", fmt], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "results.db"
    make_db(path)
    return path


def rate(ns):
    return 1000 * 1e9 / ns


def test_json_has_the_per_build_sections(db):
    run = json.loads(report(db, "json"))["runs"][0]
    rates = {(x["build_id"], x["variant"]): x for x in run["build_rates"]}
    assert len(rates) == len(SAMPLES)
    for (b, t, v), nss in SAMPLES.items():
        x = rates[(b, v)]
        assert (x["host"], x["compiler"], x["targeting"], x["n"]) == \
            ("local", "cc", t, 3)
        assert x["median_rate"] == pytest.approx(rate(sorted(nss)[1]))
        assert x["min_rate"] == pytest.approx(rate(max(nss)))
        assert x["max_rate"] == pytest.approx(rate(min(nss)))
    tg = {x["variant"]: x for x in run["targeting"]}
    assert tg["fast"]["ratio"] == pytest.approx(1100 / 550)
    assert tg["fast"]["verdict"] == "native_faster"
    assert tg["slow"]["ratio"] == pytest.approx(2100 / 2050)
    assert tg["slow"]["verdict"] == "within_noise"


def test_phase_names_are_discovered(db):
    """Not randomx's five names: the run's own, in recording order with
    the rest last, in JSON, text, Markdown and HTML."""
    run = json.loads(report(db, "json"))["runs"][0]
    ph = run["phases"]
    assert ph["names"] == ["setup", "crunch", "other"]
    assert len(ph["cells"]) == len(SAMPLES)
    for row in ph["cells"]:
        nss = SAMPLES[(row["build_id"], row["targeting"], row["variant"])]
        assert row["n"] == 3 and row["total_ns"] == sum(nss)
        for name, f in PHASES:
            key = name[len("phase_"):]
            assert row["ns"][key] == pytest.approx(f * sum(nss))
            assert row["share"][key] == pytest.approx(f)
    text = report(db, "text")
    head = [ln for ln in text.splitlines() if ln.startswith("  host") and
            "setup" in ln]
    assert head and head[0].split()[-4:] == ["setup", "crunch", "other",
                                             "total"], text
    assert "  25.00%  50.00%  25.00%  100.00%" in text, text
    md = report(db, "markdown")
    assert "### Phase shares of hashing time" in md
    assert "| setup | crunch | other | total |" in md, md
    assert "| 25.00% | 50.00% | 25.00% | 100.00% |" in md, md
    assert "### Rates per build" in md and "native faster in every" in md
    html = report(db, "html")
    assert "<h3>Phase shares of hashing time</h3>" in html
    assert "<th>setup</th>" in html and "<h3>Rates per build</h3>" in html


def renderers(cmd):
    """The command's renderer table, as its unknown --format names it."""
    p = subprocess.run([str(SEQORCH), cmd, "--format", ""],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    m = re.search(r'unknown --format "" \((.*)\)$', p.stderr.strip())
    assert m, p.stderr
    return m.group(1).split(", ")


def test_completion_offers_each_command_its_renderers():
    """The --format words of each entry are its renderer table: compare
    has no html, report has all five."""
    for cmd in ("report", "compare"):
        assert complete(None, "seqorch", cmd, "--format", "",
                        ordered=True) == renderers(cmd), cmd
    assert complete(None, "seqorch", "report", "--format", "",
                    ordered=True) == [
        "text", "markdown", "csv", "json", "html"]
    assert complete(None, "seqorch", "compare", "--format", "",
                    ordered=True) == ["text", "markdown", "json", "csv"]
    assert complete(None, "seqorch", "report", "--format", "m") == ["markdown"]


@pytest.mark.parametrize("name,fmt", [
    ("r.HTM", "html"), ("r.markdown", "markdown"), ("r.Json", "json"),
    ("r.csv", "csv"), ("r.txt", "text")])
def test_output_extension_picks_the_renderer(db, tmp_path, name, fmt):
    """-o FILE without --format renders what FILE's extension names, the
    same bytes as --format to stdout."""
    out = tmp_path / name
    p = subprocess.run([str(SEQORCH), "report", "--db", str(db), "--run",
                        "1", "-o", str(out)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    want = subprocess.run([str(SEQORCH), "report", "--db", str(db), "--run",
                           "1", "--format", fmt], capture_output=True,
                          timeout=60, check=True).stdout
    assert out.read_bytes() == want


@pytest.mark.parametrize("version, by", [
    ("cc (Debian 12.2.0-14) 12.2.0", "gcc"),    # gcc invoked as cc
    ("cc (GCC) 11.4.1 20231218", "gcc"),
    ("gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0", "gcc"),
    ("mycc version 1.0", "cc"),                 # unknown: the name run
    ("Debian clang version 14.0.6", None),      # clang's: no note
])
def test_row_note_names_the_compiler_its_version_names(tmp_path, version,
                                                        by):
    """arm-scalar's rate is clang's (docs/studies.md): a build by another
    compiler is noted under the name its version line gives it, gcc for
    a gcc invoked as cc, or the name it was run by when that is all
    that is known."""
    path = tmp_path / "results.db"
    make_db(path)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO builds (id, run_id, host, compiler,"
                " compiler_version, cflags, status, created_at) VALUES"
                " (3, 1, 'arm', 'cc', ?, '-O2', 'ok',"
                " '2026-01-01T00:00:00Z')", (version,))
    for i, ns in enumerate((900, 1000, 1100)):
        con.execute("INSERT INTO samples (run_id, host, build_id, study,"
                    " variant, sample_index, position, steps, ns, digest,"
                    " seed, valid, received_at) VALUES (1, 'arm', 3,"
                    " 'sha3', 'arm-scalar', ?, ?, 1000, ?, 'ab', '00', 1,"
                    " '2026-01-01T00:00:00Z')", (i, i, ns))
    con.commit()
    con.close()
    flat = " ".join(report(path, "text").split())
    if by is None:
        assert "built with" not in flat, flat
    else:
        assert (f"arm-scalar on arm: built with {by}, not clang: the rate "
                "is the compiler's baseline") in flat, flat
