"""Bundles crafted by a hostile collaborator (issue 20): a key the importer
trusts with --pubkey, rows.json edited, the manifest re-hashed and
re-signed.  The signature then holds, so what stops each of these is
verify's and import's own checks (docs/provenance.md, "What import
trusts"): only the manifest's runs' own rows, of the tables, columns and
types import knows; artifact names that are SHA-256s; every sample
recomputed with steps bounded; an imported run never resumed here."""
import copy
import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import ROOT, execute, query, seqorch, write_hosts


def openssl(*args):
    return subprocess.run(["openssl", *map(str, args)], check=True,
                          capture_output=True)


@pytest.fixture(scope="module")
def origin(tmp_path_factory, workdir):
    """One measured run, its signed bundle directory and the keys."""
    d = tmp_path_factory.mktemp("origin")
    write_hosts(d / "hosts.toml", workdir)
    openssl("genpkey", "-algorithm", "ed25519", "-out", d / "key.pem")
    openssl("pkey", "-in", d / "key.pem", "-pubout", "-out", d / "key.pub")
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local", "--steps",
                "300", "--samples", "2", "--variants", "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr
    r = seqorch(d, "export", "--run", 1, "--bundle", "bundle", "--sign",
                "key.pem")
    assert r.returncode == 0, r.stderr
    return d


def resign(root, key):
    """Re-list every file in the manifest with its hash, and re-sign it,
    as the holder of key can."""
    man = json.loads((root / "manifest.json").read_text())
    man["files"] = []
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_file() and not rel.startswith("manifest."):
            data = p.read_bytes()
            man["files"].append({"path": rel, "size": len(data),
                                 "sha256": hashlib.sha256(data).hexdigest()})
    (root / "manifest.json").write_text(json.dumps(man, indent=1))
    sig = openssl("pkeyutl", "-sign", "-rawin", "-inkey", key, "-in",
                  root / "manifest.json").stdout
    (root / "manifest.sig").write_text(sig.hex() + "\n")


def craft(origin, dest, edit=None, manifest=None):
    """A copy of the origin's bundle with rows.json (and the manifest)
    edited, re-hashed and re-signed with the origin's key."""
    shutil.copytree(origin / "bundle", dest)
    rows = json.loads((dest / "rows.json").read_text())
    if edit is not None:
        edit(rows["tables"])
    (dest / "rows.json").write_text(json.dumps(rows))
    if manifest is not None:
        man = json.loads((dest / "manifest.json").read_text())
        manifest(man)
        (dest / "manifest.json").write_text(json.dumps(man))
    resign(dest, origin / "key.pem")
    return dest


def cell(t, row, name):
    return t["rows"][row][t["columns"].index(name)]


def setcell(t, row, name, value):
    t["rows"][row][t["columns"].index(name)] = value


def importer(origin, tmp_path):
    """The importer's own database: the origin's, with its run 1 and its
    artifact store."""
    shutil.copy(origin / "results.db", tmp_path / "mine.db")
    shutil.copytree(origin / "artifacts", tmp_path / "artifacts")
    return tmp_path / "mine.db"


def do_import(origin, tmp_path, bundle, db="mine.db"):
    return seqorch(tmp_path, "import", bundle, "--pubkey",
                   origin / "key.pub", "--db", db, timeout=120)


def dump(db, run=1):
    """Everything this database holds about run, and its own tables."""
    out = {}
    for t in ("runs", "samples", "builds", "windows", "events", "refs",
              "leases", "imports", "hosts", "artifacts"):
        cols = [c[1] for c in query(db, f"pragma table_info({t})")]
        where = "id = ?" if t == "runs" else \
            "run_id = ?" if "run_id" in cols else "? > 0"
        out[t] = query(db, f"select * from {t} where {where} order by 1",
                       run)
    return out


def test_the_untouched_bundle_imports_cleanly(origin, tmp_path):
    """The baseline the cases below differ from: a re-signed, unedited
    bundle adds exactly its run and its imports row."""
    b = craft(origin, tmp_path / "b")
    db = importer(origin, tmp_path)
    before = dump(db)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 0, r.stderr
    assert "as run 2" in r.stdout
    assert dump(db) == before
    assert query(db, "select run_id, origin_run_id from imports") == \
        [(2, 1)]
    assert query(db, "select count(*) from samples where run_id = 2") == \
        [(4,)]


