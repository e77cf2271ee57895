"""Shared pytest fixtures: the built binaries, a scratch directory with a
local-only hosts.toml, and helpers that run seqorch and read results.db."""
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lib_fakecc import FAKE_CC

ROOT = Path(__file__).resolve().parent.parent
# `make sanitize` points this at its ASan/UBSan build.
BIN = Path(os.environ.get("SEQORCH_BIN_DIR", ROOT))
SEQORCH = BIN / "seqorch"
AGENT = BIN / "seqorch-agent"
# Independently computed (Python hashlib) chain digests, from shared/vectors.
VECTORS = ROOT / "tests" / "vectors" / "chains.json"


@functools.lru_cache(maxsize=None)
def sha3_chain(steps, seed=bytes(32)):
    """The chain computed independently with Python's hashlib (once per
    length and seed: the SSH tests check 300,000 steps many times)."""
    x = seed
    for _ in range(steps):
        x = hashlib.sha3_256(x).digest()
    return x.hex()


# A variant's KF_* feature bits (kernels/kernel.h) as the kernel names them
# in /proc/cpuinfo: the tests' own view of what this CPU runs, not the
# agent's cpuid or hwcap reading that it checks.
KF_CPUINFO = {
    "KF_X86_AVX2": {"avx2"}, "KF_X86_AVX512": {"avx512f", "avx512vl"},
    "KF_X86_BMI2": {"bmi2"}, "KF_X86_AVX512DQ": {"avx512dq"},
    "KF_X86_SHA512": {"sha512"}, "KF_X86_AES": {"aes"},
    "KF_ARM_SHA3": {"sha3"}, "KF_ARM_SHA512": {"sha512"},
    "KF_ARM_SVE": {"sve"}, "KF_ARM_SVE2_BITPERM": {"svebitperm"},
    "KF_ARM_AES": {"aes"},
}


@functools.lru_cache(maxsize=None)
def cpuinfo():
    """/proc/cpuinfo's fields of its first processor (the first value of
    each name)."""
    info = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def cpu_flags():
    """The flags (x86-64) or Features (aarch64) line of /proc/cpuinfo."""
    info = cpuinfo()
    return frozenset(info.get("flags", info.get("Features", "")).split())


def cpuinfo_signature():
    """x86-64: "family F model M stepping S" from /proc/cpuinfo's first
    processor, what the agent's cpu_signature must say; None elsewhere."""
    info = cpuinfo()
    if "cpu family" not in info:
        return None
    return (f"family {info['cpu family']} model {info['model']} "
            f"stepping {info['stepping']}")


def cpu_lacks(study, variant):
    """The /proc/cpuinfo flags this CPU lacks for the variant's declared
    features (`.features` in its kernel.c), sorted; [] if it runs here."""
    src = ROOT / "kernels" / study / variant / "kernel.c"
    text = src.read_text() if src.exists() else ""
    m = re.search(r"\.features\s*=\s*([A-Z0-9_|\s]+),", text)
    if m is None and any(
            ".features" in (ROOT / "kernels" / h).read_text()
            for h in re.findall(r'#include "([^"]+\.h)"', text)
            if (ROOT / "kernels" / h).exists()):
        # sha3's openssl-fused: a macro in a shared header, per arch
        raise ValueError(f"{study}/{variant} declares its features in a "
                         "header: cpu_lacks cannot read them")
    need = set()
    for bit in (m.group(1).split("|") if m else []):
        if bit.strip() != "0":
            need |= KF_CPUINFO[bit.strip()]
    return sorted(need - cpu_flags())


def runs_here(study, variants):
    """The variants of a study (of this machine's manifest) whose features
    this CPU has: those the agent must measure, not skip."""
    return [v for v in variants if not cpu_lacks(study, v)]


