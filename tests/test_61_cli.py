"""The command line as git and curl behave (issue 32 items 11-16): -h on
every command, -o - and md, counts such as 1e6, "did you mean" for
options and values, -V with the commit, variants of another architecture
refused before upload, readers that never write, and the exit codes of a
report that cannot be written."""
import json
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess

import pytest

from conftest import (ROOT, SEQORCH, copy_tree, query, seqorch,
                      write_hosts)


@pytest.fixture(scope="module")
def site(tmp_path_factory, workdir):
    """One small run of two variants on this host, --steps as 1e3."""
    tmp = tmp_path_factory.mktemp("cli")
    write_hosts(tmp / "hosts.toml", workdir)
    r = seqorch(tmp, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "c-fused,openssl-evp", "--steps", "1e3",
                "--samples", "3", env=dict(os.environ, LC_ALL="C"))
    assert r.returncode == 0, r.stderr
    (tmp / "run.stderr").write_text(r.stderr)
    return tmp


def table():
    """Every command and verb, as `seqorch help --table` lists them."""
    out = seqorch(ROOT, "help", "--table").stdout
    names = []
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "command":
            names.append((f[1],))
        elif f[0] == "verb":
            names.append((f[1], f[2]))
    return names


def test_short_help_on_every_command(tmp_path):
    names = table()
    assert len(names) >= 17, names
    for name in names:
        short = seqorch(tmp_path, *name, "-h")
        long = seqorch(tmp_path, *name, "--help")
        assert (short.returncode, short.stdout) == (0, long.stdout), name
        assert short.stdout.startswith("usage: seqorch " + name[0])
    # help VERB: the verb's own help, not the overview.
    assert seqorch(tmp_path, "help", "hosts", "trust").stdout == \
        seqorch(tmp_path, "hosts", "trust", "--help").stdout
    assert list(tmp_path.iterdir()) == []


def test_steps_written_as_people_write_them(site):
    assert query(site / "results.db", "SELECT steps FROM runs") == [(1000,)]
    r = seqorch(site, "run", "--study", "sha3", "--steps", "2.5")
    assert (r.returncode, r.stderr) == (2, 'seqorch: invalid --steps "2.5": '
                                        'expected a whole number from 1 to '
                                        '100000000000 (1000000, 1e6, 10M, '
                                        '2.5M; suffixes k, M, G)\n')


def test_output_dash_is_stdout_and_md_is_markdown(site):
    md = seqorch(site, "report", "--format", "markdown")
    assert md.returncode == 0 and md.stdout.startswith("#"), md.stderr
    for argv in (("--format", "md"), ("--format", "md", "-o", "-"),
                 ("-o", "-", "--format=md")):
        r = seqorch(site, "report", *argv)
        assert (r.returncode, r.stdout) == (0, md.stdout), argv
    # -o - without --format is text, as plain stdout is.
    text = seqorch(site, "report")
    assert seqorch(site, "report", "-o", "-").stdout == text.stdout
    summary = seqorch(site, "export", "--run", "1")
    assert summary.returncode == 0
    assert seqorch(site, "export", "--run", "1", "-o", "-").stdout == \
        summary.stdout
    assert seqorch(site, "compare", "1", "1", "--format", "md").stderr == \
        "seqorch: compare needs two different runs\n"
    assert not (site / "-").exists()


@pytest.mark.parametrize("argv,msg", [
    (("report", "--formt", "json"),
     'unknown option "--formt"; did you mean "--format"?'),
    (("run", "--study", "sah3"), 'unknown study "sah3"; did you mean "sha3"?'),
    (("run", "--study", "sha3", "--hosts", "lcoal"),
     'unknown host "lcoal" in hosts.toml; did you mean "local"?'),
    (("hosts", "chek"), 'hosts: unknown verb "chek"; did you mean "check"?'),
    (("report", "--format", "jsno"),
     'unknown --format "jsno"; did you mean "json"?'),
    (("compare", "1", "2", "--format", "mardown"),
     'unknown --format "mardown"; did you mean "markdown"?'),
    (("run", "--study", "sha3", "--variants", "c-fusd"),
     'unknown variant "c-fusd" of study "sha3"; did you mean "c-fused"?'),
    (("report", "--study", "nosuch"), 'unknown study "nosuch" (valid: sha3,'),
    (("run", "--max", "3"),
     'option "--max" is ambiguous: --max-cv, --max-samples'),
])
def test_did_you_mean(tmp_path, workdir, argv, msg):
    write_hosts(tmp_path / "hosts.toml", workdir)
    r = seqorch(tmp_path, *argv)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("seqorch: " + msg), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hosts.toml"]


