"""A user's first hour (issue 23): a compare gate that fails when it
cannot decide, warnings that stay on a terminal, the report's unstable
cells, -o's format from the extension, the end of a run, and the help a
mistyped or unknown name gets.  Runs are real (the local host, the
session's agent build); the terminal tests run seqorch in a real pty
(script(1))."""
import csv
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import SEQORCH, query, seqorch, write_hosts
from lib_common import complete

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
    # Without the gate, compare still reports, and exits 1: nothing was
    # compared (issue 32 item 17).
    p = run(site, "compare", 1, 4, check=False)
    assert p.returncode == 1, p.stderr
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


def test_baseline_alone_judges_newest_measured_run(site, tmp_path):
    """--baseline 2 takes run 5, the newest run measured here; interrupted,
    it is judged and fails the gate (before issue 29 an older ok run was
    gated instead); an --explore run is passed over, and named."""
    p = run(site, "compare", "--baseline", 2, "--fail-slower", 90,
            check=False)
    assert "run 2 (baseline) -> run 5" in p.stdout, p.stdout
    d = copy_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE runs SET status = 'interrupted' WHERE id = 5")
    p = run(d, "compare", "--baseline", 2, "--fail-slower", 90,
            check=False)
    assert p.returncode == 1, p.stderr
    assert "run 2 (baseline) -> run 5" in p.stdout, p.stdout
    assert "--fail-slower cannot decide: run 5 is not ok (interrupted)" in \
        p.stderr
    with con:
        con.execute("UPDATE runs SET exploratory = 1 WHERE id = 5")
    # Run 4 measured other steps: it is named, and no cell compares (exit 1).
    p = run(d, "compare", "--baseline", 2, check=False)
    assert p.returncode == 1 and "no cell could be compared" in p.stderr
    assert "run 2 (baseline) -> run 4" in p.stdout
    assert ('comparing with run 4, the newest run of study "sha3" measured '
            'here; newer, not measured here: 5 exploratory') in p.stderr
    with con:
        con.execute("UPDATE runs SET exploratory = 1 WHERE id > 2")
    con.close()
    p = run(d, "compare", "--baseline", 2, "--format", "json", check=False)
    assert p.returncode == 2, p.stderr
    assert ('no run of study "sha3" measured here after run 2 to compare '
            'it with (newer: 5 exploratory, 4 exploratory, 3 exploratory)'
            ) in p.stderr
    assert p.stdout == ""


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


# --- On a terminal: tmux gives seqorch a real pty and keeps the screen. ---

TREES = Path(__file__).resolve().parent / "sysfs"