@contextlib.contextmanager
def locked(path):
    """An exclusive flock on path for the with block: pytest-xdist workers
    take their turn at what must happen once."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def session_root(tmp_path_factory):
    """The directory every worker of this pytest run shares: the xdist
    workers' base directories sit side by side in the controller's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under `--dist loadgroup` (make test), the tests of a file that share
    a module-scoped fixture (a built harness, a measured results.db, a
    collector) run on one worker, which sets it up once; every other test
    goes to whichever worker is free.  xdist hands the work out in the
    order collected, so the groups come first: a group is a long chain
    on one worker (test_47's RandomX builds alone take minutes), and one
    handed out last ran on while the other workers had finished."""
    grouped = set()
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(defs[-1].scope in ("package", "module", "class")
               for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
            grouped.add(item)
    if getattr(config.option, "dist", "no") != "no":
        items.sort(key=lambda item: item not in grouped)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With SEQORCH_TEST_CPU=FILE, a line a test appended to FILE: the
    processor seconds of the processes it waited for, of its worker, and
    its wall seconds (setup, call and teardown; a module fixture's setup
    counts for its first test).  --durations gives wall time, which load
    inflates alike for every test; this says what a test costs the
    machine.  What an sshd host runs is sshd's child, not counted."""
    log = os.environ.get("SEQORCH_TEST_CPU")
    if not log:
        yield
        return
    t = time.monotonic()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    yield
    me2 = resource.getrusage(resource.RUSAGE_SELF)
    kids2 = resource.getrusage(resource.RUSAGE_CHILDREN)

    def cpu(a, b):
        return b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime
    with open(log, "a") as f:
        f.write(f"{cpu(kids, kids2):.2f}\t{cpu(me, me2):.2f}\t"
                f"{time.monotonic() - t:.2f}\t{item.nodeid}\n")


@pytest.fixture(scope="session", autouse=True)
def built():
    """make builds both binaries once per test session; xdist workers wait
    for the first one's make and then find everything up to date."""
    (ROOT / "build").mkdir(exist_ok=True)
    with locked(ROOT / "build" / "pytest-make.lock"):
        subprocess.run(["make", "-s", "all"], cwd=ROOT, check=True)
    assert SEQORCH.exists() and AGENT.exists()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory, built):
    """The local host's work directory for the local-host tests.  Its
    build/ is one directory for all xdist workers, and the first worker
    builds the agent there (seqorch deploy) while the others wait: the
    content-addressed build is done once per session and reused.  Runs
    and the host lock stay per worker, so workers do not queue for each
    other's measurement windows."""
    root = session_root(tmp_path_factory)
    shared = root / "agent-build"
    wd = tmp_path_factory.mktemp("workdir")
    with locked(root / "agent-build.lock"):
        shared.mkdir(exist_ok=True)
        before = set(os.listdir(shared))
        (wd / "build").symlink_to(shared)
        cwd = tmp_path_factory.mktemp("deploy")
        write_hosts(cwd / "hosts.toml", wd)
        r = seqorch(cwd, "deploy", "--hosts", "local")
        assert r.returncode == 0, r.stdout + r.stderr
        # The first worker's deploy made the default build.  A later
        # worker's "new" entries are other workers' builds of other keys,
        # made or half-made meanwhile by tests whose workdir shares this
        # build/ (test_52's gcc and clang): recording one of them broke
        # every test of agent_build after it.
        new = [n for n in set(os.listdir(shared)) - before
               if ".tmp." not in n]
        default = root / "agent-build.default"
        if new and not default.exists():
            default.write_text(new.pop())
    return wd


@pytest.fixture(scope="session")
def agent_build(workdir, tmp_path_factory):
    """The session's one agent build with the defaults (cc, -O3), the
    directory `seqorch deploy` made in workdir's build/: sshd.py copies it
    into each server's workdir, whose deploy then finds it built (the
    build key is the sources, compiler, flags and wrapper, the same on
    every host of this machine).  Read it, never write it."""
    root = session_root(tmp_path_factory)
    build = workdir / "build" / (root / "agent-build.default").read_text()
    assert (build / "meta").stat().st_size > 0
    return build