# --- 1: gc, artifacts and export never leave the store ----------------

def test_an_artifact_name_that_is_a_path_is_refused(origin, tmp_path):
    def edit(t):
        setcell(t["artifacts"], 0, "sha256", "../mine.db")
    b = craft(origin, tmp_path / "b", edit)
    db = importer(origin, tmp_path)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1, r.stdout
    assert 'table "artifacts", row 1, column "sha256": expected a sha256' \
        in r.stderr, r.stderr
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1 and 'column "sha256"' in r.stderr
    assert query(db, "select count(*) from artifacts where sha256 "
                 "like '%/%'") == [(0,)]


def test_gc_artifacts_and_export_leave_a_bad_name_alone(origin, tmp_path):
    """A database that holds such a name already (imported by an older
    seqorch): gc drops the row and unlinks nothing outside the store;
    artifacts and export name the row instead of reading the path."""
    db = importer(origin, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    con = sqlite3.connect(db)
    con.execute("insert into artifacts values ('../victim', 8, 'x')")
    con.execute("insert into artifacts values ('../mine.db', 8, 'x')")
    con.commit()
    con.close()
    r = seqorch(tmp_path, "gc", "--db", "mine.db")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "keep me\n"
    assert query(db, "select count(*) from runs") == [(1,)]
    assert "not a sha256: no file removed" in r.stdout
    assert query(db, "select count(*) from artifacts where sha256 "
                 "like '../%'") == [(0,)]
    # Named by a run: artifacts and export refuse to turn it into a path.
    con = sqlite3.connect(db)
    con.execute("insert into artifacts values ('../victim', 8, 'x')")
    con.execute("insert into artifact_refs values (1, 'local', 1, 'raw', "
                "'x', '../victim')")
    con.commit()
    con.close()
    r = seqorch(tmp_path, "artifacts", "--run", 1, "--db", "mine.db",
                "--verify")
    assert r.returncode == 1
    assert 'artifact "../victim", which is not a sha256' in r.stderr
    r = seqorch(tmp_path, "export", "--run", 1, "--db", "mine.db",
                "--bundle", "out.tar", "--sign", origin / "key.pem")
    assert r.returncode != 0
    assert '"../victim" is not a sha256' in r.stderr, r.stderr
    assert victim.read_text() == "keep me\n"


# --- 2: only the run's own rows, of known tables and types --------------

def fake_samples(t):
    """Five copies of sample 1, 1000x faster, given to run "1"."""
    s = t["samples"]
    for i in range(5):
        row = copy.deepcopy(s["rows"][0])
        row[s["columns"].index("id")] = 900 + i
        row[s["columns"].index("run_id")] = "1"
        row[s["columns"].index("build_id")] = "1"
        row[s["columns"].index("sample_index")] = 100 + i
        row[s["columns"].index("ns")] = 100
        s["rows"].append(row)


def far_lease(t):
    t["leases"] = {"columns": ["name", "holder", "holder_host",
                               "holder_pid", "run_id", "study",
                               "acquired_at", "heartbeat_at",
                               "heartbeat_unix"],
                   "rows": [["measure", "evil pid 1", "evil", 1, 1, "sha3",
                             "2026-01-01T00:00:00Z", "2999-01-01T00:00:00Z",
                             32472144000.0]]}


def relabel(t):
    t["imports"] = {"columns": ["run_id", "origin_run_id",
                                "origin_coordinator", "origin_db",
                                "key_fingerprint", "manifest_sha256",
                                "imported_at"],
                    "rows": [[1, 1, "someone else", None, None, "x" * 64,
                              "2026-01-01T00:00:00Z"]]}


def host_facts(t):
    t["hosts"] = {"columns": ["id", "name", "updated_at"],
                  "rows": [[1, "local", "2026-01-01T00:00:00Z"]]}


def extra_run(t):
    r = t["runs"]
    row = copy.deepcopy(r["rows"][0])
    row[r["columns"].index("id")] = 7
    r["rows"].append(row)


@pytest.mark.parametrize("edit, message", [
    (fake_samples, 'table "samples", row 5, column "run_id": expected an '
     'integer, not a string'),
    (far_lease, 'table "leases" is never imported'),
    (relabel, 'table "imports" is never imported'),
    (host_facts, 'table "hosts" is never imported'),
    (extra_run, 'table "runs", row 2 belongs to none of the manifest\'s '
     'runs'),
], ids=["string-fk", "leases", "imports", "hosts", "extra-run"])
def test_rows_beyond_the_run_are_refused(origin, tmp_path, edit, message):
    b = craft(origin, tmp_path / "b", edit)
    db = importer(origin, tmp_path)
    before = dump(db)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert message in r.stderr, r.stderr
    assert dump(db) == before
    assert query(db, "select count(*) from runs") == [(1,)]


def test_a_refs_row_is_never_taken(origin, tmp_path):
    """The bundle's reference digests are not the importer's: a wrong one
    would fail later correct runs (or pass wrong ones).  The importer keeps
    its own refs; a later run here computes its own."""
    def edit(t):
        refs = t["refs"]
        row = copy.deepcopy(refs["rows"][0])
        row[refs["columns"].index("steps")] = 301
        row[refs["columns"].index("digest")] = "00" * 32
        refs["rows"].append(row)
        setcell(refs, 0, "digest", "11" * 32)
    b = craft(origin, tmp_path / "b", edit)
    db = importer(origin, tmp_path)
    before = query(db, "select * from refs order by 1, 2, 3")
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 0, r.stderr
    assert query(db, "select * from refs order by 1, 2, 3") == before
    fresh = tmp_path / "fresh.db"
    r = do_import(origin, tmp_path, b, db=fresh)
    assert r.returncode == 0, r.stderr
    assert query(fresh, "select count(*) from refs") == [(0,)]


def test_a_string_where_a_number_belongs_is_named(origin, tmp_path):
    def edit(t):
        setcell(t["builds"], 0, "run_id", 1.5)
    b = craft(origin, tmp_path / "b", edit)
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert 'table "builds", row 1, column "run_id": expected an integer, ' \
        'not a number' in r.stderr, r.stderr


# --- 3: every digest recomputed, every value's type checked -------------

def test_edited_digests_with_a_string_valid_fail(origin, tmp_path):
    def edit(t):
        s = t["samples"]
        for i in range(len(s["rows"])):
            setcell(s, i, "digest", "ab" * 32)
            setcell(s, i, "valid", "1")
    b = craft(origin, tmp_path / "b", edit)
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1, r.stdout
    assert 'table "samples", row 1, column "valid": expected an integer, ' \
        'not a string' in r.stderr, r.stderr
    db = importer(origin, tmp_path)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1 and "refused" in r.stderr
    assert query(db, "select count(*) from samples") == [(4,)]


def test_a_valid_flag_other_than_0_or_1_fails(origin, tmp_path):
    def edit(t):
        setcell(t["samples"], 0, "valid", 2)
    b = craft(origin, tmp_path / "b", edit)
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert 'column "valid": expected 0 or 1, not 2' in r.stderr, r.stderr


def test_a_sample_of_another_seed_must_be_invalid(origin, tmp_path):
    def edit(t):
        setcell(t["samples"], 0, "seed", "11" * 32)
    b = craft(origin, tmp_path / "b", edit)
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert "is marked valid but its seed 1111111111111111... is not its " \
        "run's" in r.stderr, r.stderr


# --- 4: one import per run of the manifest ------------------------------

def second_run(t):
    """Run 2 beside run 1: every row of run 1 again, under other ids."""
    ids = {"id": 1000, "build_id": 1000, "sample_id": 1000,
           "window_id": 1000}
    for name, tab in t.items():
        if name in ("artifacts", "refs"):
            continue
        cols = tab["columns"]
        for row in list(tab["rows"]):
            row = copy.deepcopy(row)
            for c, off in ids.items():
                if c in cols and row[cols.index(c)] is not None:
                    row[cols.index(c)] += off
            if name == "runs":
                row[cols.index("id")] = 2
            if "run_id" in cols:
                row[cols.index("run_id")] = 2
            tab["rows"].append(row)


def test_two_runs_import_once_each(origin, tmp_path):
    b = craft(origin, tmp_path / "b", second_run,
              lambda man: man.update(runs=[1, 2]))
    fresh = tmp_path / "fresh.db"
    r = do_import(origin, tmp_path, b, db=fresh)
    assert r.returncode == 0, r.stderr
    assert "imported run 1 of" in r.stdout and "imported run 2 of" in \
        r.stdout
    assert query(fresh, "select id from runs order by id") == [(1,), (2,)]
    assert query(fresh, "select run_id, origin_run_id from imports order "
                 "by 1") == [(1, 1), (2, 2)]
    assert query(fresh, "select run_id, count(*) from samples group by 1") \
        == [(1, 4), (2, 4)]
    assert query(fresh, "select count(*) from builds") == [(2,)]
    # Again: nothing changes.
    r = do_import(origin, tmp_path, b, db=fresh)
    assert r.returncode == 0 and r.stderr.count("already here") == 2
    assert query(fresh, "select count(*) from samples") == [(8,)]


def test_a_run_listed_twice_is_refused(origin, tmp_path):
    b = craft(origin, tmp_path / "b", None,
              lambda man: man.update(runs=[1, 1]))
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert "manifest.json: run 1 is listed twice" in r.stderr, r.stderr


def test_a_manifest_that_misnames_its_key_or_lists_a_file_twice(origin,
                                                                tmp_path):
    """Signed, and still refused: a manifest naming a key other than the
    one whose signature it bears, or listing a file twice."""
    b = craft(origin, tmp_path / "b", None,
              lambda man: man.update(key_fingerprint="0" * 64))
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert f"manifest.json: it names key {'0' * 64}, but key " \
        f'"{origin / "key.pub"}"' in r.stderr, r.stderr
    b = craft(origin, tmp_path / "c")
    man = json.loads((b / "manifest.json").read_text())
    man["files"].append(man["files"][0])
    (b / "manifest.json").write_text(json.dumps(man))
    sig = openssl("pkeyutl", "-sign", "-rawin", "-inkey",
                  origin / "key.pem", "-in", b / "manifest.json").stdout
    (b / "manifest.sig").write_text(sig.hex() + "\n")
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert f'manifest.json: "{man["files"][0]["path"]}" is listed twice' \
        in r.stderr, r.stderr


# --- 5: an imported run is never resumed here ---------------------------

def test_resume_of_an_imported_run_is_refused(origin, tmp_path):
    b = craft(origin, tmp_path / "b")
    db = importer(origin, tmp_path)
    assert do_import(origin, tmp_path, b).returncode == 0
    shutil.copy(origin / "hosts.toml", tmp_path / "hosts.toml")
    con = sqlite3.connect(db)
    con.execute("delete from samples where run_id = 2 and sample_index = 1")
    con.commit()
    con.close()
    before = dump(db, 2)
    r = seqorch(tmp_path, "run", "--resume", 2, "--db", "mine.db")
    assert r.returncode == 2, r.stderr
    assert 'cannot resume: run 2 was imported (run 1 of "' in r.stderr
    assert dump(db, 2) == before
    assert query(db, "select count(*) from samples where run_id = 2") == \
        [(2,)]


# --- 6: steps bounded, long checks show progress ------------------------

def steps(n, sample_n=None):
    def edit(t):
        setcell(t["runs"], 0, "steps", n)
        for i in range(len(t["samples"]["rows"])):
            setcell(t["samples"], i, "steps", sample_n or n)
    return edit


def test_absurd_steps_are_refused_at_once(origin, tmp_path):
    b = craft(origin, tmp_path / "b", steps(10 ** 13))
    t0 = time.monotonic()
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub",
                timeout=60)
    assert r.returncode == 1
    assert "run 1: steps 10000000000000 is outside 1..5000000000 " \
        '(study "sha3")' in r.stderr, r.stderr
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1 and "outside 1..5000000000" in r.stderr
    # A sample's steps are its run's.
    b = craft(origin, tmp_path / "c", steps(300, 10 ** 13))
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub",
                timeout=60)
    assert r.returncode == 1
    assert "is sha3 of 10000000000000 steps, its run 1 sha3 of 300" in \
        r.stderr, r.stderr
    assert time.monotonic() - t0 < 30