def test_version_names_the_commit(tmp_path):
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"],
                          cwd=ROOT, capture_output=True, text=True)
    r = seqorch(tmp_path, "-V")
    assert r.returncode == 0
    want = head.stdout.strip() if head.returncode == 0 else "unknown"
    assert r.stdout == f"seqorch 0.1.0 (commit {want})\n"
    assert seqorch(tmp_path, "--version").stdout == r.stdout


def test_variant_of_another_architecture_is_refused(tmp_path):
    arch = platform.machine()
    other = {"x86_64": ("arm-scalar", "aarch64"),
             "aarch64": ("avx2-fused", "x86_64")}.get(arch)
    if other is None:
        pytest.skip(f"no variant of another architecture than {arch}")
    # A workdir of its own: nothing may be uploaded or built into it.
    wd = tmp_path / "wd"
    write_hosts(tmp_path / "hosts.toml", wd)
    r = seqorch(tmp_path, "run", "--study", "sha3", "--variants", other[0],
                "--steps", "1000", "--samples", "1", timeout=60)
    assert r.returncode == 1, r.stderr
    assert (f'variant "{other[0]}" runs on {other[1]} only and host "local" '
            f'is {arch}: nothing uploaded or built') in r.stderr
    assert not wd.exists() or list(wd.iterdir()) == []
    # Every host failed (item 10): reaching them comes first, and the
    # report says each host's error once.
    assert r.stderr.endswith("\nnext: seqorch hosts check\nthen: seqorch "
                             "report --run 1\n"), r.stderr
    rep = seqorch(tmp_path, "report")
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout.count(f'variant "{other[0]}" runs on') == 1, rep.stdout
    assert 'host "local" failed (the error below)' in rep.stdout


def test_readers_never_write(tmp_path):
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    for argv in (("report",), ("report", "--format", "json"),
                 ("compare", "1", "2"), ("export", "--run", "1"),
                 ("windows",), ("artifacts", "--run", "1")):
        r = seqorch(tmp_path, *argv, "--db", db)
        assert r.returncode == 3, (argv, r.stderr)
        assert r.stderr == ('seqorch: database: no seqorch schema, so no '
                            'results to read; `seqorch run` creates them '
                            f'(in "{db}")\n'), argv
        assert db.read_bytes() == b""
    assert [p.name for p in tmp_path.iterdir()] == ["empty.db"]


def test_exit_codes(site):
    r = seqorch(site, "report", "--study", "nosuch")
    assert r.returncode == 2, r.stderr
    # A run that is not there, in every reader alike.
    for argv in (("report", "--run", "99"), ("export", "--run", "99"),
                 ("windows", "--run", "99")):
        r = seqorch(site, *argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stderr.startswith("seqorch: no run with id 99") and \
            "(latest: " in r.stderr, (argv, r.stderr)
    for argv in (("report", "-o", "/nonexistent/r.html"),
                 ("export", "--run", "1", "-o", "/nonexistent/s.json"),
                 ("export", "--run", "1", "--bundle", "/nonexistent/b")):
        r = seqorch(site, *argv)
        assert r.returncode == 4, (argv, r.stderr)
        assert r.stderr.startswith("seqorch: ") and "/nonexistent/" in \
            r.stderr and r.stderr.count("\n") == 1, r.stderr
    # A closed standard output is the same failure.
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(ROOT / "seqorch"), "report"], cwd=site,
                           stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 4, r.stderr
    helptext = seqorch(site, "--help").stdout
    assert "4 output cannot be written" in helptext
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert "| 4 | `report`, `export`: the output cannot be written" in usage


def test_a_failed_report_leaves_its_output_as_it_was(site, tmp_path):
    """-o FILE is written beside FILE and renamed over it when whole: a
    report that fails (here a run of another study, a run not there)
    leaves FILE, or the target of a link at FILE, as it was; it once
    emptied and deleted them, device nodes included."""
    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n")
    target = tmp_path / "target"
    target.write_text("data\n")
    (tmp_path / "link").symlink_to(target)
    for argv, code in ((("--run", "1", "--study", "mul", "-o", keep), 2),
                       (("--run", "99", "-o", tmp_path / "link"), 2)):
        r = seqorch(site, "report", *argv)
        assert r.returncode == code, r.stderr
    assert keep.read_text() == "precious\n"
    assert target.read_text() == "data\n"
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["keep.txt", "link", "target"]
    # A report that is written replaces the file.
    r = seqorch(site, "report", "--run", "1", "-o", keep)
    assert r.returncode == 0, r.stderr
    assert keep.read_text() == seqorch(site, "report", "--run", "1").stdout


