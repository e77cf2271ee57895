"""A user's first run (issue 23): the Makefile's goals on a fresh clone of
a machine with no compiler yet, a cold agent build on a real sshd host
that says which step it is at (in the plain log, and on the live line
through a real pty, script(1)), and the end of a run of one sample."""
import os
import re
import subprocess

from conftest import copy_tree
from sshd import sshd_factory, user_key  # noqa: F401 (fixtures)
from lib_ssh_runs import hosts  # noqa: F401 (a fixture)
from lib_ssh_runs import check_samples, clean_env, run, run_args, write_hosts

# A top-level make, whatever make runs this file (see test_29_make.py).
MAKE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}


def test_make_goals_run_before_any_compiler(tmp_path):
    """On a fresh machine `make run` runs before deps-run has installed
    cc: the goals that build through a sub-make (run, test) and the deps
    goals must not ask the compiler, or include the tables made with it,
    while make reads the Makefile.  (-n prints the recipes; MAKE=true
    stands for the sub-make, which the package install precedes.)"""
    t = tmp_path / "clone"
    copy_tree(t, build=False)
    for goal in ("deps-run", "run", "deps", "test"):
        r = subprocess.run(["make", "-n", goal, "CC=/nonexistent/cc",
                            "MAKE=true"], cwd=t, env=MAKE_ENV, text=True,
                           capture_output=True)
        assert r.returncode == 0, (goal, r.stdout + r.stderr)
        assert r.stderr == "", (goal, r.stderr)
        assert not (t / "build").exists(), goal
    r = subprocess.run(["make", "-n", "run", "MAKE=true"], cwd=t,
                       env=MAKE_ENV, text=True, capture_output=True)
    # A first look: 3 samples of 1M hashes per variant.
    assert "\n./seqorch run --study sha3 --hosts local --steps 1000000\n" \
        in r.stdout, r.stdout


def build_commands(server):
    """The compile commands of the host's one build (its commands file)
    and the agent's total of steps: each compile, and the link."""
    files = list(server.workdir.glob("build/*/commands"))
    assert len(files) == 1, files
    compiles = [line.split(" -c ")[1].split()[0]
                for line in files[0].read_text().splitlines()
                if " -c " in line]
    # The generated table is named inside the build's directory (a
    # temporary name while it is built).
    compiles = [re.sub(r"^/.*/registry-table\.c$", "registry-table.c", f)
                for f in compiles]
    assert compiles
    return compiles, len(compiles) + 1


def check_steps(steps, compiles, total, every):
    """steps: what the build said, in order; every: each step is there."""
    # The libs probe (issue 33) comes before the compiles.
    want = ["probing the libraries variants need"] + [
        f"compiling {i}/{total} {f}" for i, f in
        enumerate(compiles, 1)] + ["linking seqorch-agent"]
    assert steps, "no build step shown"
    assert steps[0] == want[0], steps
    if every:
        assert steps == want, steps
    else:
        # The plain log: a subsequence, in order.
        it = iter(want)
        assert all(s in it for s in steps), steps


def test_cold_build_says_its_step_without_terminal(tmp_path, hosts):
    s, = hosts("fresh", prebuilt=False)     # the cold build is the test
    write_hosts(tmp_path, [s])
    p = run(tmp_path, 2000, 1)
    assert p.returncode == 0, p.stderr
    check_samples(tmp_path / "results.db", "fresh", 2000, 1)
    compiles, total = build_commands(s)
    steps = re.findall(r"^seqorch: fresh: building with cc: (.*)$",
                       p.stderr, re.M)
    check_steps(steps, compiles, total, every=False)
    # Between the build's own line and the end of the preparation.
    lines = p.stderr.splitlines()
    first = lines.index(f"seqorch: fresh: building with cc: {steps[0]}")
    assert lines[first - 1] == "seqorch: fresh: building with cc"
    assert lines.index("seqorch: fresh: ready, waiting for the window") > \
        first


def test_cold_build_step_on_the_live_line(tmp_path, hosts):
    """Through a pty the host's live line is redrawn at each step: the
    typescript holds every redraw."""
    s, = hosts("fresh", prebuilt=False)     # the cold build is the test
    write_hosts(tmp_path, [s])
    ts = tmp_path / "typescript"
    # 200 columns: a live line is cut to the terminal's width.
    cmd = "stty cols 200 && " + " ".join(f"'{a}'" for a in run_args(2000, 1))
    env = dict(clean_env(tmp_path), TERM="xterm")
    p = subprocess.run(["script", "-qefc", cmd, str(ts)], cwd=tmp_path,
                       env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=600)
    out = ts.read_bytes().decode("utf-8", "replace")
    assert p.returncode == 0, out
    compiles, total = build_commands(s)
    steps = re.findall(r"\033\[2Kfresh +building with cc: ([^\r\n\033]*)",
                       out)
    check_steps(steps, compiles, total, every=True)


def test_summary_of_one_sample_has_no_spread(tmp_path, hosts):
    """One sample has no cv: the summary says "-", as the report does,
    not "nan%"."""
    s, = hosts("one")
    write_hosts(tmp_path, [s])
    p = run(tmp_path, 2000, 1)
    assert p.returncode == 0, p.stderr
    tail = p.stderr.split(" ok: 2 samples (0 invalid)")[1]
    # The control may be the best on a busy machine: "openssl-evp (control)".
    assert re.search(r"^  one +(c-fused|openssl-evp \(control\)) +\S+  "
                     r"\S+-\S+  cv -  n 1$", tail, re.M), p.stderr
    assert "nan" not in p.stderr
