"""Can the figures be trusted: the reproduction's table and the report
quote a host's figure and a ratio between hosts only from valid, timed
samples whose digests agree, with the interval and verdict the report
gives, and say beside the figure when it is unstable or unpinned.

The database is made from schema.sql with hand-chosen samples, so every
expected figure is computed here from the same numbers."""
import json
import re
import shutil
import sqlite3
import subprocess

import jsonschema
import pytest

from conftest import ROOT
from lib_common import schema_db

SEQORCH = ROOT / "seqorch"
STEPS = 1000
DIGEST = "ab"
# (host, build id, compiler, variant) -> ns of its three timed samples
SAMPLES = {
    ("grav", 1, "gcc", "c-fused"): (405, 410, 415),
    ("grav", 2, "clang", "c-fused"): (389, 390, 391),
    ("grav", 1, "gcc", "c-wrapped"): (500, 510, 520),
    ("grav", 2, "clang", "c-wrapped"): (505, 515, 525),
    ("gen", 3, "cc", "c-fused"): (700, 760, 800),
    ("gen", 3, "cc", "c-wrapped"): (900, 905, 910),
}


def rate(ns):
    return STEPS * 1e9 / ns


def make_db(path):
    con = schema_db(path)
    con.execute("INSERT INTO runs (id, study, started_at, status, steps,"
                " samples_per_variant, command, seed, hosts, coordinator,"
                " version) VALUES (1, 'sha3', '2026-01-01T00:00:00Z', 'ok',"
                " ?, 3, 'seqorch reproduce sha3', '00', 'all', 'test',"
                " '0.1.0')", (STEPS,))
    facts = json.dumps({"cpu_model": "Test CPU 9000"})
    for host, pin, pinned, why in (("grav", 1, 1, None),
                                   ("gen", 1, 0, "cpu 1 is offline")):
        con.execute("INSERT INTO run_hosts (run_id, host, status, pin_cpu,"
                    " pinned, pin_error, facts, started_at) VALUES (1, ?,"
                    " 'ok', ?, ?, ?, ?, '2026-01-01T00:00:00Z')",
                    (host, pin, pinned, why, facts))
    for (host, b, cc, _), _ns in SAMPLES.items():
        con.execute("INSERT OR IGNORE INTO builds (id, run_id, host,"
                    " compiler, cflags, status, created_at) VALUES (?, 1,"
                    " ?, ?, '-O2', 'ok', '2026-01-01T00:00:00Z')",
                    (b, host, cc))
    sid = 0
    for (host, b, _, v), nss in SAMPLES.items():
        for i, ns in enumerate(nss):
            sid += 1
            con.execute("INSERT INTO samples (id, run_id, host, build_id,"
                        " study, variant, sample_index, position, steps, ns,"
                        " digest, seed, valid, received_at) VALUES (?, 1,"
                        " ?, ?, 'sha3', ?, ?, ?, ?, ?, ?, '00', 1,"
                        " '2026-01-01T00:00:00Z')",
                        (sid, host, b, v, i, i, STEPS, ns, DIGEST))
    # Faster than anything, and in no figure: an invalid sample and a
    # warmup of gen's c-fused.
    con.execute("INSERT INTO samples (run_id, host, build_id, study,"
                " variant, sample_index, position, steps, ns, digest, seed,"
                " valid, invalid_reason, received_at) VALUES (1, 'gen', 3,"
                " 'sha3', 'c-fused', 3, 0, ?, 10, 'ff', '00', 0, 'digest"
                " differs from the reference', '2026-01-01T00:00:00Z')",
                (STEPS,))
    con.execute("INSERT INTO samples (run_id, host, build_id, study,"
                " variant, sample_index, position, steps, ns, digest, seed,"
                " valid, warmup, received_at) VALUES (1, 'gen', 3, 'sha3',"
                " 'c-fused', -1, 0, ?, 10, ?, '00', 1, 1,"
                " '2026-01-01T00:00:00Z')", (STEPS, DIGEST))
    con.execute("INSERT INTO reproductions (id, name, started_at, command)"
                " VALUES (1, 'sha3', '2026-01-01T00:00:00Z',"
                " 'seqorch reproduce sha3')")
    con.execute("INSERT INTO reproduction_runs VALUES (1, 1, 'chain')")
    for host, ref in (("grav", "graviton5"), ("gen", "genoa")):
        con.execute("INSERT INTO reproduction_hosts VALUES (1, ?, ?)",
                    (host, ref))
    con.commit()
    con.close()