def test_report_reproduce_refuses_what_it_would_ignore(site):
    """report --reproduce prints the reproduction's own table as text: the
    options of the other report are refused, not silently dropped."""
    for argv, what in ((("--format", "json"), '"--format" does not go'),
                       (("--run", "1"), '"--run" does not go'),
                       (("--study", "mul"), '"--study" does not go'),
                       (("--max-cv", "2"), '"--max-cv" does not go'),
                       (("--reference", "seed:genoa"), '"--reference" does '
                        'not go'),
                       (("-o", "r.html"), '"--reproduce" writes text, not '
                        'the html "r.html" names')):
        r = seqorch(site, "report", "--reproduce", "sha3", *argv)
        assert r.returncode == 2 and what in r.stderr, (argv, r.stderr)
    assert not (site / "r.html").exists()
    # Text, by --format or by -o's name, is what it writes.
    for argv in (("--format", "text"), ("-o", "r.txt")):
        r = seqorch(site, "report", "--reproduce", "sha3", *argv)
        assert r.returncode == 1 and "no reproduction \"sha3\"" in \
            r.stderr, (argv, r.stderr)


def test_a_writer_leaves_another_programs_database_alone(tmp_path, workdir):
    """run --db on a SQLite file of another program once added seqorch's
    tables to it and switched it to WAL; it is refused, byte for byte
    untouched."""
    db = tmp_path / "theirs.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    before = db.read_bytes()
    write_hosts(tmp_path / "hosts.toml", workdir)
    r = seqorch(tmp_path, "run", "--study", "mul", "--hosts", "local",
                "--steps", "1000", "--samples", "1", "--db", db)
    assert r.returncode == 3, r.stderr
    assert r.stderr == (f'seqorch: database "{db}" holds another program\'s '
                        'tables and no seqorch schema: give --db a new '
                        'file\n')
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hosts.toml",
                                                          "theirs.db"]


def test_study_groups_where_studies_are_named(site, tmp_path):
    """run and fetch take a group for its studies; report, which shows one
    study, says which the group holds (it offered \"did you mean\")."""
    r = seqorch(site, "report", "--study", "div")
    assert r.returncode == 2
    assert r.stderr == ('seqorch: "div" is a group of studies (div32,div64): '
                        'name one of them here\n')
    r = seqorch(tmp_path, "fetch", "--study", "div", "--cache",
                tmp_path / "c")
    assert r.returncode == 0, r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == \
        ["div32", "div64"]


def test_an_interrupted_builds_directory_is_removed(tmp_path):
    """A build interrupted on a host leaves OUT.tmp.PID in its workdir; the
    next build of OUT removes it once that shell is gone (a live one, a
    concurrent build, is left alone)."""
    wd = tmp_path / "wd"
    write_hosts(tmp_path / "hosts.toml", wd)
    argv = ("deploy", "--hosts", "local")
    assert seqorch(tmp_path, *argv).returncode == 0
    (out,) = [p for p in (wd / "build").iterdir() if p.is_dir()]
    shutil.rmtree(out)
    dead = out.with_name(out.name + ".tmp.99999999")   # above any pid_max
    live = out.with_name(out.name + f".tmp.{os.getpid()}")
    for d in (dead, live):
        d.mkdir()
        (d / "half-built").write_text("")
    r = seqorch(tmp_path, *argv)
    assert r.returncode == 0, r.stderr
    assert out.is_dir() and not dead.exists() and live.exists()