def test_steps_are_bounded_by_the_study(origin, tmp_path):
    """6e9 sha3 steps are under the cap of every study (1e11) but over
    sha3's own bound (an hour of its reference chain): refused at once,
    by verify and import as by `run --steps`, where a study of a faster
    reference takes them."""
    b = craft(origin, tmp_path / "b", steps(6 * 10 ** 9))
    t0 = time.monotonic()
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub",
                timeout=60)
    assert r.returncode == 1
    assert "steps 6000000000 is outside 1..5000000000" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 30
    r = seqorch(tmp_path, "run", "--study", "sha3", "--steps", "6000000000")
    assert r.returncode == 2
    assert '--steps 6000000000 is more than study "sha3" takes (at most ' \
        "5000000000" in r.stderr, r.stderr
    r = seqorch(tmp_path, "run", "--study", "mul", "--steps", "6000000000",
                "--config", tmp_path / "none.toml")
    assert r.returncode == 2 and "more than study" not in r.stderr
    assert "none.toml" in r.stderr, r.stderr
    r = seqorch(tmp_path, "studies")
    assert "(at most 5000000000)" in r.stdout and \
        "(at most 100000)" in r.stdout


def test_a_long_check_shows_its_progress(origin, tmp_path):
    """8M sha3 steps: seconds of reference chain, with progress on stderr
    (the digests are of 300 steps, so it fails at the end)."""
    b = craft(origin, tmp_path / "b", steps(8 * 10 ** 6))
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert "recomputing sha3: 8000000 hashes from" in r.stderr
    assert " of 8000000 hashes), about " in r.stderr, r.stderr
    assert "is marked valid but its digest" in r.stderr