def run(*args):
    p = subprocess.run([str(SEQORCH), *map(str, args)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The database made once (schema.sql is most of a second to apply);
    each test changes a copy."""
    path = tmp_path_factory.mktemp("made") / "results.db"
    make_db(path)
    return path


@pytest.fixture
def db(made, tmp_path):
    path = tmp_path / "results.db"
    shutil.copyfile(made, path)
    return path


def fmt(x):
    """The report's four significant digits with a suffix."""
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            v = x / div
            return (f"{v:.{3 - len(str(int(v))) + 1}f}" + suf)
    return f"{x:.4g}"


def notes_of(section):
    """The items of the HTML list of notes under the best table, each
    whole: its tags balanced, nothing else in the list."""
    m = re.search(r'</table></div>\n<ul class="notes">\n((?:<li>.*</li>\n)+)'
                  r"</ul>\n$", section)
    if m is None:
        return []
    items = re.findall(r"<li>(.*)</li>\n", m.group(1))
    for item in items:
        assert re.findall(r"<(\w+)>", item) == re.findall(r"</(\w+)>",
                                                          item), item
        assert "<li>" not in item and "<ul" not in item, item
    return items


def test_reproduce_ratio_has_its_interval_and_verdict(db):
    """Seed 000's 1.68x beside ours: ours with the bootstrap interval the
    report gives (n = 3 a side: min(a) / max(b) to max(a) / min(b)), never
    a bare ratio of medians; a figure names its compiler when its host
    had two, and the invalid sample and the warmup are in none."""
    out = run("report", "--db", db, "--reproduce", "sha3")
    grav = SAMPLES[("grav", 2, "clang", "c-fused")]
    gen = SAMPLES[("gen", 3, "cc", "c-fused")]
    ratio = rate(grav[1]) / rate(gen[1])
    lo = rate(max(grav)) / rate(min(gen))
    hi = rate(min(grav)) / rate(max(gen))
    line = (f"  ratio graviton5 / genoa: published 1.68x, here grav / gen "
            f"{ratio:.2f}x [{lo:.3f}, {hi:.3f}] faster\n")
    assert line in out, out
    assert re.search(rf"^    grav +{fmt(rate(grav[1]))} hashes/s  c-fused "
                     r"\(clang\), n 3; graviton5's 6\.813M: ", out, re.M), out
    assert re.search(rf"^    gen +{fmt(rate(gen[1]))} hashes/s  c-fused, "
                     r"n 3; genoa's 4\.056M: ", out, re.M), out
    # The report's own ratio of best rates is the same number.
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]["ratios"][0]
    assert (rep["faster"], rep["slower"]) == ("grav", "gen")
    assert rep["ratio"] == pytest.approx(ratio)
    assert (rep["lo"], rep["hi"]) == (pytest.approx(lo), pytest.approx(hi))


def test_reproduce_quotes_no_figure_whose_digest_disagrees(db):
    """A valid sample whose final digest is not the run's: the report has
    every row MISMATCH and no best; the published table must not quote a
    figure or a ratio from those rows either (it read the summary view,
    which knows nothing of digests, and printed 'here grav / gen 1.95x')."""
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET digest = 'cd' WHERE host = 'gen' AND"
                " variant = 'c-wrapped' AND sample_index = 0")
    con.commit()
    con.close()
    out = run("report", "--db", db, "--reproduce", "sha3")
    assert "here grav / gen" not in out, out
    assert ("  ratio graviton5 / genoa: published 1.68x, here: none, "
            "grav and gen have no figure (above)\n") in out, out
    assert ("    gen        no figure: no valid sample whose digest agrees "
            "with the run's (seqorch report --run 1)\n") in out, out
    assert "  digests   MISMATCH" in out, out


def test_reproduce_says_unstable_and_unpinned_beside_the_figure(db):
    """gen's best has a cv of 6.8% (over --max-cv's 1%) and its cpu was
    not held: said under its figure, not only in the report's warnings;
    grav's (cv 0.26%, pinned) has nothing to say."""
    out = run("report", "--db", db, "--reproduce", "sha3")
    gen = [rate(ns) for ns in SAMPLES[("gen", 3, "cc", "c-fused")]]
    mean = sum(gen) / 3
    cv = (sum((x - mean) ** 2 for x in gen) / 2) ** 0.5 / mean
    block = out.split("    gen  ", 1)[1].split("\n    grav", 1)[0]
    assert f"      unstable: cv {100 * cv:.2f}% > --max-cv 1%" in block, out
    assert ("      not pinned: cpu 1 was asked for: cpu 1 is offline"
            in block), out
    assert "      measured on Test CPU 9000\n" in block, out
    grav = out.split("    grav  ", 1)[1].split("\n  ratio", 1)[0]
    assert "unstable" not in grav and "not pinned" not in grav, out