class Tmux:
    """One tmux server of our own (its socket in tmp, no config file)
    running cmd in a 150x60 pty; screen() is what a user sees."""

    def __init__(self, cwd, args, env):
        # A socket path must fit sun_path (108 bytes): tmp_path may not.
        # bash, not dash, runs the command: it goes on (to echo EXIT)
        # after a child that handled the Ctrl-C itself.
        self.dir = tempfile.mkdtemp(prefix="seqorch-tmux-")
        self.sock = os.path.join(self.dir, "s")
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cmd = (f"cd {shlex.quote(str(cwd))} && env TERM=xterm {envs} "
               f"{shlex.quote(str(SEQORCH))} "
               + " ".join(shlex.quote(str(a)) for a in args) +
               "; echo EXIT=$?; sleep 600")
        subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null",
                        "new-session", "-d", "-x", "150", "-y", "60", cmd],
                       check=True, env={"PATH": "/usr/bin:/bin",
                                        "SHELL": "/bin/bash"})

    def screen(self):
        return subprocess.run(["tmux", "-S", self.sock, "capture-pane",
                               "-p", "-J", "-S", "-200"], check=True,
                              capture_output=True, text=True).stdout

    def wait(self, pattern, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.screen()
            if re.search(pattern, s, re.M):
                return s
            time.sleep(0.2)
        raise AssertionError(f"no {pattern!r} on screen:\n{s}")

    def keys(self, *k):
        subprocess.run(["tmux", "-S", self.sock, "send-keys", *k],
                       check=True)

    def close(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"],
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def tmux():
    made = []

    def start(cwd, *args, env=None):
        t = Tmux(cwd, args, env or {})
        made.append(t)
        return t
    yield start
    for t in made:
        t.close()


def auto_hosts(d, workdir):
    (d / "hosts.toml").write_text(
        '[hosts.local]\ntransport = "local"\ncpu = "auto"\n'
        f'workdir = "{workdir}"\n')


def test_terminal_keeps_warnings_and_ends_with_summary(tmp_path, workdir,
                                                        tmux):
    """A recorded sysfs tree (powersave governor) makes the preflight
    noisy: its warning must still be on the final screen, above the
    live lines, and again in the summary after the run's line."""
    d = tmp_path / "run"
    d.mkdir()
    auto_hosts(d, workdir)
    t = tmux(d, "run", "--study", "sha3", "--hosts", "local", "--steps",
             3000, "--samples", 3, "--variants", VARIANTS,
             env={"SEQORCH_SYSFS_ROOT": str(TREES / "hybrid-adl")})
    s = t.wait(r"^EXIT=\d+$")
    assert "EXIT=0" in s, s
    warn = re.search(r'host is noisy before the window \(cc\): governor '
                     r'"powersave" on cpu \d+ \(not performance\)[^\n]*', s)
    assert warn, s
    warn = warn.group(0)
    live = s.split("seqorch: run 1 ok:")[0]
    assert f"seqorch: local: warning: {warn}\n" in live, s
    # Below the warnings, the last live lines: the host's and the run's.
    assert re.search(r"^local +done: 6 samples$", live, re.M), s
    assert re.search(r"^all +\[#{24}\] 6/6 samples, 0:00 left$", live,
                     re.M), s
    tail = s.split("seqorch: run 1 ok:")[1]
    assert re.search(r"^  local +(c-fused|openssl-evp) +\S+  \S+-\S+  "
                     r"cv \d+\.\d\d%  n 3$", tail, re.M), s
    assert f"  local: {warn}" in tail.split("warnings (")[1], s
    assert "\nnext: seqorch report --run 1\n" in tail, s


def test_ctrl_c_says_how_to_resume(tmp_path, workdir, tmux):
    d = tmp_path / "run"
    d.mkdir()
    write_hosts(d / "hosts.toml", workdir)
    t = tmux(d, "run", "--study", "sha3", "--hosts", "local", "--steps",
             300000, "--samples", 50, "--variants", "c-fused", "--db",
             "my runs.db")
    t.wait(r"^all +\[.*\] [1-9]\d*/50 samples, \d+:\d\d left$")
    t.keys("C-c")
    s = t.wait(r"^EXIT=\d+$")
    assert "EXIT=130" in s, s
    assert "seqorch: run 1 interrupted:" in s, s
    # Interrupted, not failed (issue 32 item 8), and the bar that claimed
    # time left is gone.
    assert ", 0 hosts ok, 0 failed, 1 interrupted\n" in s, s
    assert not re.search(r"^all +\[", s, re.M), s
    assert "\nresume: seqorch run --resume 1 --db 'my runs.db'\n" in s, s
    assert "\nnext: seqorch report --run 1 --db 'my runs.db'\n" in s, s
    (status,), = query(d / "my runs.db", "SELECT status FROM runs")
    assert status == "interrupted"


def test_bar_counts_every_host_from_the_start(tmp_path, workdir, tmux):
    """Two hosts: the whole run's count is both hosts' cells from its
    first drawing (issue 32 item 7), never one host's alone."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "hosts.toml").write_text(
        '[defaults]\ntransport = "local"\n'
        f'workdir = "{workdir}"\n'
        "[hosts.a]\ncpu = 0\n[hosts.b]\ncpu = 1\n")
    t = tmux(d, "run", "--study", "sha3", "--hosts", "all", "--steps",
             100000, "--samples", 4, "--variants", "c-fused,openssl-evp")
    totals = set()
    deadline = time.time() + 300
    while time.time() < deadline:
        s = t.screen()
        totals |= set(re.findall(r"^all +\[[#-]+\] \d+/(\d+) samples", s,
                                 re.M))
        if re.search(r"^EXIT=\d+$", s, re.M):
            break
        time.sleep(0.05)
    assert "EXIT=0" in s, s
    assert totals == {"16"}, (totals, s)


def test_summary_without_terminal(site):
    """The plain (no pty) end of a run has the same summary."""
    p = run(site, "run", "--study", "sha3", "--hosts", "local",
            "--variants", "c-fused", "--steps", 1000, "--samples", 2)
    tail = p.stderr.split(" ok: 2 samples (0 invalid)")[1]
    # min-max takes the report's dash: an en dash under UTF-8.
    assert re.search(r"^  local +c-fused +\S+  \S+[-–]\S+  "
                     r"cv \d+\.\d\d%  n 2$", tail, re.M), p.stderr
    (rid,), = query(site / "results.db", "SELECT max(id) FROM runs")
    assert tail.endswith(f"\nnext: seqorch report --run {rid}\n"), p.stderr


def unstable_db(site, tmp_path):
    """Run 1 with every sample 1 ms but c-fused's first, 2 ms: exactly one
    cell (c-fused) has a cv, the one of rates r, r, r/2."""
    d = copy_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE samples SET ns = 1000000 WHERE run_id = 1")
        con.execute("UPDATE samples SET ns = 2000000 WHERE run_id = 1 AND "
                    "variant = 'c-fused' AND sample_index = 0")
    con.close()
    r = 2000 * 1e9 / 1e6
    rates = [r / 2, r, r]
    return d, 100 * statistics.stdev(rates) / statistics.mean(rates)


def test_report_flags_unstable_cells(site, tmp_path):
    d, cv = unstable_db(site, tmp_path)
    text = run(d, "report", "--run", 1).stdout
    warn = text.split("\nwarnings\n", 1)[1]
    line = (f'  unstable: c-fused on "local" (cc): cv {cv:.2f}% > --max-cv '
            '1%, the result may be unstable\n')
    # Wrapped at 80 columns (issue 32 item 9): compared word by word.
    assert " ".join(line.split()) in " ".join(warn.split()), text
    assert warn.count("unstable:") == 1
    assert "take more samples (run --samples K)" in warn
    assert "(--max-samples M)" in warn and "(--require-quiet)" in \
        warn.replace("\n  ", " ")
    md = run(d, "report", "--run", 1, "--format", "markdown").stdout
    assert "- " + line.strip() in md
    page = run(d, "report", "--run", 1, "--format", "html").stdout
    assert "unstable: c-fused on &quot;local&quot; (cc)" in page or \
        'unstable: c-fused on "local" (cc)' in page
    doc = json.loads(run(d, "report", "--run", 1, "--format",
                         "json").stdout)
    u = doc["runs"][0]["warnings"]["unstable"]
    assert u["max_cv_pct"] == 1
    assert [(c["variant"], c["host"]) for c in u["cells"]] == \
        [("c-fused", "local")]
    assert u["cells"][0]["cv_pct"] == pytest.approx(cv, rel=1e-9)
    # Above the threshold it is not flagged; a bad threshold is refused.
    text = run(d, "report", "--run", 1, "--max-cv", f"{cv + 1:.0f}%").stdout
    assert "unstable" not in text
    # A bare number is percent too, as compare's --fail-slower; below 1 it
    # needs its sign (0.5 was once read as 50%).
    assert run(d, "report", "--run", 1, "--max-cv",
               f"{cv + 1:.0f}").stdout == text
    p = run(d, "report", "--run", 1, "--max-cv", "0.5", check=False)
    assert p.returncode == 2 and 'invalid --max-cv "0.5"' in p.stderr


@pytest.mark.parametrize("name,check", [
    ("guess.html", lambda s: s.startswith("<!DOCTYPE html>")),
    ("guess.HTM", lambda s: s.startswith("<!DOCTYPE html>")),
    ("guess.md", lambda s: s.startswith("## ")),
    ("guess.csv", lambda s: s.split("\n", 1)[0].startswith("run_id,")),
    ("guess.json", lambda s: json.loads(s)["runs"][0]["id"] == 1),
    ("guess.txt", lambda s: s.startswith("study sha3, run 1: ok")),
    ("guess", lambda s: s.startswith("study sha3, run 1: ok")),
])
def test_output_format_from_extension(site, tmp_path, name, check):
    out = tmp_path / name
    run(site, "report", "--run", 1, "-o", out)
    assert check(out.read_text()), out.read_text()[:200]


def test_output_format_option_wins(site, tmp_path):
    out = tmp_path / "guess.html"
    run(site, "report", "--run", 1, "-o", out, "--format", "json")
    assert json.loads(out.read_text())["runs"][0]["id"] == 1


# --- Names: help, version, a mistyped command, an unknown run. ---

def sq(*args):
    return subprocess.run([str(SEQORCH), *map(str, args)],
                          capture_output=True, text=True)


def test_help_command_and_version():
    h = sq("help", "run")
    assert h.returncode == 0 and h.stdout == sq("run", "--help").stdout
    assert h.stdout.startswith("usage: seqorch run ")
    for v in (["-V"], ["version"], ["--version"]):
        p = sq(*v)
        assert p.returncode == 0 and re.fullmatch(
            r"seqorch \S+( \(commit [0-9a-f]+\))?\n", p.stdout)
    assert "seqorch help COMMAND" in sq("--help").stdout


@pytest.mark.parametrize("typed,meant", [
    ("reprot", "report"), ("rn", "run"), ("compre", "compare"),
    ("exprot", "export"), ("rep", "report"), ("hsots", "hosts")])
def test_mistyped_command_gets_a_suggestion(typed, meant):
    for args in ([typed], ["help", typed]):
        p = sq(*args)
        assert p.returncode == 2
        assert p.stderr == (f'seqorch: unknown command "{typed}"; did you '
                            f'mean "{meant}"?\n')


def test_far_off_command_gets_the_list():
    p = sq("xyzzy")
    assert p.returncode == 2
    assert p.stderr.startswith('seqorch: unknown command "xyzzy"\n\nusage:')


def test_unknown_run_names_the_latest(site):
    for args in (["artifacts", "--run", 99], ["run", "--resume", 99],
                 ["report", "--run", 99], ["export", "--run", 99]):
        p = run(site, *args, check=False)
        assert p.returncode == 2, (args, p.stderr)
        assert re.search(r'no run with id 99 (in "results.db" )?'
                         r'\(latest: (\d+, ){4}\d+\)\n', p.stderr), \
            (args, p.stderr)


def test_resume_of_a_finished_run_says_so_at_once(site):
    (n,), = query(site / "results.db", "SELECT count(*) FROM builds")
    t = time.time()
    p = run(site, "run", "--resume", 2)
    assert time.time() - t < 5
    assert p.stderr == ("seqorch: run 2 is finished (ok): nothing to "
                        "resume\nnext: seqorch report --run 2\n")
    # Nothing connected, built or stored.
    assert query(site / "results.db", "SELECT count(*) FROM builds") == \
        [(n,)]
    assert query(site / "results.db", "SELECT resumes FROM runs WHERE "
                 "id = 2") == [(0,)]


# --- The README and the man page a new user reads first. ---

ROOT = Path(__file__).resolve().parent.parent


def test_man_page_environment_lists_what_the_code_reads():
    """Every variable seqorch or its agent reads with getenv is in the
    man page's ENVIRONMENT section (SEQORCH_URL_<NAME> as its prefix)."""
    names = set()
    for f in [*ROOT.glob("orchestrator/*.c"), *ROOT.glob("agent/*.c")]:
        names |= set(re.findall(r'getenv\("([A-Za-z_]+)"\)', f.read_text()))
        if '"SEQORCH_URL_%s"' in f.read_text():
            names.add("SEQORCH_URL_")
    names -= {"PYTEST_CURRENT_TEST"}    # the agent's check of its seam
    assert {"SEQORCH_TRACE", "SEQORCH_URL_", "HOME"} <= names
    man = subprocess.run(["man", "-l", str(ROOT / "build" / "seqorch.1")],
                         capture_output=True, text=True, check=True,
                         env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"}
                         ).stdout
    env = man.split("\nENVIRONMENT\n")[1].split("\nEXIT STATUS\n")[0]
    # The tags: the lines at the section's indent, "A, B" naming two.
    tags = {t.split()[0] for line in re.findall(r"^       (\S.*)$", env, re.M)
            for t in line.split(", ")}
    for n in names:
        assert n in tags or (n.endswith("_") and any(
            t.startswith(n) for t in tags)), (n, tags)


def test_readme_says_how_seqorch_gets_on_path():
    readme = (ROOT / "README.md").read_text()
    use = readme.split("## Use\n", 1)[1]
    first = use.index("\n    seqorch ")
    before = use[:first]
    assert "./seqorch" in before and "make install" in before
    assert "man -l build/seqorch.1" in before
    assert (ROOT / "build" / "seqorch.1").exists()
    assert "ENVIRONMENT" in before and "SEQORCH_TRACE" in before


# --- fetch --from FILE: the offline path, hash-checked like a download. ---

RANDOMX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / \
    "randomx" / "RandomX-1.1.10.tar.gz"
if not RANDOMX.exists():
    RANDOMX = Path("/work/shared/fixtures/randomx/RandomX-1.1.10.tar.gz")
RANDOMX_SHA = \
    "051cee65700a10adef84e7946416068bc805757683378a854a1b168ec18da783"


@pytest.mark.skipif(not RANDOMX.exists(), reason="no RandomX fixture")
def test_fetch_from_file_then_offline(tmp_path):
    assert hashlib.sha256(RANDOMX.read_bytes()).hexdigest() == RANDOMX_SHA
    cache = tmp_path / "deep" / "cache"
    p = run(tmp_path, "fetch", "--study", "randomx", "--from", RANDOMX,
            "--cache", cache)
    assert p.stdout == (f'randomx: artifact "randomx" from "{RANDOMX}", '
                        f'checked, in "{cache}"\n')
    kept = cache / RANDOMX_SHA
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == RANDOMX_SHA
    assert sorted(os.listdir(cache)) == [RANDOMX_SHA]
    # Offline now: a URL nothing answers is never needed.
    env = dict(os.environ, SEQORCH_URL_RANDOMX="http://127.0.0.1:1/x.tgz")
    p = seqorch(tmp_path, "fetch", "--study", "randomx", "--cache", cache,
                env=env)
    assert p.returncode == 0, p.stderr
    assert "0 artifacts fetched, 1 already cached" in p.stdout


def test_fetch_from_wrong_file_is_refused(tmp_path):
    bad = tmp_path / "RandomX-1.1.10.tar.gz"
    bad.write_bytes(b"not the release\n" * 100)
    cache = tmp_path / "cache"
    p = run(tmp_path, "fetch", "--study", "randomx", "--from", bad,
            "--cache", cache, check=False)
    assert p.returncode == 2
    got = hashlib.sha256(bad.read_bytes()).hexdigest()
    assert p.stderr == (f'seqorch: fetch --from: "{bad}": 1600 bytes with '
                        f'SHA-256 {got}, expected 163987 bytes with SHA-256 '
                        f'{RANDOMX_SHA} (copy deleted)\n')
    assert list(cache.iterdir()) == []
    p = run(tmp_path, "fetch", "--study", "mul", "--from", bad, check=False)
    assert p.returncode == 2 and 'study "mul" fetches no upstream' in \
        p.stderr
    p = run(tmp_path, "fetch", "--study", "randomx,sha3", "--from", bad,
            check=False)
    assert p.returncode == 2 and "give one --study" in p.stderr
    p = run(tmp_path, "fetch", "--study", "randomx", "--from",
            tmp_path / "none", check=False)
    assert p.returncode == 1 and "cannot read" in p.stderr


# --- CSV, artifacts and completion. ---

def shortest(v):
    """Python's repr is the shortest decimal that reads back as v."""
    s = repr(v)
    return s[:-2] if s.endswith(".0") else s


def test_csv_numbers_are_the_shortest_exact_decimals(site, tmp_path):
    d = copy_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE samples SET steps = 3000000, ns = 1149076830 "
                    "WHERE id = (SELECT min(id) FROM samples WHERE "
                    "run_id = 1)")
    con.close()
    out = run(d, "report", "--run", 1, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows
    first = min(rows, key=lambda r: int(r["id"]))
    # %.17g printed 383.02560999999997 for this one.
    assert first["ns_per_step"] == "383.02561"
    for r in rows:
        steps, ns = int(r["steps"]), int(r["ns"])
        assert r["rate"] == shortest(steps * 1e9 / ns), r
        assert float(r["rate"]) == steps * 1e9 / ns
        assert r["ns_per_step"] == shortest(ns / steps), r
        for k in ("calib_mhz", "calib_after_mhz"):
            if r[k]:
                assert r[k] == shortest(float(r[k])) and "e" not in r[k]


def test_artifacts_header_and_total(site):
    out = run(site, "artifacts", "--run", 1).stdout.splitlines()
    assert out[0].split() == ["host", "kind", "build", "name", "bytes",
                              "path"]
    rows = [line.split() for line in out[1:-1]]
    (n, size), = query(site / "results.db", "SELECT count(*), sum(a.size) "
                       "FROM artifact_refs r JOIN artifacts a USING "
                       "(sha256) WHERE r.run_id = 1")
    assert len(rows) == n and sum(int(r[4]) for r in rows) == size
    assert out[-1] == f"total: {n} artifacts, {size} bytes"
    out = run(site, "artifacts", "--run", 1, "--verify").stdout
    assert out.splitlines()[-1] == f"total: {n} artifacts, {size} bytes, " \
        "all ok"


def study_variants(study):
    out = ("\n" + sq("studies").stdout).split(f"\n{study}: ", 1)[1]
    block = re.split(r"\n[a-z0-9-]+: ", out, 1)[0]
    return sorted(v for v in re.findall(r"^  ([a-z0-9-]+) ", block, re.M)
                  if v != "unit")


def test_completion_offers_the_studys_variants_and_run_ids(site):
    assert complete(site, "seqorch", "run", "--study", "mul",
                    "--variants", "") == study_variants("mul")
    both = complete(site, "seqorch", "run", "--study", "sha3,mul",
                    "--variants", "c")
    assert both == sorted({v for s in ("sha3", "mul")
                           for v in study_variants(s) if v.startswith("c")})
    assert "c-fused" in both and "c-float" not in both
    ids = [str(i) for (i,) in query(site / "results.db", "SELECT id FROM "
                                    "runs ORDER BY id DESC LIMIT 5")]
    assert complete(site, "seqorch", "report", "--run", "") == sorted(ids)
    assert complete(site, "seqorch", "run", "--resume", ids[-1][0]) == \
        sorted(i for i in ids if i.startswith(ids[-1][0]))
    assert complete(site, "seqorch", "report", "--db", "none.db", "--run",
                    "") == []


# --- HTML: the banner on top, bars by rate. ---

def test_html_banner_and_bars_by_rate(site, tmp_path):
    d, _ = unstable_db(site, tmp_path)
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE windows SET verdict = 'noisy' WHERE run_id = 1")
        # Other medians per variant, so the order is the rates' alone.
        con.execute("UPDATE samples SET ns = 3000000 WHERE run_id = 1 AND "
                    "variant = 'openssl-evp'")
    con.close()
    (w,), = query(d / "results.db",
                  "SELECT count(*) FROM windows WHERE run_id = 1")
    page = run(d, "report", "--run", 1, "-o", d / "r.html") and \
        (d / "r.html").read_text()
    banner = re.search(r'<div class="banner" role="alert" data-warnings="'
                       r'(\d+)" data-noisy="1"><strong>Noisy: local '
                       rf'{w}/{w} windows\.</strong> (\d+) warnings? '
                       r'\(under Warnings below\), of them 1 unstable cell\.'
                       r'</div>', page)
    assert banner, page[:3000]
    # On top: before the first chart and table; no link (nothing to fetch).
    assert page.index('class="banner"') < page.index("<figure")
    assert "href" not in page
    # Bars: fastest first, as the medians in results.db order them.
    titles = re.findall(r'<rect class="bar"[^>]*><title>([^ ]+) on local: '
                        r"median", page)
    rates = {}
    for v, steps, ns in query(d / "results.db", "SELECT variant, steps, ns "
                              "FROM samples WHERE run_id = 1 AND valid = 1"):
        rates.setdefault(v, []).append(steps * 1e9 / ns)
    want = sorted(rates, key=lambda v: -statistics.median(rates[v]))
    assert titles == want and len(want) == 2
    # The main question drawn: each variant against the host's best.
    fig = re.search(r'<figure class="chart" data-chart="vs-best" '
                    r'data-points="2">(.*?)</figure>', page, re.S)
    assert fig, page
    best = statistics.median(rates[want[0]])
    points = re.findall(r"<title>(\S+) on local: ([\d.]+)x the best, ",
                        fig.group(1))
    assert sorted(points) == sorted(
        (v, f"{statistics.median(rates[v]) / best:.3f}") for v in want)
    # A quiet ok run without warnings has no banner (nor a clock that
    # moved across a sample, as one of a loaded machine's may have).
    con = sqlite3.connect(d / "results.db")
    with con:
        con.execute("UPDATE windows SET verdict = 'quiet'")
        con.execute("UPDATE samples SET ns = 1000000, calib_after_mhz = "
                    "calib_mhz WHERE run_id = 1")
        con.execute("DELETE FROM events WHERE run_id = 1")
    con.close()
    page = run(d, "report", "--run", 1, "--format", "html").stdout
    assert 'class="banner"' not in page


def test_build_labels_name_the_targeting(site, tmp_path):
    """Two builds of one compiler on a host (randomx's default and
    native): their rows say so, not cc#4 and cc#5; the same targeting
    twice still needs the id."""
    d = copy_db(site, tmp_path)
    db = d / "results.db"
    con = sqlite3.connect(db)
    cols = [c[1] for c in con.execute("PRAGMA table_info(builds)")
            if c[1] != "id"]
    with con:
        (b1,), = con.execute("SELECT min(build_id) FROM samples WHERE "
                             "run_id = 1").fetchall()
        con.execute(f"INSERT INTO builds ({', '.join(cols)}) SELECT "
                    f"{', '.join(cols)} FROM builds WHERE id = ?", (b1,))
        (b2,), = con.execute("SELECT max(id) FROM builds").fetchall()
        con.execute("UPDATE builds SET targeting = 'default' WHERE id = ?",
                    (b1,))
        con.execute("UPDATE builds SET targeting = 'native' WHERE id = ?",
                    (b2,))
        con.execute("UPDATE samples SET build_id = ? WHERE run_id = 1 AND "
                    "variant = 'c-fused'", (b2,))
    con.close()
    text = run(d, "report", "--run", 1).stdout
    assert "cc, native" in text and "cc, default" in text, text
    page = run(d, "report", "--run", 1, "--format", "html").stdout
    assert "c-fused · local (cc, native)" in page
    assert "openssl-evp · local (cc, default)" in page
    assert f"cc#{b1}" not in text + page and f"cc#{b2}" not in text + page
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE builds SET targeting = 'native' WHERE id = ?",
                    (b1,))
    con.close()
    text = run(d, "report", "--run", 1).stdout
    assert f"cc#{b1}" in text and f"cc#{b2}" in text


def test_bar_counts_extra_rounds_as_extra(tmp_path, workdir, tmux):
    """--samples 2 and a --max-cv no variant meets, to --max-samples 4:
    samples 3 and 4 are extra rounds.  The run's line read "2/2 samples,
    0:00 left" through them (the planned count, done, and no time left)
    and at the end; it counts them as extra."""
    d = tmp_path / "run"
    d.mkdir()
    write_hosts(d / "hosts.toml", workdir)
    t = tmux(d, "run", "--study", "mul", "--hosts", "local", "--variants",
             "c", "--steps", 1000, "--samples", 2, "--max-cv", "0.0001%",
             "--max-samples", 4)
    s = t.wait(r"^EXIT=\d+$")
    assert "EXIT=0" in s, s
    live = s.split("seqorch: run 1 ok:")[0]
    assert re.search(r"^local +done: 4 samples$", live, re.M), s
    assert re.search(r"^all +\[#{24}\] 2/2 samples \+ 2 extra$", live,
                     re.M), s


def test_summary_names_a_control_as_best(tmp_path, workdir):
    """openssl-evp alone: the host's best is sha3's control, the host's
    libcrypto through EVP, and the run's summary says so as the report
    does (it read "local  openssl-evp  ..." like any variant)."""
    write_hosts(tmp_path / "hosts.toml", workdir)
    p = run(tmp_path, "run", "--study", "sha3", "--hosts", "local",
            "--variants", "openssl-evp", "--steps", 1000, "--samples", 2)
    assert re.search(r"^  local +openssl-evp \(control\) +\S+  \S+[-–]\S+  "
                     r"cv \d+\.\d\d%  n 2$", p.stderr, re.M), p.stderr