def test_an_infinite_number_is_refused_not_cast(origin, tmp_path):
    """1e999 parses as infinity: it is no integer (casting it to one was
    undefined behaviour, found by fuzz_rows: seeds-rows/inf-id.json)."""
    def edit(t):
        setcell(t["samples"], 0, "ns", "INF-HERE")
    b = craft(origin, tmp_path / "b", edit)
    rows = b / "rows.json"
    rows.write_text(rows.read_text().replace('"INF-HERE"', "1e999"))
    resign(b, origin / "key.pem")
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1
    assert 'table "samples", row 1, column "ns": expected an integer, ' \
        'not a number' in r.stderr, r.stderr


def test_a_later_run_never_reuses_an_imported_build(origin, tmp_path):
    """An imported build of the same binary on a host of the same name is
    another coordinator's: a later run here checks its own disassembly
    and names its own artifacts, never the bundle's rows (which could say
    "ok" for anything, or name any file as the binary)."""
    def edit(t):
        d = t["disasm"]
        for i in range(len(d["rows"])):
            setcell(d, i, "excerpt", "FORGED by the bundle")
        refs = t["artifact_refs"]
        for i in range(len(refs["rows"])):
            if cell(refs, i, "kind") == "binary":
                setcell(refs, i, "sha256", cell(refs, 0, "sha256"))
    b = craft(origin, tmp_path / "b", edit)
    db = importer(origin, tmp_path)
    assert do_import(origin, tmp_path, b).returncode == 0
    shutil.copy(origin / "hosts.toml", tmp_path / "hosts.toml")
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "300", "--samples", "1", "--variants",
                "c-fused,openssl-evp", "--db", "mine.db")
    assert r.returncode == 0, r.stderr
    (build, binary), = query(db, "select id, binary_sha256 from builds "
                             "where run_id = 3")
    assert query(db, "select count(*) from disasm where build_id = ?",
                 build) != [(0,)]
    assert query(db, "select count(*) from disasm where build_id = ? and "
                 "excerpt like '%FORGED%'", build) == [(0,)]
    assert query(db, "select sha256 from artifact_refs where build_id = ? "
                 "and kind = 'binary'", build) == [(binary,)]