def test_report_says_doubts_beside_the_best_and_its_ratios(db):
    """The report's best figure of gen and the ratio grav / gen are
    doubtful (gen unstable, unpinned): said in the best table and on the
    ratio's line in every format, where they were only warnings at the
    bottom; Markdown and HTML head the ratio's columns a and b, since a
    ratio the interval cannot tell from 1 names no "faster" host."""
    gen = [rate(ns) for ns in SAMPLES[("gen", 3, "cc", "c-fused")]]
    mean = sum(gen) / 3
    cv = 100 * (sum((x - mean) ** 2 for x in gen) / 2) ** 0.5 / mean
    doubts = f"unstable (cv {cv:.2f}% > --max-cv 1%), not pinned (cpu 1)"
    text = run("report", "--db", db, "--run", 1)
    flat = " ".join(text.split())
    assert f"gen: {doubts}: its figure and its ratios may not hold" in flat
    assert re.search(r"^  grav / gen = \d\.\d\dx  \[[\d.]+, [\d.]+\]  "
                     r"faster; doubtful: gen$", text, re.M), text
    assert "  grav: " not in text.split("ratios of best rates")[0] \
        .split("best valid variant per host")[1], text
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    assert {b["host"]: b["doubts"] for b in rep["best"]} == \
        {"grav": None, "gen": doubts}
    assert rep["ratios"][0]["doubtful"] == ["gen"]
    summary = json.loads(run("export", "--db", db, "--run", 1))
    assert summary["best"][1]["doubts"] == doubts
    assert summary["ratios"][0]["doubtful"] == ["gen"]
    md = run("report", "--db", db, "--run", 1, "--format", "markdown")
    assert "| a | b | a / b | interval | verdict |" in md, md
    assert "| faster; doubtful: gen |" in md, md
    assert f"- **gen**: {doubts}: its figure and its ratios may not hold" \
        in md, md
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    assert "<th>a</th><th>b</th><th>a / b</th>" in html
    assert re.search(r"<td>grav</td><td>gen</td>.*<td class=\"faster\">"
                     r"faster</td><td>gen</td><td></td></tr>", html), html
    best = html.split("<h3>Best valid variant per host</h3>", 1)[1] \
        .split("<h3>Ratios of best rates</h3>", 1)[0]
    assert re.search(r"<tr><td>gen</td><td>c-fused \(cc\)</td><td class="
                     rf"\"n\">{fmt(gen[1])}</td>", best), best
    notes = notes_of(best)
    # The page's text is escaped: "> --max-cv" is no tag's end.
    assert notes == [f"<strong>gen</strong>: {doubts.replace('>', '&gt;')}"
                     ": its figure and its ratios may not hold"], best


def test_report_says_why_a_host_has_no_best(db):
    """Valid samples whose digests disagree: "no valid samples whose
    digest agrees with the run's", not "no valid samples" (it has 9)."""
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET digest = 'cd' WHERE host = 'gen' AND"
                " variant = 'c-wrapped' AND sample_index = 0")
    con.commit()
    con.close()
    text = run("report", "--db", db, "--run", 1)
    assert "  gen: no valid samples whose digest agrees with the run's\n" \
        in text, text
    # The best table of Markdown and HTML says the same in its row.
    md = run("report", "--db", db, "--run", 1, "--format", "md")
    assert re.search(r"^\| gen +\| no valid samples whose digest agrees "
                     r"with the run's +\|", md, re.M), md
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    assert "<td>no valid samples whose digest agrees with the run's</td>" \
        in html, html


def test_reference_names_the_compiler_and_the_doubts(db):
    """--reference seed:genoa beside each host's best: grav's is clang's
    of its two compilers (it named no compiler), and gen's figure is
    doubtful (it said so only among the warnings)."""
    gen = [rate(ns) for ns in SAMPLES[("gen", 3, "cc", "c-fused")]]
    mean = sum(gen) / 3
    cv = 100 * (sum((x - mean) ** 2 for x in gen) / 2) ** 0.5 / mean
    doc = json.loads(run("report", "--db", db, "--run", 1, "--reference",
                         "seed:genoa", "--format", "json"))
    ref = {x["host"]: x for x in doc["runs"][0]["reference"]["local"]}
    assert (ref["grav"]["compiler"], ref["grav"]["doubts"]) == ("clang",
                                                                None)
    assert ref["gen"]["compiler"] == "cc"
    assert ref["gen"]["doubts"] == (f"unstable (cv {cv:.2f}% > --max-cv "
                                    "1%), not pinned (cpu 1)")
    local = {h: x["text"] for h, x in ref.items()}
    assert local["grav"].startswith("grav c-fused (clang) "), local
    assert local["gen"].startswith("gen c-fused (cc) "), local
    assert "doubtful" not in local["grav"], local
    assert local["gen"].endswith(
        f"; indicative only); doubtful here: unstable (cv {cv:.2f}% > "
        "--max-cv 1%), not pinned (cpu 1)"), local
    text = " ".join(run("report", "--db", db, "--run", 1, "--reference",
                        "seed:genoa").split())
    assert local["gen"] in text, text


