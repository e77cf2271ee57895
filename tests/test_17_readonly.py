"""Commands that only read (report, windows, artifacts, compare, export)
open results.db read-only: a database the user cannot write is reported,
nothing is written to it, and a missing one gets one message and is not
created."""
import hashlib
import os
import re
import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, SEQORCH, query, seqorch, write_hosts

MISSING = 'seqorch: cannot open "results.db": No such file or directory\n'


@pytest.fixture(scope="module")
def rundb(tmp_path_factory, workdir):
    """A results.db holding two real runs (sha3 on the local host)."""
    d = tmp_path_factory.mktemp("rundb")
    write_hosts(d / "hosts.toml", workdir)
    for _ in range(2):
        r = seqorch(d, "run", "--study", "sha3", "--hosts", "local",
                    "--variants", "c-fused", "--steps", "500", "--samples",
                    "1")
        assert r.returncode == 0, r.stderr
    return d / "results.db"


def as_reader():
    """Run as nobody when we are root, so that permission bits apply."""
    if os.geteuid() != 0:
        return None
    for p in [SEQORCH, *SEQORCH.parents]:
        if not p.stat().st_mode & stat.S_IXOTH:
            pytest.skip(f"nobody cannot reach {SEQORCH}")

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    return drop


@pytest.fixture
def ro_dir():
    """A directory outside root's private tmp (nobody must reach it),
    made read-only by the test; removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="seqorch-ro-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    d.chmod(0o755)
    shutil.rmtree(d)


def snapshot(d):
    """Every file in d with its bytes' sha256 and its mtime."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(),
                     p.stat().st_mtime_ns) for p in sorted(d.iterdir())}


READS = [
    ["report", "--run", "1"],
    ["report", "--latest", "--format", "json"],
    ["windows"],
    ["artifacts", "--run", "1"],
    ["compare", "1", "2"],
    ["export", "--run", "1"],
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a))
def test_read_only_database_is_read_and_left_alone(rundb, ro_dir, args):
    db = ro_dir / "results.db"
    shutil.copy(rundb, db)
    db.chmod(0o444)
    ro_dir.chmod(0o555)
    before = snapshot(ro_dir)
    r = seqorch(ro_dir, *args, "--db", db, preexec_fn=as_reader())
    assert r.returncode == 0, r.stderr
    assert "database" not in r.stderr, r.stderr
    assert r.stdout.strip(), args
    assert snapshot(ro_dir) == before


def test_report_writes_nothing_to_a_writable_database(rundb, tmp_path):
    """SQLite may leave its -wal and -shm beside a WAL database that a
    read-only connection opened; the database file itself is untouched."""
    db = tmp_path / "results.db"
    shutil.copy(rundb, db)
    before = snapshot(tmp_path)
    r = seqorch(tmp_path, "report", "--run", "1")
    assert r.returncode == 0, r.stderr
    assert "c-fused" in r.stdout
    after = snapshot(tmp_path)
    assert after["results.db"] == before["results.db"]
    assert set(after) <= {"results.db", "results.db-wal", "results.db-shm"}


@pytest.mark.parametrize("args", READS + [["gc"], [
    "publish", "--run", "1", "--url", "https://127.0.0.1:9/",
    "--sign", "key.pem"]], ids=lambda a: a[0] + " " + " ".join(a[1:2]))
def test_missing_database_gets_one_message_and_is_not_created(tmp_path,
                                                              args):
    r = seqorch(tmp_path, *args)
    assert r.returncode == 3, r.stderr
    assert r.stderr == MISSING
    assert list(tmp_path.iterdir()) == []


def schema_at(db, version):
    """A database whose schema is schema.sql's sections 1..version."""
    schema = (ROOT / "schema.sql").read_text()
    sections = re.split(r"^-- version: (\d+)$", schema, flags=re.M)
    con = sqlite3.connect(db)
    for v, sql in zip(sections[1::2], sections[2::2]):
        if int(v) <= version:
            con.executescript(sql)
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    return max(int(v) for v in sections[1::2])