@pytest.fixture(scope="module")
def msg_origin(tmp_path_factory, workdir):
    """A run of 576-byte messages (`run --msg-len`, seed 003's dimension)
    and its signed bundle."""
    d = tmp_path_factory.mktemp("msgorigin")
    write_hosts(d / "hosts.toml", workdir)
    openssl("genpkey", "-algorithm", "ed25519", "-out", d / "key.pem")
    openssl("pkey", "-in", d / "key.pem", "-pubout", "-out", d / "key.pub")
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local", "--steps",
                "300", "--samples", "2", "--variants", "c-fused",
                "--msg-len", "576")
    assert r.returncode == 0, r.stderr
    r = seqorch(d, "export", "--run", 1, "--bundle", "bundle", "--sign",
                "key.pem")
    assert r.returncode == 0, r.stderr
    return d


def test_a_message_length_run_verifies_against_its_own_chain(msg_origin,
                                                             tmp_path):
    """Its samples are checked against the 576-byte chain (before, against
    the study's own one, so a clean bundle failed), and imported; the
    same bundle saying 64-byte messages, run and samples alike, is
    refused, and so is one sample of another length than its run."""
    o = msg_origin
    assert query(o / "results.db", "select distinct msg_len from "
                 "samples") == [(576,)]
    r = seqorch(tmp_path, "verify", o / "bundle", "--pubkey", o / "key.pub")
    assert r.returncode == 0, r.stderr
    assert "2 sample digests recomputed, all agree" in r.stdout
    assert "of 576-byte messages from" in r.stderr
    r = do_import(o, tmp_path, o / "bundle", db="new.db")
    assert r.returncode == 0, r.stderr
    assert query(tmp_path / "new.db", "select msg_len from runs") == \
        [(576,)]

    def shorter(t):
        setcell(t["runs"], 0, "msg_len", 64)
        for i in range(len(t["samples"]["rows"])):
            setcell(t["samples"], i, "msg_len", 64)
    b = craft(o, tmp_path / "b", shorter)
    r = seqorch(tmp_path, "verify", b, "--pubkey", o / "key.pub")
    assert r.returncode == 1
    assert "is marked valid but its digest" in r.stderr, r.stderr
    assert "of 64-byte messages from" in r.stderr

    def one(t):
        setcell(t["samples"], 1, "msg_len", 64)
    b = craft(o, tmp_path / "c", one)
    r = seqorch(tmp_path, "verify", b, "--pubkey", o / "key.pub")
    assert r.returncode == 1
    sid = cell(json.loads((b / "rows.json").read_text())["tables"]
               ["samples"], 1, "id")
    assert f"sample {sid} has msg_len 64, its run 1 has 576" in r.stderr