def test_a_clock_that_moved_is_a_doubt(db):
    """A sample of grav's best whose clock estimate moved 20% between just
    before and just after it: its cycles and its rate are less certain,
    said beside the figure (only a count among the warnings before)."""
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET calib_mhz = 3000, calib_after_mhz = 2400"
                " WHERE host = 'grav' AND build_id = 2 AND variant ="
                " 'c-fused' AND sample_index = 1")
    con.commit()
    con.close()
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    assert {b["host"]: b["doubts"] for b in rep["best"]}["grav"] == \
        "clock moved (over 10% in 1 of 3 samples)"
    assert rep["ratios"][0]["doubtful"] == ["grav", "gen"]
    text = run("report", "--db", db, "--run", 1)
    assert re.search(r"^  grav / gen = .*  faster; doubtful: both$", text,
                     re.M), text


def test_html_marks_name_their_compiler(db):
    """grav built c-fused with gcc and clang: each chart mark's tooltip
    names its compiler, as its label does; two marks both titled "c-fused
    on grav" could not be told apart."""
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    titles = re.findall(r"<title>([^<]*)</title>", html)
    grav = [t for t in titles if " on grav" in t]
    assert grav and all(re.search(r" on grav \((gcc|clang)\): ", t)
                        for t in grav), grav
    assert any(t.startswith("c-fused on grav (gcc): median ") for t in grav)
    assert any(t.startswith("c-fused on grav (clang): ") and "x the best"
               in t for t in grav), grav


def test_a_host_without_samples_is_not_a_missing_reference(db):
    """gen stands for genoa (hosts.toml `reference`) and stored no sample
    (a host that failed): the ratio says gen has none, where it said no
    host stands for genoa, sending the user to fix a hosts.toml that was
    right."""
    con = sqlite3.connect(db)
    con.execute("DELETE FROM samples WHERE host = 'gen'")
    con.commit()
    con.close()
    out = run("report", "--db", db, "--reproduce", "sha3")
    assert ("  ratio graviton5 / genoa: published 1.68x, here: none, gen "
            "has no valid samples in this run\n") in out, out
    assert "  ratio m4 / graviton5: published 1.18x, here: no two hosts " \
        "stand for m4 and graviton5 (hosts.toml `reference`)\n" in out, out


def test_a_control_as_best_is_named_so(db):
    """gen's fastest row is openssl-evp, the study's control (the host's
    libcrypto through EVP), which the seed's "best of its
    implementations" never counted: said under the figure."""
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET variant = 'openssl-evp' WHERE host ="
                " 'gen' AND variant = 'c-fused'")
    con.commit()
    con.close()
    out = run("report", "--db", db, "--reproduce", "sha3")
    block = out.split("    gen  ", 1)[1].split("\n    grav", 1)[0]
    assert block.split("\n")[0].split()[2] == "openssl-evp,", out
    assert ("      the study's control: openssl-evp is the host's library "
            "through its API, not one of the seed's implementations") \
        in block, out
    assert "control" not in out.split("\n    grav  ", 1)[1].split("ratio")[0]