def test_make_run_builds_the_man_page_and_completion(tmp_path):
    """README points to build/seqorch.1 and build/seqorch.bash right after
    `make run` (issue 32 item 20): its build makes them."""
    copy_tree(tmp_path, build=False)
    r = subprocess.run(["make", "-n", "run"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "gen-help.sh ./seqorch man > build/seqorch.1" in r.stdout
    assert "gen-help.sh ./seqorch completion > build/seqorch.bash" in \
        r.stdout


def test_text_report_character_set_and_units(site):
    """One character set (issue 32 item 9): ASCII unless the locale is
    UTF-8, then the range's en dash; headers carry their units."""
    def report(lang):
        return subprocess.run([str(ROOT / "seqorch"), "report"], cwd=site,
                              capture_output=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "LANG": lang})
    ascii_ = report("C")
    assert ascii_.returncode == 0, ascii_.stderr
    assert ascii_.stdout.isascii()
    text = ascii_.stdout.decode()
    assert " min-max " in text and "ns/hash" in text
    if " calib " in text:
        assert "cycles/hash" in text
    utf8 = report("C.UTF-8").stdout.decode()
    assert " min\u2013max " in utf8
    assert utf8.replace("\u2013", "-") == text
    # The run's summary uses the report's dash, in either locale.
    summary = (site / "run.stderr").read_text()
    assert summary.isascii() and "(median, min-max, cv" in summary
    d = site / "utf8"
    d.mkdir()
    shutil.copy(site / "hosts.toml", d)
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local", "--variants",
                "c-fused", "--steps", "1e3", "--samples", "1",
                env=dict(os.environ, LC_ALL="C.UTF-8"))
    assert r.returncode == 0, r.stderr
    assert "(median, min\u2013max, cv" in r.stderr
    assert re.search(r"^  local +c-fused +(\S+)  \1\u2013\1  cv -  n 1$",
                     r.stderr, re.M), r.stderr


def check_width(text, columns=80):
    """Every line of a text report within columns, but for the rows of a
    table that says above its head how much wider it is."""
    wide = None
    for line in text.splitlines():
        m = re.fullmatch(r"  \(table is (\d+) columns wide\)", line)
        if m:
            wide = int(m[1])
            assert wide > columns, line
            continue
        if line == "":
            wide = None
        assert len(line) <= (wide or columns), line


def test_text_report_fits_80_columns(site):
    """The text report fits 80 columns or says where it is wider (issue
    32 item 9): lines wrap at spaces, tables are whole; $COLUMNS counts
    on a terminal only."""
    env = dict(os.environ, LC_ALL="C.UTF-8")
    env.pop("COLUMNS", None)
    out = seqorch(site, "report", env=env).stdout
    check_width(out)
    # One sample's report holds the widest text: every interval missing.
    one = site / "one.db"
    shutil.copy(site / "results.db", one)
    with sqlite3.connect(one) as con:
        con.execute("DELETE FROM samples WHERE sample_index > 0")
    con.close()
    out = seqorch(site, "report", "--db", one, env=env).stdout
    check_width(out)
    assert "  (table is " in out
    # The wrapped lines lose no word.
    words = seqorch(site, "report", "--db", one, "--format", "md",
                    env=env).stdout
    for w in ("command", "position", "Holm"):
        assert w in out and w in words
    assert seqorch(site, "report", "--db", one,
                   env=dict(env, COLUMNS="200")).stdout == out
    if shutil.which("script"):
        r = subprocess.run(["script", "-qec", f"{SEQORCH} report --db {one}",
                            "/dev/null"], cwd=site, capture_output=True,
                           text=True, env=dict(env, COLUMNS="200"))
        text = r.stdout.replace("\r\n", "\n")
        assert "(table is " not in text and "not distinguishable" in text


def test_compare_fails_when_no_cell_compares(site, tmp_path):
    """compare exits non-zero when no cell could be compared (issue 32
    item 17), --fail-slower or not."""
    shutil.copy(site / "results.db", tmp_path / "results.db")
    shutil.copy(site / "hosts.toml", tmp_path / "hosts.toml")
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "c-unrolled", "--steps", "1e3",
                "--samples", "2")
    assert r.returncode == 0, r.stderr
    r = seqorch(tmp_path, "compare", "1", "2")
    assert r.returncode == 1, r.stderr
    assert "no cell could be compared" in r.stdout
    assert r.stderr.endswith("seqorch: no cell could be compared\n"), \
        r.stderr