# --- 7: refused whole: one transaction, a clean refusal -----------------

# A constraint of the importer's database alone, which verify cannot know
# of: it refuses a run's samples once a run of the bundle is in.
REFUSE_SECOND = ("CREATE TRIGGER refuse_second BEFORE INSERT ON samples "
                 "WHEN (SELECT count(*) FROM imports) > 0 BEGIN SELECT "
                 "RAISE(ABORT, 'no second run here'); END")


def test_a_bad_second_run_leaves_nothing(origin, tmp_path):
    """Run 1 of the bundle is fine, run 2's rows are refused by the
    database: nothing of either is written, artifacts rows included (the
    files stay, unrecorded, for gc), exit 1 on one line."""
    b = craft(origin, tmp_path / "b", second_run,
              lambda man: man.update(runs=[1, 2]))
    (tmp_path / "f").mkdir()
    fresh = tmp_path / "f" / "fresh.db"
    sqlite3.connect(fresh).close()
    assert seqorch(tmp_path, "gc", "--db", fresh).returncode == 0
    db = importer(origin, tmp_path)
    for d in (fresh, db):
        execute(d, (REFUSE_SECOND,))
    r = do_import(origin, tmp_path, b, db=fresh)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "imported" not in r.stdout
    last = r.stderr.splitlines()[-1]
    assert last == ('seqorch: import: refused: rows.json: table "samples", '
                    'row 5: this database refuses it: no second run here'), \
        r.stderr
    assert r.stderr.endswith(last + "\n") and "\t" not in r.stderr
    assert query(fresh, "select (select count(*) from runs) + (select "
                 "count(*) from samples) + (select count(*) from imports) "
                 "+ (select count(*) from artifacts)") == [(0,)]
    before = dump(db)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1
    assert dump(db) == before



# --- 8: verify refuses what import's database would ---------------------

# This database's own tables: a bundle never writes them (section 2).
NOT_IMPORTED = {"hosts", "leases", "lease_events", "imports", "refs",
                "artifacts", "reproductions", "reproduction_runs",
                "reproduction_hosts", "db_identity"}