def seed_build(workdir, agent_build, owner=None):
    """A copy of the session's agent build (agent_build) in workdir's
    build/, owned by owner (uid, gid) when given: a deploy there with the
    same key (sources, compiler, flags, wrapper) finds the agent built and
    does not compile it again, and a test that alters the copy alters only
    its own.  The objects stay behind: only a build reads them."""
    dst = Path(workdir) / "build" / agent_build.name
    shutil.copytree(agent_build, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("obj"))
    if owner is not None:
        for d, dirs, files in os.walk(Path(workdir) / "build"):
            for n in [d, *(os.path.join(d, f) for f in dirs + files)]:
                os.chown(n, *owner)
    return Path(workdir)


# What the agent built by bad_cc does, by $SEQORCH_BAD_AGENT: these modes
# break its stream in the shell; any other mode is helpers/bad_agent.py's.
BAD_MODES = {
    # valid records, then a line that is not JSON
    "garbage": '{ "$0.real" "$@" | head -n 7; echo "this is not json"; } '
               '>> "$out"',
    # valid records, then the agent dies of SIGSEGV
    "crash": '"$0.real" "$@" | head -n 7 >> "$out"; kill -SEGV $$',
    # a digest that is not hex
    "nonhex": '"$0.real" "$@" | sed \'s/"digest":"[0-9a-f]*"/"digest":"zz"/\''
              ' >> "$out"',
    # an unknown field
    "unknown": '"$0.real" "$@" | sed \'s/"type":"sample",/"type":"sample",'
               '"x":1,/\' >> "$out"',
    # a wrong digest that is well formed
    "wrong": '"$0.real" "$@" | sed \'/"type":"sample"/s/"digest":"[0-9a-f]/'
             '"digest":"f/\' >> "$out"',
    # a line far over the size limit
    "huge": '{ "$0.real" "$@" | head -n 3; head -c 200000 /dev/zero | '
            'tr "\\\\0" a; echo; } >> "$out"',
}


BAD_AGENT = ROOT / "tests" / "helpers" / "bad_agent.py"


@pytest.fixture(scope="session")
def bad_cc(workdir, tmp_path_factory):
    """A compiler that builds the real agent wrapped to misbehave as
    $SEQORCH_BAD_AGENT says (BAD_MODES, else helpers/bad_agent.py): one
    agent build for every mode of every file, made once per session in
    workdir's build/, which all workers share, while the others wait.
    A test passes the mode in the run's environment; with the host's
    `cc = "<bad_cc>"` its run finds the agent built."""
    root = session_root(tmp_path_factory)
    cc = root / "bad-cc" / "cc"
    with locked(root / "bad-cc.lock"):
        if not cc.exists():
            cases = "".join(f"{m})\n    {body} ;;\n"
                            for m, body in BAD_MODES.items())
            cases += (f'*)\n    "$0.real" "$@" | {sys.executable} '
                      f'{BAD_AGENT} "$SEQORCH_BAD_AGENT" >> "$out" ;;\n')
            cc.parent.mkdir()
            cc.write_text(FAKE_CC % f"case $SEQORCH_BAD_AGENT in\n{cases}esac")
            cc.chmod(0o755)
            d = tmp_path_factory.mktemp("bad-cc")
            write_hosts(d / "hosts.toml", workdir, f'cc = "{cc}"\n')
            r = seqorch(d, "deploy", "--hosts", "local")
            assert r.returncode == 0, r.stdout + r.stderr
    return cc


