"""The artifact store beside results.db (docs/provenance.md): every run
keeps its raw agent output, the binary fetched back from the host, its
disassembly, the build log and commands and every uploaded source, each
under its SHA-256; `seqorch artifacts` lists them, `seqorch gc` removes
only what no run names."""
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, SEQORCH, execute, query, seqorch
from lib_common import faketime_lib

KINDS = {"raw", "binary", "disasm", "build-log", "build-commands", "source"}


def listing(cwd, run_id, *extra):
    r = seqorch(cwd, "artifacts", "--run", run_id, *extra)
    rows = []
    lines = r.stdout.splitlines()
    if lines:
        # A header, one line per artifact, and the total of them.
        assert lines[0].split()[:6] == ["host", "kind", "build", "name",
                                        "bytes", "path"], lines[0]
        total = lines.pop().split()
        # Columns line up however long a name (a raw output's 32 digits).
        col = lines[0].index("path")
        assert all(ln[col - 2:col + 1] == "  /" for ln in lines[1:]), lines
        lines.pop(0)
    for line in lines:
        host, kind, build, name, size, path, *state = line.split()
        rows.append(dict(host=host, kind=kind, build=int(build), name=name,
                         size=int(size), path=path, state=state))
    if rows:
        assert total[:4] == ["total:", str(len(rows)), "artifacts,",
                             str(sum(x["size"] for x in rows))], total
        assert total[4] == ("bytes," if "--verify" in extra else "bytes")
    return r, rows