def schema_checks():
    """Every CHECK of schema.sql as the last migration leaves it: (table,
    column, a value it refuses).  A CHECK of another form fails here, so
    that a new one is taught to this test and to itables alike."""
    text = re.sub(r"--[^\n]*", "", (ROOT / "schema.sql").read_text())
    checks = {}
    for st in text.split(";"):
        st = " ".join(st.split())
        if m := re.match(r"CREATE TABLE (\w+) \((.*)\)$", st):
            table, body = m.groups()
            checks[table] = {}
        elif m := re.match(r"ALTER TABLE (\w+) ADD COLUMN \w+ (.*)$", st):
            table, body = m.groups()
        elif m := re.match(r"ALTER TABLE (\w+) RENAME TO (\w+)$", st):
            checks[m[2]] = checks.pop(m[1])
            continue
        elif m := re.match(r"DROP TABLE (\w+)$", st):
            checks.pop(m[1])
            continue
        else:
            assert "CHECK" not in st, st
            continue
        for expr in re.findall(r"CHECK \(((?:[^()]|\([^()]*\))*)\)", body):
            if m := re.fullmatch(r"(\w+) IN \((.*)\)", expr):
                values = [v.strip() for v in m[2].split(",")]
                bad = "bogus" if values[0].startswith("'") else \
                    max(map(int, values)) + 1
            elif m := re.fullmatch(r"(\w+) > (\d+)", expr):
                bad = int(m[2])
            else:
                raise AssertionError(f"a CHECK this test cannot read: {expr}")
            checks[table][m[1]] = bad
    return [(t, c, bad) for t, cols in sorted(checks.items())
            for c, bad in sorted(cols.items()) if t not in NOT_IMPORTED]


def refused_both(origin, tmp_path, b, message):
    """verify and import both refuse b, exit 1, naming it; the importer's
    database unchanged."""
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert message in r.stderr, r.stderr
    db = importer(origin, tmp_path)
    before = dump(db)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "seqorch: import: refused, the bundle does not verify: " + \
        message in r.stderr, r.stderr
    assert dump(db) == before
    assert query(db, "select count(*) from runs") == [(1,)]


@pytest.mark.parametrize("table, column, bad", schema_checks(),
                         ids=lambda v: str(v))
def test_every_schema_check_is_verified(origin, tmp_path, table, column,
                                        bad):
    """Each value a CHECK of schema.sql refuses, on an imported column, is
    refused by verify (which has no database) and so by import, as
    itables mirrors it: not by SQLite halfway through an import."""
    def edit(t):
        assert t[table]["rows"], f"no row of {table} in the bundle to try"
        setcell(t[table], 0, column, bad)
    b = craft(origin, tmp_path / "b", edit)
    shown = f'"{bad}"' if isinstance(bad, str) else str(bad)
    refused_both(origin, tmp_path, b, f'rows.json: table "{table}", row 1, '
                 f'column "{column}": expected ')
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    assert r.stderr.rstrip().endswith(f", not {shown}"), r.stderr


def test_an_enumeration_names_its_values(origin, tmp_path):
    b = craft(origin, tmp_path / "b",
              lambda t: setcell(t["runs"], 0, "status", "bogus"))
    refused_both(origin, tmp_path, b, 'rows.json: table "runs", row 1, '
                 'column "status": expected "running", "ok", "partial", '
                 '"failed" or "interrupted", not "bogus"')


@pytest.mark.parametrize("ns", [-1, 0])
def test_a_sample_of_no_time_is_refused(origin, tmp_path, ns):
    """A timing no agent can report (the protocol's ns is 1 at least):
    before, it verified and imported, and the report dropped it."""
    b = craft(origin, tmp_path / "b",
              lambda t: setcell(t["samples"], 1, "ns", ns))
    refused_both(origin, tmp_path, b, 'rows.json: table "samples", row 2, '
                 f'column "ns": expected an integer over 0, not {ns}')


def test_a_bad_second_run_is_refused_by_verify(origin, tmp_path):
    """Run 2 of two with a status no database holds: verify refuses the
    bundle, and import writes nothing of run 1 either."""
    def edit(t):
        second_run(t)
        setcell(t["runs"], 1, "status", "bogus")
    b = craft(origin, tmp_path / "b", edit,
              lambda man: man.update(runs=[1, 2]))
    refused_both(origin, tmp_path, b, 'rows.json: table "runs", row 2, '
                 'column "status": expected ')


def test_a_newer_format_version_is_refused(origin, tmp_path):
    b = craft(origin, tmp_path / "b", None,
              lambda man: man.update(version=2))
    refused_both(origin, tmp_path, b, "manifest.json: format version 2 is "
                 "newer than this seqorch reads (1)")