def test_two_hosts_on_one_machine_at_once(db):
    """grav and gen report one hostname and their windows overlapped: two
    entries of hosts.toml for one machine, timed at once on its cpus, so
    each figure is a share of the machine and their ratio is no ratio of
    machines; said beside both figures, the ratio and the published
    table's.  Windows one after the other are not."""
    con = sqlite3.connect(db)
    con.execute("UPDATE run_hosts SET facts = json_set(facts, '$.hostname',"
                " 'vm')")
    for host, a, b in (("grav", "10:00:00", "10:00:05"),
                       ("gen", "10:00:04", "10:00:09")):
        con.execute("INSERT INTO windows (run_id, study, host, holder,"
                    " started_at, finished_at) VALUES (1, 'sha3', ?, 't', ?,"
                    " ?)", (host, f"2026-01-01T{a}.000Z",
                            f"2026-01-01T{b}.000Z"))
    con.commit()
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    doubts = {b["host"]: b["doubts"] for b in rep["best"]}
    assert doubts["grav"] == ('one machine with "gen", measured at the '
                              'same time'), doubts
    assert doubts["gen"].endswith(', one machine with "grav", measured at '
                                  'the same time'), doubts
    assert rep["ratios"][0]["doubtful"] == ["grav", "gen"]
    # The host's name in the page is text, its quotes escaped.
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    assert ("<li><strong>grav</strong>: one machine with &quot;gen&quot;, "
            "measured at the same time: its figure and its ratios may not "
            "hold</li>") in html, html
    out = run("report", "--db", db, "--reproduce", "sha3")
    assert ('      one machine with "gen", measured at the same time: a '
            'ratio of the two compares halves of it\n') in out, out
    # One after the other: each had the machine to itself.
    con.execute("UPDATE windows SET started_at = '2026-01-01T10:00:06.000Z'"
                " WHERE host = 'gen'")
    con.commit()
    con.close()
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    assert {b["host"]: b["doubts"] for b in rep["best"]}["grav"] is None


def test_a_window_that_drifted_is_a_doubt(db):
    """gen's window drifted (its clock estimate moved 6.3% from begin to
    end): a warning event at the bottom before, now beside the figure,
    on the ratio and in the published table."""
    con = sqlite3.connect(db)
    con.execute("INSERT INTO windows (run_id, study, host, holder,"
                " started_at, finished_at, drift) VALUES (1, 'sha3', 'gen',"
                " 't', '2026-01-01T10:00:00.000Z', '2026-01-01T10:00:05.000Z',"
                " 'clock estimate changed -6.3% (2870 -> 2691 MHz)')")
    con.commit()
    con.close()
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    doubts = {b["host"]: b["doubts"] for b in rep["best"]}
    assert doubts["gen"].endswith(", drifted (1 of 1 windows)"), doubts
    assert doubts["grav"] is None
    out = run("report", "--db", db, "--reproduce", "sha3")
    assert ("      drifted: the clock or load moved in 1 window (seqorch "
            "report --run 1, warnings)\n") in out, out


def test_report_says_a_control_as_best(db):
    """gen's fastest row is openssl-evp, the study's control (the host's
    libcrypto through EVP): the report quoted it as gen's best and grav /
    gen as a ratio of bests, which then set grav's c-fused against gen's
    OpenSSL.  Said under the best table, on the ratio and beside the
    reference in every format; with both hosts' best the control, the
    ratio says "both"."""
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET variant = 'openssl-evp' WHERE host ="
                " 'gen' AND variant = 'c-fused'")
    con.commit()
    text = run("report", "--db", db, "--run", 1)
    flat = " ".join(text.split())
    assert ("gen: its best is the study's control, openssl-evp, not one of "
            "the variants measured against it: its ratios set the control "
            "against the other host's best") in flat, text
    assert "grav: its best is the study's control" not in flat, text
    assert re.search(r"^  grav / gen = .*  faster; doubtful: gen; control: "
                     r"gen$", text, re.M), text
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    assert {b["host"]: b["control"] for b in rep["best"]} == \
        {"grav": False, "gen": True}
    assert rep["ratios"][0]["control"] == ["gen"]
    summary = json.loads(run("export", "--db", db, "--run", 1))
    assert [b["control"] for b in summary["best"]] == [False, True]
    assert summary["ratios"][0]["control"] == ["gen"]
    md = run("report", "--db", db, "--run", 1, "--format", "markdown")
    assert "| faster; doubtful: gen; control: gen |" in md, md
    assert "- **gen**: its best is the study's control, openssl-evp" in md
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    assert "<th>doubtful</th><th>control</th>" in html, html
    assert re.search(r"<td>grav</td><td>gen</td>.*<td>gen</td><td>gen</td>"
                     r"</tr>", html), html
    assert "openssl-evp (cc) best, the study's control</td>" in html, html
    notes = notes_of(html.split("<h3>Best valid variant per host</h3>",
                                1)[1].split("<h3>Ratios", 1)[0])
    assert ("<strong>gen</strong>: its best is the study's control, "
            "openssl-evp, not one of the variants measured against it: its "
            "ratios set the control against the other host's best") \
        in notes, html
    assert not [x for x in notes if x.startswith("<strong>grav")], notes
    ref = " ".join(run("report", "--db", db, "--run", 1, "--reference",
                       "seed:genoa").split())
    assert "gen openssl-evp (cc) (the study's control) " in ref, ref
    assert "grav c-fused (clang) 2" in ref, ref
    # Both hosts' best the control: the ratio compares two libraries.
    con.execute("UPDATE samples SET variant = 'openssl-evp' WHERE host ="
                " 'grav' AND build_id = 2 AND variant = 'c-fused'")
    con.commit()
    con.close()
    text = run("report", "--db", db, "--run", 1)
    assert re.search(r"^  grav / gen = .*; control: both$", text, re.M), text