@pytest.fixture(scope="session")
def gcc_clang(workdir, tmp_path_factory):
    """workdir with gcc's and clang's agent builds in its build/ (a host
    with `cc = ["gcc", "clang"]`), made once per session by the first
    worker while the others wait: test_52's runs, concurrent on several
    workers, otherwise each built both into the one shared build/."""
    root = session_root(tmp_path_factory)
    done = root / "gcc-clang.builds"
    with locked(root / "gcc-clang.lock"):
        if not done.exists():
            # Built in a workdir of their own, so that its build/ holds
            # these two and nothing another worker builds meanwhile in
            # the shared one (a half-made build there was taken for
            # clang's or gcc's), then moved into the shared build/: the
            # key does not depend on the workdir.
            own = tmp_path_factory.mktemp("gcc-clang-wd")
            d = tmp_path_factory.mktemp("gcc-clang")
            write_hosts(d / "hosts.toml", own, 'cc = ["gcc", "clang"]\n')
            r = seqorch(d, "deploy", "--hosts", "local")
            assert r.returncode == 0, r.stdout + r.stderr
            names = sorted(os.listdir(own / "build"))
            assert len(names) == 2, names
            shared = workdir / "build"
            for n in names:
                if not (shared / n).exists():
                    os.rename(own / "build" / n, shared / n)
            # Which is which, by the version line their meta records.
            done.write_text("".join(
                "clang " + n + "\n" if "clang" in
                (shared / n / "meta").read_text() else "gcc " + n + "\n"
                for n in names))
    return workdir


def gcc_build(gcc_clang, tmp_path_factory):
    """The directory of gcc_clang's gcc build (read it, never write it)."""
    builds = dict(line.split() for line in (session_root(
        tmp_path_factory) / "gcc-clang.builds").read_text().splitlines())
    return gcc_clang / "build" / builds["gcc"]


# What `make all` leaves under build/ (the unit tests, benches and locks
# stay behind).
BUILD_DIRS = ("agent", "coord", "kernels", "orchestrator")


def copy_tree(dst, build=True):
    """Copies the tracked and untracked (not ignored) files of the tree to
    dst, timestamps kept.  With build, also the session's build/ (after
    `built`), so that make in the copy rebuilds only what the copy's
    changes touch, as it would in a developer's tree."""
    files = subprocess.run(["git", "ls-files", "-z", "-co",
                            "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True).stdout.split(b"\0")
    dirs = set()
    for f in filter(None, files):
        out = dst / f.decode()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f.decode(), out)
        dirs.update(Path(f.decode()).parents)
    # The folders' times too, deepest first (a file made in a folder
    # changes its time): make reads kernels/'s folders as the registry's
    # inputs, and a copy's newer ones rebuilt both binaries.
    for d in sorted(dirs, key=lambda d: -len(d.parts)):
        st = (ROOT / d).stat()
        os.utime(dst / d, ns=(st.st_atime_ns, st.st_mtime_ns))
    if build:
        copy_build(dst)


def copy_build(dst):
    def skip(d, names):
        if Path(d) != ROOT / "build":
            return []
        return [n for n in names if n.endswith(".lock") or
                ((Path(d) / n).is_dir() and n not in BUILD_DIRS)]
    shutil.copytree(ROOT / "build", dst / "build", symlinks=True,
                    ignore=skip)


def write_hosts(path, workdir, extra=""):
    path.write_text(
        "[hosts.local]\n"
        'transport = "local"\n'
        "cpu = 0\n"
        f'workdir = "{workdir}"\n' + extra)
    return path


@pytest.fixture
def scratch(tmp_path, workdir):
    write_hosts(tmp_path / "hosts.toml", workdir)
    return tmp_path


def seqorch(cwd, *args, timeout=600, **kw):
    """Run ./seqorch in cwd; returns the CompletedProcess (text)."""
    return subprocess.run([str(SEQORCH), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          **kw)


def query(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def agent_pids(workdir):
    """Pids of agent processes whose binary lies under workdir (what
    `pgrep -f WORKDIR/build/.*seqorch-agent` finds, without regex
    escaping of the path): this test's agents, not another worker's."""
    out = []
    prefix = str(workdir) + "/"
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        exe = argv[0].decode(errors="replace")
        if exe.startswith(prefix) and exe.endswith("/seqorch-agent"):
            out.append(int(d))
    return out


def vectors():
    return json.loads(VECTORS.read_text())