def schema_keys():
    """Every UNIQUE key of schema.sql as the last migration leaves it
    (UNIQUE and composite PRIMARY KEY; an INTEGER PRIMARY KEY id is the
    rowid, renumbered on import): (table, its columns), for the tables
    import writes."""
    con = sqlite3.connect(":memory:")
    con.executescript((ROOT / "schema.sql").read_text())
    keys = []
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE "
                                "type = 'table' ORDER BY name"):
        for index in con.execute(f"PRAGMA index_list({table})"):
            if index[2] and table not in NOT_IMPORTED:
                keys.append((table, tuple(
                    c[2] for c in con.execute(
                        f"PRAGMA index_info({index[1]!r})"))))
    con.close()
    return keys


# A row of a table the bundle may have none of, from the run's rows.
SEED_ROW = {"sample_metrics": lambda t: [cell(t["samples"], 0, "id"),
                                         "phase_other", 1.0]}


@pytest.mark.parametrize("table, key", schema_keys(), ids=lambda v: str(v))
def test_every_schema_key_is_verified(origin, tmp_path, table, key):
    """A row whose UNIQUE key of schema.sql an earlier row of its table
    has (a sample cell's index twice, a file named twice by a build) is
    refused by verify, as import's database would refuse it: before,
    verify said ok and import refused the whole bundle."""
    def edit(t):
        tab = t[table]
        if not tab["rows"]:
            assert table in SEED_ROW, f"no row of {table} in the bundle"
            tab["rows"].append(SEED_ROW[table](t))
        row = copy.deepcopy(tab["rows"][0])
        if "id" in tab["columns"]:
            row[tab["columns"].index("id")] = max(
                cell(tab, i, "id") for i in range(len(tab["rows"]))) + 1
        tab["rows"].append(row)
        nonlocal n
        n = len(tab["rows"])
    n = 0
    b = craft(origin, tmp_path / "b", edit)
    refused_both(origin, tmp_path, b, f'rows.json: table "{table}", row '
                 f'{n}: key (')
    r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
    named = re.search(r"key \(([\w ]+)\) = \((.*)\) is there twice$",
                      r.stderr.rstrip())
    assert named and set(named[1].split()) == set(key), r.stderr


def schema_not_null():
    """The NOT NULL columns of schema.sql, as the last migration leaves
    them, of the tables import writes: those without a DEFAULT, which
    every row must give, and those with one, which the database fills
    in."""
    con = sqlite3.connect(":memory:")
    con.executescript((ROOT / "schema.sql").read_text())
    required, defaulted = [], []
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE "
                                "type = 'table' ORDER BY name"):
        if table in NOT_IMPORTED:
            continue
        for _, column, _, notnull, default, _ in con.execute(
                f"PRAGMA table_info({table})"):
            if notnull:
                (required if default is None else defaulted).append(
                    (table, column))
    con.close()
    return required, defaulted


def drop_columns(columns):
    def edit(t):
        for table, column in columns:
            tab = t[table]
            i = tab["columns"].index(column)
            del tab["columns"][i]
            for row in tab["rows"]:
                del row[i]
    return edit


def test_a_column_the_database_needs_is_never_left_out(origin, tmp_path):
    """A bundle without a column schema.sql has NOT NULL and no DEFAULT
    for (runs.command, builds.cflags, ...) is refused by verify, naming
    it, as import's database would refuse its rows; before, verify said
    ok and import refused the bundle ("NOT NULL constraint failed").  The
    columns with a DEFAULT may be left out, as a bundle of a seqorch
    before them does: the database fills them in."""
    required, defaulted = schema_not_null()
    assert required and defaulted
    for table, column in required:
        b = craft(origin, tmp_path / f"{table}.{column}",
                  drop_columns([(table, column)]))
        r = seqorch(tmp_path, "verify", b, "--pubkey", origin / "key.pub")
        assert r.returncode == 1, (table, column, r.stdout)
        assert f'rows.json: table "{table}" has no column "{column}"' in \
            r.stderr, (table, column, r.stderr)
        shutil.rmtree(b)
    b = craft(origin, tmp_path / "defaulted", drop_columns(defaulted))
    db = importer(origin, tmp_path)
    r = do_import(origin, tmp_path, b)
    assert r.returncode == 0, r.stderr
    assert query(db, "select count(*) from runs") == [(2,)]