def test_paired_best_leaves_out_a_host_with_nothing_to_pair(db):
    """grav built with gcc and clang, gen with cc alone: the section of
    each best against its host's other builds had a heading "gen
    c-fused (cc)" with nothing under it; now only grav's is there."""
    text = run("report", "--db", db, "--run", 1)
    section = text.split("best valid (variant, compiler) per host, against "
                         "its other builds, paired\n", 1)[1]
    section = re.sub(r"^  \(table is \d+ columns wide\)\n", "", section)
    assert section.startswith("  grav  c-fused (clang)\n          against "
                              "gcc    1.051x"), text
    assert "gen" not in section, text


def test_a_best_the_interval_cannot_tell_from_the_next(db):
    """gen's c-wrapped moved within reach of its best c-fused: the
    interval of c-wrapped / the best holds 1, so which is faster may be
    the noise's choice, and the best, the higher of close medians, leans
    high (docs/report.md, the winner's curse).  Said under the best
    table, in Markdown and in JSON (best[].runner_up); grav's gcc build is
    slower than its best, and nothing is said of grav, until its samples
    spread too wide for the t-test at 3 a side."""
    text = run("report", "--db", db, "--run", 1)
    assert "cannot be told" not in text, text
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET ns = ns - 128 WHERE host = 'gen' AND"
                " variant = 'c-wrapped'")
    con.commit()
    con.close()
    best = SAMPLES[("gen", 3, "cc", "c-fused")]
    near = [ns - 128 for ns in SAMPLES[("gen", 3, "cc", "c-wrapped")]]
    ratio = best[1] / near[1]
    lo, hi = min(best) / max(near), max(best) / min(near)
    text = run("report", "--db", db, "--run", 1)
    flat = " ".join(text.split())
    assert (f"gen: its best cannot be told from c-wrapped (cc) ({ratio:.3f}x"
            f" [{lo:.3f}, {hi:.3f}]) at this precision: which is faster may "
            "be the noise's choice, and the best's figure leans high") \
        in flat, text
    assert "grav: its best cannot" not in flat, text
    md = run("report", "--db", db, "--run", 1, "--format", "markdown")
    assert "- **gen**: its best cannot be told from c-wrapped (cc) (" in md
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    notes = notes_of(html.split("<h3>Best valid variant per host</h3>",
                                1)[1].split("<h3>Ratios", 1)[0])
    assert (f"<strong>gen</strong>: its best cannot be told from "
            f"c-wrapped (cc) ({ratio:.3f}x [{lo:.3f}, {hi:.3f}]) at this "
            "precision: which is faster may be the noise's choice, and the "
            "best's figure leans high") in notes, html
    assert not [x for x in notes if x.startswith("<strong>grav")], notes
    rep = json.loads(run("report", "--db", db, "--run", 1, "--format",
                         "json"))["runs"][0]
    up = {b["host"]: b["runner_up"] for b in rep["best"]}
    assert up["grav"] is None
    assert (up["gen"]["variant"], up["gen"]["build_id"], up["gen"]["ties"],
            up["gen"]["verdict"]) == ("c-wrapped", 3, 1, "undecided")
    assert up["gen"]["ratio"] == pytest.approx(ratio)
    # summary.json says it in the same shape.
    summary = json.loads(run("export", "--db", db, "--run", 1))
    assert {b["host"]: b["runner_up"] for b in summary["best"]} == up
    # grav's gcc build spread twice as wide: still slower by its interval,
    # but the t-test of 3 against 3 withholds the verdict, and says so.
    con = sqlite3.connect(db)
    con.execute("UPDATE samples SET ns = 2 * ns - 410 WHERE host = 'grav'"
                " AND build_id = 1 AND variant = 'c-fused'")
    con.commit()
    con.close()
    flat = " ".join(run("report", "--db", db, "--run", 1).split())
    assert ("grav: its best cannot be told from c-fused (gcc) (0.951x "
            "[0.926, 0.978]: the t-test's p = 0.07 is over 5%) at this "
            "precision") in flat, flat
    assert ("gen c-wrapped (cc) 0.978x [0.895, 1.036] not distinguishable "
            "at this precision no verdict where the interval leaves out 1: "
            "the t-test's p = 0.07 is over 5% (more samples may decide it)"
            ) in flat, flat