def test_older_schema_that_cannot_be_migrated_is_named(ro_dir):
    db = ro_dir / "results.db"
    latest = schema_at(db, 1)
    db.chmod(0o444)
    ro_dir.chmod(0o555)
    before = snapshot(ro_dir)
    if os.geteuid() != 0 and os.access(db, os.W_OK):
        pytest.skip("cannot make a file we cannot write")
    r = seqorch(ro_dir, "report", "--latest", "--db", db,
                preexec_fn=as_reader())
    assert r.returncode == 3
    assert f"seqorch: database: schema version 1 is older than this " \
        f"seqorch ({latest}) and is not migrated by a command that only " \
        f"reads; `seqorch run` migrates it (in \"{db}\")" in r.stderr, \
        r.stderr
    assert snapshot(ro_dir) == before


def test_older_writable_schema_is_migrated_once(tmp_path):
    """As before read-only opens: a file that may be written is brought
    up to date by the first command that opens it."""
    db = tmp_path / "results.db"
    latest = schema_at(db, 1)
    r = seqorch(tmp_path, "windows")
    assert r.returncode == 0, r.stderr
    assert "no measurement windows" in r.stdout
    assert query(db, "PRAGMA user_version") == [(latest,)]


def test_newer_schema_is_refused_and_left_alone(tmp_path):
    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 9999")
    con.close()
    before = snapshot(tmp_path)
    for args in (["report", "--latest"], ["windows"], ["export", "--run",
                                                          "1"]):
        r = seqorch(tmp_path, *args)
        assert r.returncode == 3
        assert "database: schema version 9999 is newer than this seqorch " \
            "(" in r.stderr and "upgrade seqorch" in r.stderr, r.stderr
        assert snapshot(tmp_path) == before


def schema_of(db):
    """Everything the schema is made of, in a form two files can be
    compared by: each object's SQL with its spacing normalized, every
    table's and view's columns, every index's columns, and the version."""
    con = sqlite3.connect(db)
    try:
        objects = sorted(
            (t, n, tbl, " ".join((sql or "").split()))
            for t, n, tbl, sql in con.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master"))
        columns = {}
        indexes = {}
        for t, n, _, _ in objects:
            if t in ("table", "view"):
                columns[n] = con.execute(
                    f"SELECT * FROM pragma_table_info('{n}')").fetchall()
            if t == "table":
                for idx in con.execute(
                        f"SELECT name, \"unique\", origin, partial FROM "
                        f"pragma_index_list('{n}') ORDER BY name"):
                    indexes[n, idx[0]] = (idx, con.execute(
                        f"SELECT * FROM pragma_index_xinfo('{idx[0]}')")
                        .fetchall())
        version = con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()
    return {"objects": objects, "columns": columns, "indexes": indexes,
            "version": version}


def migrated(tmp_path, name, version):
    """A database at schema version (0: an empty file) that seqorch then
    migrated to its latest schema, as `seqorch run` does (gc, a writer:
    readers leave a file without a schema as it is)."""
    d = tmp_path / name
    d.mkdir()
    db = d / "results.db"
    if version:
        schema_at(db, version)
    else:
        sqlite3.connect(db).close()
    r = seqorch(d, "gc")
    assert r.returncode == 0, r.stderr
    return schema_of(db)


LATEST = max(int(v) for v in re.findall(
    r"^-- version: (\d+)$", (ROOT / "schema.sql").read_text(), flags=re.M))


@pytest.mark.parametrize("version", range(1, LATEST))
def test_migrated_schema_is_the_fresh_one(tmp_path, version):
    """A file made by any earlier seqorch ends with the schema a new file
    gets: same tables, columns, indexes and views, same SQL."""
    fresh = migrated(tmp_path, "fresh", 0)
    assert fresh["version"] == LATEST
    assert fresh["objects"] and fresh["indexes"]
    old = migrated(tmp_path, "old", version)
    for part in ("objects", "columns", "indexes", "version"):
        assert old[part] == fresh[part], f"{part} after migrating from " \
            f"version {version}"