def run(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "500", "--samples", "2", "--variants",
                "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr


def test_a_run_keeps_what_it_measured_with(scratch, workdir):
    run(scratch)
    r, rows = listing(scratch, 1, "--verify")
    assert r.returncode == 0, r.stderr
    assert {x["kind"] for x in rows} == KINDS
    for x in rows:
        data = open(x["path"], "rb").read()
        assert hashlib.sha256(data).hexdigest() == os.path.basename(
            x["path"]), x
        assert len(data) == x["size"] and x["state"] == ["ok"]
    db = scratch / "results.db"
    by = {(x["kind"], x["name"]): x for x in rows}
    # The binary is the one the build row names, and the one that ran.
    (binsum,), = query(db, "select binary_sha256 from builds")
    assert os.path.basename(by["binary", "seqorch-agent"]["path"]) == binsum
    agents = list(workdir.glob("build/*/seqorch-agent"))
    assert binsum in {hashlib.sha256(a.read_bytes()).hexdigest()
                      for a in agents}
    # Sources: exactly the repository's files.
    src = by["source", "kernels/sha3/study.c"]
    assert open(src["path"], "rb").read() == \
        (ROOT / "kernels/sha3/study.c").read_bytes()
    # Raw output: the agent's own lines, which the stored samples came from.
    raw = [x for x in rows if x["kind"] == "raw"]
    assert len(raw) == 1
    recs = [json.loads(line) for line in open(raw[0]["path"])]
    got = sorted((r["variant"], r["sample"], r["ns"], r["digest"])
                 for r in recs if r["type"] == "sample")
    want = sorted(query(db, "select variant, sample_index, ns, digest "
                        "from samples"))
    assert got == want and recs[-1]["type"] == "done"
    dis = open(by["disasm", "objdump"]["path"]).read()
    symbols = query(db, "select symbol from disasm")
    assert symbols
    for sym, in symbols:
        assert f"<{sym}>:" in dis, sym


def test_a_binary_is_stored_once_and_gc_keeps_what_runs_name(scratch):
    run(scratch)
    run(scratch)
    store = scratch / "artifacts"
    _, rows1 = listing(scratch, 1)
    _, rows2 = listing(scratch, 2)
    b1 = [x["path"] for x in rows1 if x["kind"] == "binary"]
    b2 = [x["path"] for x in rows2 if x["kind"] == "binary"]
    assert b1 == b2
    raw1 = [x["path"] for x in rows1 if x["kind"] == "raw"][0]
    # An orphan left by a killed coordinator: old ones go, fresh ones stay.
    old = store / ("0" * 64)
    old.write_text("left behind")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    fresh = store / ("1" * 64)
    fresh.write_text("being stored")
    r = seqorch(scratch, "gc", "--dry-run")
    assert r.returncode == 0 and "would remove 1 artifact" in r.stderr
    assert old.exists()
    # Run 1's rows go (as a user deleting a run would): only what no other
    # run names is removed.
    execute(scratch / "results.db",
            ("delete from artifact_refs where run_id = 1",))
    r = seqorch(scratch, "gc")
    assert r.returncode == 0, r.stderr
    assert "removed 2 artifacts" in r.stderr, r.stderr
    assert not os.path.exists(raw1) and not old.exists() and fresh.exists()
    r, rows = listing(scratch, 2, "--verify")
    assert r.returncode == 0 and all(x["state"] == ["ok"] for x in rows)


def test_verify_names_a_changed_artifact(scratch):
    run(scratch)
    _, rows = listing(scratch, 1)
    victim = [x for x in rows if x["kind"] == "build-commands"][0]["path"]
    os.chmod(victim, 0o644)
    with open(victim, "a") as f:
        f.write("tampered\n")
    r, rows = listing(scratch, 1, "--verify")
    assert r.returncode == 1
    assert f'artifact "{victim}" was changed' in r.stderr
    assert [x["state"] for x in rows if x["path"] == victim] == [["BAD"]]


def test_artifacts_errors(scratch):
    r = seqorch(scratch, "artifacts")
    assert r.returncode == 2 and "--run is required" in r.stderr
    r = seqorch(scratch, "artifacts", "--run", "1")
    assert r.returncode == 3 and 'cannot open "results.db"' in r.stderr
    run(scratch)
    r = seqorch(scratch, "artifacts", "--run", "7")
    assert r.returncode == 2 and "no run with id 7 (latest: 1)" in r.stderr



def age(store):
    """Every file of the store an hour old, and an orphan among them (a
    coordinator killed between writing and recording): what gc takes for
    a crash's leftover unless a database names it."""
    orphan = store / ("0" * 64)
    orphan.write_text("left behind")
    hour_ago = time.time() - 3600
    for f in store.iterdir():
        os.utime(f, (hour_ago, hour_ago))
    return orphan


def test_gc_keeps_what_other_databases_beside_it_name(scratch):
    """Every database in a directory shares the artifacts/ beside it (the
    README's `import ... --db theirs.db` next to results.db), so gc on one
    removes nothing another one names, however old.  Before, gc took every
    file its own database did not name for a crash's leftover."""
    run(scratch)
    r = seqorch(scratch, "run", "--study", "mul", "--hosts", "local",
                "--steps", "1000", "--samples", "1", "--db", "theirs.db")
    assert r.returncode == 0, r.stderr
    _, mine = listing(scratch, 1)
    _, theirs = listing(scratch, 1, "--db", "theirs.db")
    only_mine = {x["path"] for x in mine} - {x["path"] for x in theirs}
    assert only_mine and theirs
    # Another program's database, and one seqorch made before artifacts
    # (schema version 4), name nothing and stop nothing.
    con = sqlite3.connect(scratch / "notes.db")
    con.execute("create table notes (text)")
    con.commit()
    con.close()
    con = sqlite3.connect(scratch / "old.db")
    con.execute("pragma user_version = 4")
    con.execute("create table runs (id)")
    con.commit()
    con.close()
    # A write artifact_put never renamed (its process killed) goes; a
    # file that is none of seqorch's stays, unnamed.
    cut = scratch / "artifacts" / ".tmp.4242.AbCdEf"
    cut.write_text("half an artifact")
    notes = scratch / "artifacts" / "notes.txt"
    notes.write_text("mine")
    orphan = age(scratch / "artifacts")
    # Run 1's rows go from results.db: its files go, but for those
    # theirs.db names as well.
    execute(scratch / "results.db",
            ("delete from artifact_refs where run_id = 1",))
    r = seqorch(scratch, "gc")
    assert r.returncode == 0, r.stderr
    v, rows = listing(scratch, 1, "--verify", "--db", "theirs.db")
    assert v.returncode == 0, v.stderr
    assert len(rows) == len(theirs)
    assert all(x["state"] == ["ok"] for x in rows)
    removed = {line.split()[0] for line in r.stdout.splitlines()}
    assert removed == {os.path.basename(p) for p in only_mine} | {
        orphan.name, cut.name}, r.stdout
    assert f"{cut.name}  16 bytes, a write cut short\n" in r.stdout
    assert f"removed {len(removed)} artifacts" in r.stderr, r.stderr
    assert not cut.exists() and notes.read_text() == "mine"


def cut_short(db):
    """A rollback-journal database left by a writer killed mid-transaction:
    its hot journal, which a reader cannot roll back."""
    subprocess.run([sys.executable, "-c", f"""
import os, sqlite3
con = sqlite3.connect({str(db)!r}, isolation_level=None)
con.execute("create table t (x)")
con.execute("pragma cache_size = 1")
con.execute("begin")
con.execute("insert into t select randomblob(1000) from (with recursive "
            "n(i) as (select 1 union all select i + 1 from n where i < 500) "
            "select i from n)")
os._exit(0)
"""], check=True)
    assert db.with_name(db.name + "-journal").stat().st_size > 0


def test_gc_removes_nothing_when_a_database_beside_it_cannot_be_read(
        scratch):
    """A database beside it that gc cannot read might name any file of
    the store: gc removes nothing, and says which file and why."""
    (scratch / "results.db").touch()
    r = seqorch(scratch, "gc")
    assert r.returncode == 0, r.stderr
    (scratch / "artifacts").mkdir()
    orphan = age(scratch / "artifacts")
    broken = scratch / "broken.db"
    broken.write_bytes(b"SQLite format 3\0" + b"\xff" * 4080)
    cut = scratch / "cut.db"
    cut_short(cut)
    for db, why in ((broken, "file is not a database"),
                    (cut, "a write was cut short and must be rolled back, "
                     "which a reader cannot do (opening it with sqlite3 "
                     "does)")):
        for args in ([], ["--dry-run"]):
            r = seqorch(scratch, "gc", *args)
            assert r.returncode == 3, r.stderr
            assert r.stderr == (f'seqorch: gc: cannot read "{db}": {why}: '
                                'nothing removed\n')
            assert r.stdout == ""
        assert orphan.exists()
        db.unlink()
    r = seqorch(scratch, "gc")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [orphan.name, "11", "bytes"]
    assert not orphan.exists()


def hold(store, how):
    """The store's lock as a writer (LOCK_SH: a run, an import) or gc
    (LOCK_EX) holds it; released when the file is closed."""
    f = open(store / ".lock", "a")
    fcntl.flock(f, how)
    return f


def start(cwd, *args):
    return subprocess.Popen([str(SEQORCH), *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def said(p, text):
    """p's stderr up to the line that has text, which is returned: the
    process says it and then waits, so the test goes on only once it does.
    A process that ends without saying it fails the test."""
    lines = []
    for line in p.stderr:
        lines.append(line)
        if text in line:
            return line
    p.wait()
    pytest.fail(f"exit {p.returncode} without {text!r}:\n" + "".join(lines))


def test_gc_waits_for_a_writer_and_keeps_what_it_named(scratch):
    """A run names a file the store has without writing it again (the
    binary of an earlier build, its sources), and an import stores its
    files before the commit that records them.  gc read every database
    and then removed what none named: a name committed in between named
    a file gc then removed.  Writers hold the store's lock shared from the
    file to the commit, gc exclusive from its first read to its last
    removal, so here gc waits for the writer, then sees its names."""
    run(scratch)
    store = scratch / "artifacts"
    db, theirs = scratch / "results.db", scratch / "theirs.db"
    shutil.copy(db, theirs)
    arts = query(theirs, "select * from artifacts")
    refs = query(theirs, "select * from artifact_refs")
    # theirs.db about to name every file of run 1, which results.db no
    # longer names: gc's to remove, unless it sees theirs.db's names.
    execute(theirs, ("delete from artifact_refs",),
            ("delete from artifacts",))
    execute(db, ("delete from artifact_refs where run_id = 1",))
    writer = hold(store, fcntl.LOCK_SH)
    try:
        p = start(scratch, "gc")
        line = said(p, "in use")
        assert line == (f'seqorch: gc: artifact store "{store.resolve()}" '
                        "is in use by a run or an import storing into it: "
                        "waiting for it, up to 60 s\n")
        # The writer commits its names, then lets go.
        execute(theirs, *[("insert into artifacts values "
                           f"({','.join('?' * len(a))})", *a) for a in arts],
                *[("insert into artifact_refs values "
                   f"({','.join('?' * len(x))})", *x) for x in refs])
    finally:
        writer.close()
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out == "" and err == "seqorch: removed 0 artifacts, 0 bytes\n"
    v, rows = listing(scratch, 1, "--verify", "--db", "theirs.db")
    assert v.returncode == 0, v.stderr
    assert len(rows) == len(refs) and all(x["state"] == ["ok"] for x in rows)


def test_runs_and_imports_wait_for_gc(scratch):
    """While gc holds the store, a run and an import wait for it, say so,
    and then store and name their files; before, they went on while gc
    removed.  An import whose wait outlasts the writer's 600 s (its clock
    200 times faster under libfaketime: 3 s) fails, exit 3, and stores
    nothing."""
    run(scratch)
    store = scratch / "artifacts"
    r = seqorch(scratch, "export", "--run", 1, "--bundle", "b.tar")
    assert r.returncode == 0, r.stderr
    wait = (f'seqorch: artifact store "{store.resolve()}" is in use by gc: '
            "waiting for it, up to 600 s\n")
    for args in (("import", "b.tar", "--unsigned", "--db", "theirs.db"),
                 ("run", "--study", "sha3", "--hosts", "local", "--steps",
                  "500", "--samples", "1", "--variants", "c-fused")):
        gc = hold(store, fcntl.LOCK_EX)
        try:
            p = start(scratch, *args)
            assert said(p, "in use") == wait
        finally:
            gc.close()
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    v, rows = listing(scratch, 1, "--verify", "--db", "theirs.db")
    assert v.returncode == 0 and rows, v.stderr
    v, rows = listing(scratch, 2, "--verify")
    assert v.returncode == 0 and rows, v.stderr
    gc = hold(store, fcntl.LOCK_EX)
    t0 = time.monotonic()
    try:
        r = seqorch(scratch, "import", "b.tar", "--unsigned", "--db",
                    "late.db", timeout=120,
                    env=dict(os.environ, FAKETIME="+0 x200",
                             LD_PRELOAD=str(faketime_lib()),
                             # make sanitize's ASan then comes second.
                             ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS",
                                                         "") +
                             ":verify_asan_link_order=0"))
    finally:
        gc.close()
    assert 2 < time.monotonic() - t0 < 30, r.stderr
    assert r.returncode == 3, r.stderr
    assert r.stderr.endswith(wait + f'seqorch: artifact store '
                             f'"{store.resolve()}" stayed in use by gc for '
                             '600 s\n'), r.stderr
    assert query(scratch / "late.db", "SELECT count(*) FROM runs") == [(0,)]


@pytest.fixture
def nobodys(scratch):
    """A copy of scratch's database, store and bundle in a directory
    outside root's private tmp, and how to run as its owner: nobody when
    we are root (its files made nobody's), so that permission bits apply;
    removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="seqorch-store-", dir="/tmp")).resolve()
    d.chmod(0o755)
    shutil.copy(scratch / "results.db", d)
    shutil.copytree(scratch / "artifacts", d / "artifacts")
    shutil.copy(scratch / "b.tar", d)
    drop = None
    if os.geteuid() == 0:
        for p in [SEQORCH, *SEQORCH.parents]:
            if not p.stat().st_mode & stat.S_IXOTH:
                pytest.skip(f"nobody cannot reach {SEQORCH}")
        for p in [d, *d.rglob("*")]:
            os.lchown(p, 65534, 65534)

        def drop():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
    yield d, drop
    for p in [d, *d.rglob("*")]:
        p.chmod(0o755)
    shutil.rmtree(d)


def store_state(d):
    return (sorted(p.name for p in (d / "artifacts").iterdir()),
            query(d / "results.db", "select * from artifacts"))


@pytest.fixture
def exported(scratch):
    run(scratch)
    r = seqorch(scratch, "export", "--run", 1, "--bundle", "b.tar")
    assert r.returncode == 0, r.stderr


def test_a_lock_file_this_user_cannot_open(exported, nobodys):
    """artifacts/.lock is there but this user cannot open it (its mode, its
    owner).  gc took that for a store without a lock and removed without
    it; now it removes nothing, names the file and why, exit 3.  A writer
    says so once and stores without it (refused, a run would lose what it
    cannot measure again)."""
    d, drop = nobodys
    lock = d / "artifacts" / ".lock"
    # Every file of run 1 is gc's to remove.
    execute(d / "results.db", ("delete from artifact_refs",))
    lock.touch()
    lock.chmod(0)
    before = store_state(d)
    r = seqorch(d, "gc", preexec_fn=drop)
    assert r.returncode == 3, r.stderr
    assert r.stderr == (f'seqorch: gc: cannot open "{lock}": Permission '
                        "denied: nothing removed\n")
    assert r.stdout == "" and store_state(d) == before
    r = seqorch(d, "import", "b.tar", "--unsigned", "--db", "theirs.db",
                preexec_fn=drop)
    assert r.returncode == 0, r.stderr
    warn = [x for x in r.stderr.splitlines() if str(lock) in x]
    assert warn == [f'seqorch: cannot open "{lock}": Permission denied: '
                    "storing artifacts without the store's lock, so a gc "
                    "meanwhile may remove one this names"], r.stderr
    v, rows = listing(d, 1, "--verify", "--db", "theirs.db")
    assert v.returncode == 0 and rows, v.stderr


def test_gc_on_a_store_it_cannot_write(exported, nobodys):
    """gc forgets a row before it removes the file (a crash between leaves
    a file no row records, swept later, never a row naming no file).  On
    a store this user cannot write it forgot every row and kept every file
    ("cannot remove"), exit 3; now it removes nothing and forgets nothing,
    says which store, exit 3.  With nothing to remove it has nothing to
    refuse."""
    d, drop = nobodys
    store = d / "artifacts"
    if drop is not None:
        os.chown(store, 0, 0)
    store.chmod(0o555)
    r = seqorch(d, "gc", preexec_fn=drop)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "seqorch: removed 0 artifacts, 0 bytes\n"
    execute(d / "results.db", ("delete from artifact_refs",))
    before = store_state(d)
    r = seqorch(d, "gc", preexec_fn=drop)
    assert r.returncode == 3, r.stderr
    assert r.stderr == (f'seqorch: gc: cannot remove files from "{store}": '
                        "Permission denied: nothing removed\n")
    assert r.stdout == "" and store_state(d) == before


def test_gc_gives_up_on_a_store_in_use_after_60_s(scratch):
    """A writer that holds the store longer than gc waits (60 s): gc says
    so, removes nothing, exit 3.  (A writer's 600 s has no test: no
    setting shortens it.)"""
    run(scratch)
    store = scratch / "artifacts"
    execute(scratch / "results.db", ("delete from artifact_refs",))
    files = sorted(p.name for p in store.iterdir())
    rows = query(scratch / "results.db", "select * from artifacts")
    writer = hold(store, fcntl.LOCK_SH)
    try:
        began = time.monotonic()
        p = start(scratch, "gc")
        said(p, "in use")
        out, err = p.communicate(timeout=180)
        took = time.monotonic() - began
    finally:
        writer.close()
    assert p.returncode == 3, err
    assert err == (f'seqorch: gc: artifact store "{store.resolve()}" stayed '
                   "in use by a run or an import for 60 s: nothing "
                   "removed\n")
    assert out == "" and 60 <= took < 120
    assert sorted(p.name for p in store.iterdir()) == files
    assert query(scratch / "results.db", "select * from artifacts") == rows