def test_a_control_the_seed_timed_is_not_named_another_thing(db):
    """Umbrella's mul part: the best of both hosts is c, mul's control,
    which seed 001 timed as one of its own (so did seed 002 its
    transform chain): reproduce said "c is the host's library through its
    API, not one of the seed's implementations", false of portable C.
    Only sha3's parts, whose seed never counted EVP, say it."""
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET study = 'mul', command = 'seqorch"
                " reproduce umbrella'")
    con.execute("UPDATE samples SET study = 'mul', variant = CASE variant"
                " WHEN 'c-fused' THEN 'c' ELSE 'x86-rorx' END")
    con.execute("UPDATE reproductions SET name = 'umbrella', command ="
                " 'seqorch reproduce umbrella'")
    con.execute("UPDATE reproduction_runs SET part = 'mul'")
    con.commit()
    con.close()
    out = run("report", "--db", db, "--reproduce", "umbrella")
    assert re.search(r"^    grav +\S+ rounds/s  c \(clang\), n 3", out,
                     re.M), out
    assert "control" not in out, out


def test_a_best_tied_with_two_rows_says_how_many(db):
    """grav's gcc builds of c-fused and c-wrapped both moved within reach
    of its best (clang's c-fused): the note names the closer and counts
    the other, in text, Markdown and the HTML page alike."""
    con = sqlite3.connect(db)
    for v, ns in (("c-fused", (385, 391, 400)), ("c-wrapped", (386, 392,
                                                              399))):
        for i, x in enumerate(ns):
            con.execute("UPDATE samples SET ns = ? WHERE host = 'grav' AND"
                        " build_id = 1 AND variant = ? AND sample_index = ?",
                        (x, v, i))
    con.commit()
    con.close()
    said = (r"its best cannot be told from c-fused \(gcc\) \(0\.997x "
            r"\[[\d.]+, [\d.]+\]\) or 1 other row at this precision: "
            r"which is faster may be the noise's choice")
    text = " ".join(run("report", "--db", db, "--run", 1).split())
    assert re.search("grav: " + said, text), text
    md = run("report", "--db", db, "--run", 1, "--format", "markdown")
    assert re.search(r"- \*\*grav\*\*: " + said, md), md
    html = run("report", "--db", db, "--run", 1, "--format", "html")
    notes = notes_of(html.split("<h3>Best valid variant per host</h3>",
                                1)[1].split("<h3>Ratios", 1)[0])
    assert [x for x in notes if re.match("<strong>grav</strong>: " + said,
                                         x)], html


def strict_json(text):
    """The document, refused if a key is repeated or a number is NaN or
    infinite (which python3 -m json.tool would print back as is)."""
    def pairs(items):
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), keys
        return dict(items)

    def constant(name):
        raise AssertionError(f"{name} in JSON")
    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


# The edge cases every format must say alike: SQL run on the fixture (a
# run whose digests disagree: test_report_says_why_a_host_has_no_best).
EDGES = {
    "one host": ["DELETE FROM samples WHERE host = 'gen'",
                 "DELETE FROM run_hosts WHERE host = 'gen'",
                 "DELETE FROM builds WHERE host = 'gen'"],
    "one variant": ["DELETE FROM samples WHERE variant = 'c-wrapped'"],
    "a host all invalid": ["UPDATE samples SET valid = 0, invalid_reason ="
                           " 'digest differs' WHERE host = 'gen'"],
    "warmups only": ["UPDATE samples SET warmup = 1, sample_index = -2 -"
                     " sample_index WHERE warmup = 0"],
    "control only": ["DELETE FROM samples WHERE host = 'gen' AND variant ="
                     " 'c-wrapped'",
                     "UPDATE samples SET variant = 'openssl-evp' WHERE host"
                     " = 'gen'"],
    # gen twice as fast: the two bests' ranges overlap.
    "undecided": ["UPDATE samples SET ns = ns / 2 WHERE host = 'gen'"],
    "one sample": ["DELETE FROM samples WHERE sample_index IN (1, 2)"],
    "steps differ": ["UPDATE samples SET steps = 2000, digest = 'cd' WHERE"
                     " host = 'gen'"],
}


