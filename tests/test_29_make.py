"""`make` twice does nothing the second time: the generated tables and the
man page keep their times when their content is the same, so `make -q`
exits 0 right after `make`, while a changed input still rebuilds what
depends on it.  The tests work in one copy of the tree with the session's
build/ (conftest.copy_tree), timestamps kept, as a developer's tree."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import copy_tree

TABLES = ("build/studies.c", "build/agent-registry.c", "build/seqorch.1")


# Under `make test` the parent make's variables would make this a
# sub-make (make[1]: ... lines, its jobserver): this make is a top one.
ENV = {k: v for k, v in os.environ.items()
       if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}


def make(tree, *args):
    return subprocess.run(["make", "-j2", *args], cwd=tree, text=True,
                          capture_output=True, env=ENV)


def question(tree):
    """make -q's exit status: 0 when every target of `all` is current."""
    return make(tree, "-q", "all").returncode


def later(path):
    """Gives path a time later than anything make wrote so far (and not
    in the future, which would keep it newer than what make writes)."""
    time.sleep(0.05)
    os.utime(path)


def times(tree):
    return {f: (tree / f).stat().st_mtime_ns for f in TABLES}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """One copy for the module: each test leaves it current (make -q
    exits 0), which is all the other one needs from it."""
    t = tmp_path_factory.mktemp("make") / "tree"
    copy_tree(t)
    r = make(t, "all")
    assert r.returncode == 0, r.stdout + r.stderr
    return t


def test_make_twice_does_nothing(tree):
    assert question(tree) == 0
    before = times(tree)
    r = make(tree, "all")
    assert r.returncode == 0, r.stderr
    assert "Nothing to be done" in r.stdout, r.stdout
    assert make(tree, "-n", "all").stdout.strip() == \
        "make: Nothing to be done for 'all'."
    assert times(tree) == before

    # registry.sh reads these, but its output stays the same: the tables
    # keep their times and their objects are not rebuilt.
    later(tree / "kernels/studies.txt")
    later(tree / "kernels/sha3/c-fused")
    assert question(tree) == 1
    r = make(tree, "all")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-o build/studies.c.o" not in r.stdout
    assert "-o build/agent-registry.c.o" not in r.stdout
    assert times(tree) == before
    assert question(tree) == 0

    later(tree / "kernels/sha3/c-fused/kernel.c")
    assert question(tree) == 1
    r = make(tree, "all")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-o build/kernels/sha3/c-fused/kernel.c.o" in r.stdout
    assert "-o seqorch-agent" in r.stdout
    assert question(tree) == 0


def test_removed_variant_rebuilds_tables_at_once(tree):
    # A removed folder changes only its parent's time; one `make` must
    # rewrite both tables and rebuild their objects and binaries.
    shutil.rmtree(tree / "kernels/sha3/c-unrolled")
    later(tree / "kernels/sha3")
    r = make(tree, "all")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-o build/studies.c.o" in r.stdout
    assert "-o build/agent-registry.c.o" in r.stdout
    assert "c-unrolled" not in (tree / "build/studies.c").read_text()
    assert "c_unrolled" not in (tree / "build/agent-registry.c").read_text()
    assert "c-unrolled" not in (tree / "build/sources.h").read_text()
    assert question(tree) == 0

    for f in TABLES:
        (tree / f).unlink()
    r = make(tree, "all")
    assert r.returncode == 0, r.stdout + r.stderr
    for f in TABLES:
        assert (tree / f).stat().st_size > 0, f
    assert question(tree) == 0