def test_summary_says_how_much_faster(site):
    """The run's summary sets each host's best against the next variants
    and the control in hyperfine's words, with the interval (issue 32
    item 8): the ratio of the medians of the samples table."""
    rates = {}
    for v, steps, ns in query(site / "results.db", "SELECT variant, steps,"
                              " ns FROM samples WHERE valid = 1"):
        rates.setdefault(v, []).append(steps * 1e9 / ns)
    med = {v: statistics.median(r) for v, r in rates.items()}
    best, other = sorted(med, key=med.get, reverse=True)
    line = re.search(rf"^    {best} ran (\S+)( \+- \S+| \[\S+, \S+\]) "
                     rf"times faster than {other}(.*)$",
                     (site / "run.stderr").read_text(), re.M)
    assert line, (site / "run.stderr").read_text()
    assert line[1] == f"{med[best] / med[other]:.2f}"
    # ASCII under LC_ALL=C: "+- HALF", or "[LO, HI]" when lopsided.
    iv = [float(f.strip("[,]")) for f in line[2].split() if f != "+-"]
    assert iv[0] >= 0 and (len(iv) == 1 or iv[0] <= float(line[1]) <= iv[1])
    assert line[3].startswith(" (control)") == (other == "openssl-evp")
    # The report's verdict, and why it has none where the interval alone
    # would have given one (its t-test).
    js = json.loads(seqorch(site, "report", "--latest", "--format",
                            "json").stdout)
    vs = next(c["vs_best"] for c in js["runs"][0]["cells"]
              if c["variant"] == other)
    tail = line[3].removeprefix(" (control)")
    if vs["verdict"] != "undecided":
        assert tail == "", line[0]
    elif vs["lo"] > 1 or vs["hi"] < 1:
        assert re.fullmatch(r" \(not distinguishable: the t-test('s p = "
                            r"\S+ is over 5%| of the samples' logs points "
                            r"the other way)\)", tail), line[0]
    else:
        assert tail == " (not distinguishable)", line[0]


def test_html_names_break_at_sensible_points(site):
    """On a narrow screen names, paths and the command break after a '-'
    inside a word, a '/' or a middle dot, hashes every 16 digits (issue
    32 item 21), and nothing breaks at any letter (overflow-wrap)."""
    db = site / "results.db"
    page = seqorch(site, "report", "--db", db, "--format", "html").stdout
    assert "anywhere" not in page
    want = re.sub(r"(?<=[A-Za-z0-9])-(?=[A-Za-z0-9])", "-<wbr>",
                  str(db).replace("/", "/<wbr>"))
    assert f"<p>From <code>{want}</code>" in page
    assert "'c-<wbr>fused,openssl-<wbr>evp'" in page
    assert "'--study'" in page and "-<wbr>-" not in page
    assert "<wbr>".join(["0" * 16] * 4) in page
    (digest,), = query(db, "SELECT DISTINCT digest FROM samples")
    parts = [digest[i:i + 16] for i in range(0, 64, 16)]
    assert f"<code>{'<wbr>'.join(parts)}</code>" in page


def test_text_of_another_database_reaches_no_terminal(site, tmp_path):
    """Issue 29 item 11: a database someone else wrote (sqlite3, no
    import to refuse it) with an ESC sequence and a newline in its host
    name and a window's drift: `windows`, `compare --baseline-db` and
    `report --db` (every format, the per-sample CSV read straight from the
    database included) show every control character as '?', on the line
    it belongs to."""
    a = tmp_path / "a.db"
    shutil.copy(site / "results.db", a)
    evil = "lo\x1b[31mcal\nforged"
    con = sqlite3.connect(a)
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = "
                            "'table'").fetchall():
        cols = [c[1] for c in con.execute(f'PRAGMA table_info("{t}")')]
        col = "name" if t == "hosts" else "host"
        if col in cols:
            con.execute(f'UPDATE "{t}" SET "{col}" = ? WHERE "{col}" = '
                        "'local'", (evil,))
    con.execute("UPDATE windows SET drift = ?", ("a\x1b[2Jb\nforged line",))
    con.commit()
    con.close()
    shown = "lo?[31mcal?forged"
    r = seqorch(tmp_path, "windows", "--db", a)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\nforged" not in r.stdout, r.stdout
    assert "      drift: a?[2Jb?forged line\n" in r.stdout, r.stdout
    assert shown[:12] in r.stdout, r.stdout      # the host column's width
    for fmt in ("text", "markdown", "csv", "json"):
        r = seqorch(tmp_path, "compare", "--baseline-db", a, "--db",
                    site / "results.db", "1", "1", "--format", fmt)
        assert r.returncode in (0, 1), r.stderr
        out = r.stdout + r.stderr
        assert "\x1b" not in out and "\nforged" not in out, (fmt, out)
        assert shown in out, (fmt, out)
    for fmt in ("text", "markdown", "csv", "json", "html"):
        r = seqorch(tmp_path, "report", "--db", a, "--format", fmt)
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in r.stdout and "\nforged" not in r.stdout, \
            (fmt, r.stdout)
        assert shown in r.stdout, (fmt, r.stdout)