@pytest.mark.parametrize("edge", EDGES)
def test_every_format_says_the_same(db, edge):
    """For each edge case, text, Markdown, HTML, the report's JSON and
    summary.json agree on the best per host, the runner-up, each ratio's
    hosts and verdict, and position bias; the JSON documents are strict
    (no repeated key, no NaN) and summary.json is valid.  JSON named a
    "faster" host where the text said "not distinguishable" (by the
    medians alone), said position_bias false where the text said "not
    measurable", and left out a refused ratio's members."""
    con = sqlite3.connect(db)
    for sql in EDGES[edge]:
        con.execute(sql)
    con.commit()
    con.close()
    args = ("report", "--db", db, "--run", 1)
    text = run(*args)
    md = run(*args, "--format", "markdown")
    page = run(*args, "--format", "html")
    rep = strict_json(run(*args, "--format", "json"))["runs"][0]
    summary = strict_json(run("export", "--db", db, "--run", 1))
    schema = json.loads((ROOT / "docs" / "summary.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(summary)

    # The best per host, fastest first, and what is said of it.
    best = [(b["host"], b["variant"], b["build_id"], b["doubts"],
             b["control"], b["runner_up"]) for b in rep["best"]]
    assert best == [(b["host"], b["variant"], b["build_id"], b["doubts"],
                     b["control"], b["runner_up"]) for b in summary["best"]]
    table = text.split("best valid variant per host\n", 1)[1] \
        .split("\n\n", 1)[0]
    assert [m[0] for m in re.findall(r"^  (\S+)  +(\S+) \(", table, re.M)
            if m[0] != "host"] == [b[0] for b in best], table
    flat = " ".join(table.split())
    for host, *_, up in best:
        said = re.search(rf"{host}: its best cannot be told from (\S+) ",
                         flat)
        assert (said and said.group(1)) == (up and up["variant"]), flat
    mdbest = md.split("### Best valid variant per host", 1)[1] \
        .split("###", 1)[0]
    assert re.findall(r"^\| (\S+) \| \S+ \(", mdbest, re.M) == \
        [b[0] for b in best], mdbest

    # Each ratio: its hosts and verdict; a winner only where decided.
    lines = re.findall(r"^  (\S+) / (\S+)(?: = \S+x  \[.*?\]  (faster|slower"
                       r"|not distinguishable at this precision)|: refused,"
                       r" ([^;\n]*))", text.split("ratios of best rates", 1)
                       [-1].split("\n\n", 1)[0], re.M)
    mdrows = re.findall(r"^\| (\S+) \| (\S+) \| \S+ \| .*? \| (faster|"
                        r"slower|not distinguishable at this precision|"
                        r"refused: [^;|]*)[^|]* \|$", md.split(
                            "### Ratios of best rates", 1)[-1].split("###")[0],
                        re.M)
    cells = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>(?:<td class="
                       r"\"n\">[^<]*</td><td>[^<]*</td><td class=\"\w+\">"
                       r"([^<]*)</td>|<td colspan=\"5\">refused: ([^<]*))",
                       page.split("<h3>Ratios of best rates</h3>", 1)[-1]
                       .split("</table>", 1)[0])
    assert rep["ratios"] == summary["ratios"]
    assert len(lines) == len(mdrows) == len(cells) == len(rep["ratios"])
    for x, t, m, h in zip(rep["ratios"], lines, mdrows, cells):
        refused = x["refused"]
        words = x["verdict_text"] if refused is None else None
        assert t == (x["a"], x["b"], words or "", refused or ""), (t, x)
        assert m == (x["a"], x["b"], words or f"refused: {refused}"), m
        assert h == (x["a"], x["b"], words or "", refused or ""), h
        if refused is not None:
            assert all(x[k] is None for k in ("ratio", "lo", "hi",
                       "level_pct", "t_p", "verdict", "verdict_text")), x
        else:
            # The t-test's p backs a verdict, and where the interval
            # leaves out 1 without one, it is why not (text's line).
            if x["verdict"] != "undecided":
                assert x["t_p"] < 0.05, x
        won = {"faster": (x["a"], x["b"]), "slower": (x["b"], x["a"])}
        assert (x["faster"], x["slower"]) == won.get(x["verdict"],
                                                     (None, None)), x

    # Position bias: null where no two positions could be compared.
    said = re.search(r"^position bias: (not measurable|some positions|no "
                     r"position)", text, re.M).group(1)
    assert rep["position_bias"] == summary["position_bias"] == \
        {"not measurable": None, "some positions": True,
         "no position": False}[said], said
