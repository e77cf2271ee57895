"""Signed result bundles (docs/provenance.md): `seqorch export --bundle`
with an Ed25519 key made by OpenSSL's own command line, `seqorch verify`
(signature, every file, every sample recomputed), `seqorch import` into a
fresh database whose report then equals the original's, and `seqorch
publish` against a local HTTPS collector with a test CA."""
import hashlib
import http.server
import json
import os
import re
import shutil
import sqlite3
import ssl
import subprocess
import tarfile
import threading

import pytest

from bench_report import VARIANTS, fill, peak
from conftest import SEQORCH, query, seqorch
from lib_provenance import keys, openssl, tls  # noqa: F401 (fixtures)


def fingerprint(pub):
    der = openssl("pkey", "-pubin", "-in", pub, "-outform", "DER").stdout
    return hashlib.sha256(der[-32:]).hexdigest()


@pytest.fixture
def measured(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "300", "--samples", "2", "--variants",
                "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr
    return scratch


def export(cwd, dest, key, run=1, db="results.db"):
    return seqorch(cwd, "export", "--run", run, "--db", db, "--bundle", dest,
                   "--sign", key)


def verify(cwd, bundle, pub):
    return seqorch(cwd, "verify", bundle, "--pubkey", pub)


def test_export_verify_tar_and_directory(measured, keys):
    for dest in ("b.tar", "bdir"):
        r = export(measured, dest, keys / "key.pem")
        assert r.returncode == 0, r.stderr
        r = verify(measured, dest, keys / "key.pub")
        assert r.returncode == 0, r.stderr
        assert "ok" in r.stdout and "4 sample digests recomputed" in r.stdout
        assert fingerprint(keys / "key.pub") in r.stdout
        r = verify(measured, dest, keys / "other.pub")
        assert r.returncode == 1
        assert "signature does not verify" in r.stderr
    # The tar holds what the directory holds, byte for byte.
    with tarfile.open(measured / "b.tar") as t:
        names = sorted(t.getnames())
        for n in names:
            assert t.extractfile(n).read() == (measured / "bdir" / n) \
                .read_bytes(), n
    assert "manifest.json" in names and "summary.json" in names
    assert any(n.startswith("artifacts/") for n in names)
    # The same run bundled again gives the same files but the signature.
    assert export(measured, "again.tar", keys / "key.pem").returncode == 0


def test_one_byte_anywhere_fails_and_is_named(measured, keys):
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    root = measured / "bdir"
    files = sorted(p.relative_to(root) for p in root.rglob("*")
                   if p.is_file())
    assert len(files) > 10
    for rel in files:
        copy = measured / "edited"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(root, copy)
        data = bytearray((copy / rel).read_bytes())
        if data:
            data[len(data) // 2] ^= 0x01
        else:
            data = bytearray(b"x")
        (copy / rel).write_bytes(bytes(data))
        r = verify(measured, copy, keys / "key.pub")
        assert r.returncode == 1, rel
        name = "manifest" if str(rel).startswith("manifest") else str(rel)
        assert name in r.stderr, (rel, r.stderr)
    # An extra file, and a missing one.
    copy = measured / "edited"
    (copy / "extra.txt").write_text("x")
    shutil.rmtree(copy)
    shutil.copytree(root, copy)
    (copy / "extra.txt").write_text("x")
    r = verify(measured, copy, keys / "key.pub")
    assert r.returncode == 1 and '"extra.txt" is not in the manifest' in \
        r.stderr
    # A byte of the tar archive.
    assert export(measured, "b.tar", keys / "key.pem").returncode == 0
    tar = bytearray((measured / "b.tar").read_bytes())
    tar[700] ^= 0x20
    (measured / "bad.tar").write_bytes(bytes(tar))
    r = verify(measured, "bad.tar", keys / "key.pub")
    assert r.returncode == 1, r.stdout


def test_a_resigned_lie_is_caught_by_recomputing(measured, keys):
    """Someone with the key rewrites a digest and re-signs: the hashes and
    the signature agree, the independent reference does not."""
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    root = measured / "bdir"
    rows = json.loads((root / "rows.json").read_text())
    s = rows["tables"]["samples"]
    d = s["columns"].index("digest")
    s["rows"][0][d] = "ab" * 32
    (root / "rows.json").write_text(json.dumps(rows))
    man = json.loads((root / "manifest.json").read_text())
    for f in man["files"]:
        if f["path"] == "rows.json":
            data = (root / "rows.json").read_bytes()
            f["sha256"] = hashlib.sha256(data).hexdigest()
            f["size"] = len(data)
    (root / "manifest.json").write_text(json.dumps(man))
    sig = openssl("pkeyutl", "-sign", "-rawin", "-inkey", keys / "key.pem",
                  "-in", root / "manifest.json").stdout
    (root / "manifest.sig").write_text(sig.hex() + "\n")
    r = verify(measured, root, keys / "key.pub")
    assert r.returncode == 1
    assert "is marked valid but its digest abababab" in r.stderr, r.stderr


def test_a_big_run_is_bundled_a_row_at_a_time(measured, keys):
    """export --bundle, verify and import of a run of 60,000 samples
    (bench_report's fill) each hold a bounded part of it: before, each held
    the run's rows.json as one cJSON tree, about 190 MB here (3.2 GB for 1M
    samples), and a .tar as one more copy; now each stays near 40 MB.  What is written is the
    database's rows, value for value, and imports back whole."""
    db = measured / "results.db"
    run = fill(db, 1, 60_000, VARIANTS, steps=300)
    tar, into = measured / "big.tar", measured / "into.db"
    for argv in (("export", "--run", run, "--bundle", tar, "--sign",
                  keys / "key.pem"),
                 ("verify", tar, "--pubkey", keys / "key.pub"),
                 ("import", tar, "--pubkey", keys / "key.pub", "--db", into)):
        _, mb, p = peak([SEQORCH, *argv], measured)
        assert p.returncode == 0, (argv[0], p.stderr)
        # ASan's shadow memory is not the program's.
        if "sanitize" not in os.environ.get("SEQORCH_TEST_CFLAGS", ""):
            assert mb < 80, (argv[0], mb)
    with tarfile.open(tar) as t:
        files = {n: t.extractfile(n).read() for n in t.getnames()}
    man = json.loads(files["manifest.json"])
    for f in man["files"]:
        data = files[f["path"]]
        assert (hashlib.sha256(data).hexdigest(), len(data)) == \
            (f["sha256"], f["size"]), f["path"]
    samples = json.loads(files["rows.json"])["tables"]["samples"]
    con = sqlite3.connect(db)
    cur = con.execute("SELECT * FROM samples WHERE run_id = ? ORDER BY "
                      "rowid", (run,))
    assert samples["columns"] == [d[0] for d in cur.description]
    assert samples["rows"] == [list(r) for r in cur]
    con.close()
    assert query(into, "SELECT count(*), count(DISTINCT digest), sum(ns) "
                 "FROM samples") == query(
        db, "SELECT count(*), count(DISTINCT digest), sum(ns) FROM samples "
        "WHERE run_id = ?", run) == [(60_000, 1, sum(r[samples[
            "columns"].index("ns")] for r in samples["rows"]))]


def gnu_tar(tar, *args):
    subprocess.run(["tar", "-cf", tar, *map(str, args)], check=True,
                   capture_output=True)


def test_a_directory_bundle_tarred_by_gnu_tar(measured, keys):
    """A user who tars the directory form (`tar -cf b.tar -C DIR .`) gets
    members named "./manifest.json", after "./" and "./artifacts/": verify
    and import take it as the directory.  Before, both refused it: entry
    "./" is not a plain file.  What the reader refused it still refuses:
    a name twice, a link, a name leaving the bundle."""
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    gnu_tar(measured / "b.tar", "-C", measured / "bdir", ".")
    listed = subprocess.run(["tar", "-tf", measured / "b.tar"], check=True,
                            capture_output=True, text=True).stdout.split()
    assert listed[0] == "./" and "./artifacts/" in listed
    assert "./manifest.json" in listed
    r = verify(measured, "b.tar", keys / "key.pub")
    assert r.returncode == 0, r.stderr
    assert "4 sample digests recomputed" in r.stdout
    r = seqorch(measured, "import", "b.tar", "--pubkey", keys / "key.pub",
                "--db", "fresh.db")
    assert r.returncode == 0, r.stderr
    assert "as run 1" in r.stdout
    # A copy's manifest appended (one of the same file would be a link).
    shutil.copytree(measured / "bdir", measured / "linked")
    shutil.copy(measured / "b.tar", measured / "twice.tar")
    subprocess.run(["tar", "-rf", measured / "twice.tar", "-C",
                    measured / "linked", "./manifest.json"], check=True)
    # A link GNU tar keeps as one.
    os.symlink("manifest.json", measured / "linked" / "summary.json.lnk")
    gnu_tar(measured / "linked.tar", "-C", measured / "linked", ".")
    # "./" before "..": the name still leaves the bundle.
    gnu_tar(measured / "up.tar", "-C", measured / "bdir",
            "--transform", "s,^\\./manifest.sig$,./../manifest.sig,", ".")
    assert "./../manifest.sig" in subprocess.run(
        ["tar", "-tf", measured / "up.tar"], check=True,
        capture_output=True, text=True).stdout.split()
    for tar, why in (("twice.tar", '"manifest.json" appears twice'),
                     ("linked.tar", 'entry "./summary.json.lnk" is not a '
                      "plain file with a relative path"),
                     ("up.tar", 'entry "./../manifest.sig" is not a plain '
                      "file with a relative path")):
        for cmd in ("verify", "import"):
            r = seqorch(measured, cmd, tar, "--pubkey", keys / "key.pub",
                        *(("--db", "other.db") if cmd == "import" else ()))
            assert r.returncode != 0, (tar, cmd)
            assert f'"{tar}": {why}' in r.stderr, (tar, cmd, r.stderr)
    assert not (measured / "other.db").exists()


def test_tar_member_names_past_100_bytes(measured, keys):
    """A member's name past ustar's 100 bytes: `--format=ustar` splits it
    into the header's prefix and name, and the whole is what is read (the
    bundle's rows.json moved under a deep directory is not its rows.json:
    before, the prefix was dropped, the member read as "rows.json" and the
    bundle verified); GNU tar's default writes a long-name entry before
    it, and --format=pax an extended header before every member, which
    names this one by its "path" record: neither is read, the long name is
    refused by its entry's name, the pax header by its key (its times
    alone read), as a bundle's own names fit."""
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    deep = measured / "bdir" / ("a" * 40) / ("b" * 95)
    deep.mkdir(parents=True)
    os.rename(measured / "bdir" / "rows.json", deep / "rows.json")
    tail = f"{'a' * 40}/{'b' * 95}/rows.json"
    for fmt in ("ustar", "gnu", "pax"):
        gnu_tar(measured / f"{fmt}.tar", f"--format={fmt}", "-C",
                measured / "bdir", ".")
    with tarfile.open(measured / "ustar.tar") as t:
        assert f"./{tail}" in t.getnames()
    for tar, why in (("ustar.tar", '"rows.json" is listed in the manifest but '
                      "missing"),
                     ("gnu.tar", 'entry "././@LongLink" is a GNU long name '
                      "(type 'L'), which a bundle never needs"),
                     ("pax.tar", 'is a pax extended header setting "path", '
                      "which would change the member after it")):
        for cmd in ("verify", "import"):
            r = seqorch(measured, cmd, tar, "--pubkey", keys / "key.pub",
                        *(("--db", "other.db") if cmd == "import" else ()))
            assert r.returncode == 1, (tar, cmd, r.stderr)
            assert why in r.stderr, (tar, cmd, r.stderr)
    assert not (measured / "other.db").exists()


bsdtar_missing = pytest.mark.skipif(
    shutil.which("bsdtar") is None,
    reason="bsdtar is not installed (Debian's libarchive-tools, in the "
    "Makefile's DEBS_TEST: make deps)")


def bsdtar(tar, *args):
    subprocess.run(["bsdtar", "-cf", tar, *map(str, args)], check=True,
                   capture_output=True)


def pax_keys(tar):
    """The keys of every pax extended header of tar, in order."""
    with tarfile.open(tar) as t:
        return [k for m in t.getmembers() for k in m.pax_headers]


def verify_and_import(cwd, tar, pub, db):
    r = verify(cwd, tar, pub)
    assert r.returncode == 0, (tar, r.stderr)
    assert "4 sample digests recomputed" in r.stdout
    r = seqorch(cwd, "import", tar, "--pubkey", pub, "--db", db)
    assert r.returncode == 0, (tar, r.stderr)
    assert "as run 1" in r.stdout


def refused(cwd, tar, pub, why):
    for cmd in ("verify", "import"):
        r = seqorch(cwd, cmd, tar, "--pubkey", pub,
                    *(("--db", "other.db") if cmd == "import" else ()))
        assert r.returncode == 1, (tar, cmd, r.stderr)
        assert why in r.stderr, (tar, cmd, r.stderr)
    assert not (cwd / "other.db").exists()


@bsdtar_missing
def test_a_directory_bundle_tarred_by_bsdtar(measured, keys):
    """macOS's tar is bsdtar: its default (ustar headers) and --format=pax
    (a pax extended header of times before every member) read as GNU
    tar's does.  Before, --format=pax was refused: entry
    "PaxHeader/currentdir" is a pax extended header (type 'x').  A pax
    header that renames the member (a name past 100 bytes) still is, by
    its key."""
    pub = keys / "key.pub"
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    bsdtar(measured / "b.tar", "-C", measured / "bdir", ".")
    assert pax_keys(measured / "b.tar") == []
    verify_and_import(measured, "b.tar", pub, "one.db")
    bsdtar(measured / "pax.tar", "--format", "pax", "-C",
           measured / "bdir", ".")
    assert {"mtime", "atime", "ctime"} <= set(pax_keys(measured / "pax.tar"))
    verify_and_import(measured, "pax.tar", pub, "two.db")
    # A name no ustar prefix can split (bsdtar splits one that it can).
    (measured / "bdir" / ("c" * 120)).write_text("{}")
    bsdtar(measured / "long.tar", "-C", measured / "bdir", ".")
    assert "path" in pax_keys(measured / "long.tar")
    refused(measured, "long.tar", pub, 'is a pax extended header setting '
            '"path", which would change the member after it')


def test_gnu_tar_posix_of_a_directory_bundle(measured, keys):
    """GNU tar's --posix writes a pax extended header of times before
    every member ("./PaxHeaders/."): read, as bsdtar's are.  Before,
    refused as a pax extended header (type 'x')."""
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    gnu_tar(measured / "b.tar", "--posix", "-C", measured / "bdir", ".")
    assert "mtime" in pax_keys(measured / "b.tar")
    verify_and_import(measured, "b.tar", keys / "key.pub", "one.db")


@bsdtar_missing
def test_bsdtar_extended_attributes(measured, keys):
    """A file with extended attributes (on a Mac, com.apple.provenance or
    quarantine on what was downloaded) gets a pax header of
    LIBARCHIVE.xattr.* and SCHILY.xattr.* records from bsdtar, a raw value
    holding any byte: read, as they leave the file's content alone.
    Before, refused as a pax extended header (type 'x')."""
    pub = keys / "key.pub"
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    try:
        os.setxattr(measured / "bdir" / "rows.json", "user.test", b"v\n1")
        os.setxattr(measured / "bdir" / "manifest.json",
                    "user.com.apple.provenance", b"\x01\x02\x00\x3d")
    except OSError as e:
        pytest.skip(f"the test directory's file system takes no user "
                    f"extended attributes ({e.strerror})")
    bsdtar(measured / "x.tar", "-C", measured / "bdir", ".")
    keys_ = pax_keys(measured / "x.tar")
    assert "SCHILY.xattr.user.test" in keys_
    assert "LIBARCHIVE.xattr.user.com.apple.provenance" in keys_
    verify_and_import(measured, "x.tar", pub, "one.db")
    bsdtar(measured / "xpax.tar", "--format", "pax", "-C",
           measured / "bdir", ".")
    verify_and_import(measured, "xpax.tar", pub, "two.db")


@bsdtar_missing
def test_appledouble_member_is_refused(measured, keys):
    """macOS's tar adds "._NAME" (AppleDouble: the file's extended
    attributes) beside NAME unless COPYFILE_DISABLE=1: refused, saying
    so.  Before, refused as a file the manifest does not list, without
    saying why it was there."""
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    (measured / "bdir" / "._rows.json").write_bytes(
        b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(16))
    bsdtar(measured / "b.tar", "-C", measured / "bdir", ".")
    refused(measured, "b.tar", keys / "key.pub", '"b.tar": "._rows.json" '
            "is macOS's AppleDouble copy of a file's extended attributes, "
            "not part of the bundle: on macOS, tar the directory as "
            "`COPYFILE_DISABLE=1 tar -cf B.tar -C DIR .`")


def report_lines(cwd, run, db):
    r = seqorch(cwd, "report", "--run", run, "--db", db)
    assert r.returncode == 0, r.stderr
    # The run's and builds' own ids are what may differ.
    return [re.sub(r"^(\s+)\d+(\s+local\s)", r"\1N\2",
                   line.replace(f"run {run}:", "run N:"))
            for line in r.stdout.splitlines()]


def test_import_into_a_fresh_database(measured, keys):
    assert export(measured, "b.tar", keys / "key.pem").returncode == 0
    r = seqorch(measured, "import", "b.tar", "--pubkey", keys / "key.pub",
                "--db", "fresh.db")
    assert r.returncode == 0, r.stderr
    assert "as run 1" in r.stdout
    # The copy says where it came from (issue 32 item 3); every other
    # line is the measured run's own.
    imported = report_lines(measured, 1, "fresh.db")
    marks = [x for x in imported if x.startswith("  imported  ")]
    assert len(marks) == 1 and "signature verified" in marks[0], imported
    assert [x for x in imported if x not in marks] == \
        report_lines(measured, 1, "results.db")
    fresh = measured / "fresh.db"
    (origin, key), = query(fresh, "select origin_coordinator, "
                           "key_fingerprint from imports")
    coord, = query(measured / "results.db",
                   "select coordinator from runs")[0:1]
    assert origin == coord[0] and key == fingerprint(keys / "key.pub")
    # Its artifacts came along, whole.
    r = seqorch(measured, "artifacts", "--run", 1, "--db", "fresh.db",
                "--verify")
    assert r.returncode == 0 and "raw" in r.stdout and "binary" in r.stdout
    # Twice: nothing changes.
    before = query(fresh, "select count(*) from samples")
    r = seqorch(measured, "import", "b.tar", "--pubkey", keys / "key.pub",
                "--db", "fresh.db")
    assert r.returncode == 0 and "already here as run 1" in r.stderr
    assert query(fresh, "select count(*) from samples") == before
    assert query(fresh, "select count(*) from runs") == [(1,)]
    # Bundled again from here, the copy would name this database as its
    # origin and carry this key's signature: refused, nothing written.
    for argv in (("--bundle", "again.tar", "--sign", keys / "key.pem"),
                 ("--bundle", "again")):
        r = seqorch(measured, "export", "--run", 1, "--db", "fresh.db",
                    *argv)
        assert r.returncode == 2, r.stderr
        assert f"run 1 was imported from a bundle (run 1 of {coord[0]}): " \
            "only its own coordinator bundles it" in r.stderr, r.stderr
        assert not (measured / argv[1]).exists()
    # Into the database it came from: a new id, the same report.
    r = seqorch(measured, "import", "b.tar", "--pubkey", keys / "key.pub")
    assert r.returncode == 0 and "as run 2" in r.stdout, r.stdout
    again = report_lines(measured, 2, "results.db")
    assert [x for x in again if not x.startswith("  imported  ")] == \
        report_lines(measured, 1, "results.db")
    assert sum(x.startswith("  imported  ") for x in again) == 1


def test_import_says_at_once_when_its_database_cannot_be_written(measured,
                                                                keys):
    """An --db that import cannot open or create is said before the
    bundle's verification (minutes for a big run), exit 3, creating
    nothing; before, the whole bundle was verified first.  A bundle that
    does not verify (another key) shows the order: the database is named,
    not the signature."""
    assert export(measured, "b.tar", keys / "key.pem").returncode == 0
    (measured / "adir").mkdir()
    con = sqlite3.connect(measured / "notes.db")
    con.execute("create table notes (x)")
    con.commit()
    con.close()
    for db, why in (("adir", 'database "adir": "adir" is not a regular '
                     "file"),
                    ("no/x.db", 'cannot create database "no/x.db": no '
                     'directory "no"'),
                    ("notes.db", 'database "notes.db" holds another '
                     "program's tables and no seqorch schema: give --db a "
                     "new file")):
        for pub in ("key.pub", "other.pub"):
            r = seqorch(measured, "import", "b.tar", "--pubkey", keys / pub,
                        "--db", db)
            assert (r.returncode, r.stderr) == (3, f"seqorch: {why}\n"), \
                (db, pub, r.stderr)
    assert not (measured / "no").exists()
    assert list((measured / "adir").iterdir()) == []
    # A bundle refused still leaves no database behind.
    r = seqorch(measured, "import", "b.tar", "--pubkey", keys / "other.pub",
                "--db", "new.db")
    assert r.returncode == 1 and not (measured / "new.db").exists()


def test_a_bundle_that_fails_is_refused_whole(measured, keys):
    assert export(measured, "bdir", keys / "key.pem").returncode == 0
    rows = measured / "bdir" / "rows.json"
    rows.write_text(rows.read_text().replace('"sha3"', '"sha3" ', 1))
    r = seqorch(measured, "import", "bdir", "--pubkey", keys / "key.pub",
                "--db", "fresh.db")
    assert r.returncode == 1 and "refused" in r.stderr
    assert not (measured / "fresh.db").exists() or \
        query(measured / "fresh.db", "select count(*) from runs") == [(0,)]


def test_bundle_errors(measured, keys):
    r = seqorch(measured, "export", "--run", 1, "--bundle", "x.tar",
                "--sign", keys / "key.pub")
    assert r.returncode != 0 and "not an unencrypted PEM private key" in \
        r.stderr
    r = seqorch(measured, "verify", "nope.tar", "--pubkey", keys / "key.pub")
    assert r.returncode == 2 and 'no bundle "nope.tar"' in r.stderr
    r = seqorch(measured, "verify", "x")
    assert r.returncode == 2
    (measured / "junk.tar").write_bytes(b"\x01" * 1024)
    r = verify(measured, "junk.tar", keys / "key.pub")
    assert r.returncode == 1 and "bad tar header" in r.stderr


# --- publish: a collector on 127.0.0.1 over TLS with a test CA -----------

class Collector(http.server.BaseHTTPRequestHandler):
    state = {}
    received = []

    def log_message(self, *a):
        pass

    def answer(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        seen = self.state.setdefault(self.path, 0)
        self.state[self.path] = seen + 1
        self.received.append(dict(path=self.path, body=body,
                                  headers=dict(self.headers)))
        if self.path == "/flaky" and seen == 0:
            return self.answer(500, b"busy, try later\nsecond line")
        if self.path == "/drop" and seen == 0:
            self.close_connection = True
            self.connection.shutdown(2)
            return None
        if self.path == "/auth":
            return self.answer(401, b"bad token\nmore")
        if self.path == "/away":
            return self.answer(307, b"", [("Location",
                                           "https://127.0.0.2:9/ok")])
        if self.path == "/here":
            port = self.server.server_address[1]
            return self.answer(307, b"", [(
                "Location", f"https://127.0.0.1:{port}/ok")])
        if self.path == "/down":
            return self.answer(503, b"down for good")
        return self.answer(201, b"stored\n")


@pytest.fixture
def collector(tls):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls / "srv.pem", tls / "srv.key")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    Collector.state.clear()
    Collector.received.clear()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"https://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def publish(cwd, url, keys, tls, *extra):
    return seqorch(cwd, "publish", "--run", 1, "--url", url, "--sign",
                   keys / "key.pem", "--cacert", tls / "ca.pem", *extra,
                   timeout=120)


def test_publish(measured, keys, tls, collector):
    (measured / "token").write_text("s3cret-token\n")
    r = publish(measured, collector + "/ok", keys, tls, "--token-file",
                "token")
    assert r.returncode == 0, r.stderr
    assert "201" in r.stdout
    req, = Collector.received
    assert req["headers"]["Authorization"] == "Bearer s3cret-token"
    assert req["headers"]["Content-Type"] == "application/x-tar"
    # What arrived is the signed bundle: it verifies.
    (measured / "got.tar").write_bytes(req["body"])
    r = verify(measured, "got.tar", keys / "key.pub")
    assert r.returncode == 0, r.stderr

    Collector.received.clear()
    r = publish(measured, collector + "/flaky", keys, tls)
    assert r.returncode == 0, r.stderr
    assert len(Collector.received) == 2 and "busy, try later" in r.stderr

    Collector.received.clear()
    r = publish(measured, collector + "/drop", keys, tls)
    assert r.returncode == 0, r.stderr
    assert len(Collector.received) == 2

    Collector.received.clear()
    r = publish(measured, collector + "/auth", keys, tls)
    assert r.returncode == 1 and len(Collector.received) == 1
    assert "answered 401: bad token" in r.stderr and "more" not in r.stderr

    Collector.received.clear()
    r = publish(measured, collector + "/away", keys, tls, "--token-file",
                "token")
    assert r.returncode == 1 and "redirect" in r.stderr
    assert "refused" in r.stderr and len(Collector.received) == 1

    Collector.received.clear()
    r = publish(measured, collector + "/here", keys, tls)
    assert r.returncode == 0, r.stderr
    assert [q["path"] for q in Collector.received] == ["/here", "/ok"]

    Collector.received.clear()
    r = publish(measured, collector + "/down", keys, tls, "--attempts", 3)
    assert r.returncode == 1 and len(Collector.received) == 3
    assert "answered 503 after 3 tries: down for good" in r.stderr


def test_publish_verifies_tls_and_keeps_tokens_off_the_command_line(
        measured, keys, tls, collector):
    # Without the test CA the certificate is not trusted: no retry.
    r = seqorch(measured, "publish", "--run", 1, "--url", collector + "/ok",
                "--sign", keys / "key.pem", timeout=120)
    assert r.returncode == 1 and "certificate" in r.stderr.lower()
    assert Collector.received == []
    r = seqorch(measured, "publish", "--run", 1, "--url",
                collector.replace("https", "http") + "/ok", "--sign",
                keys / "key.pem")
    assert r.returncode == 2 and "https://" in r.stderr
    r = seqorch(measured, "publish", "--run", 1, "--url", collector,
                "--sign", keys / "key.pem", "--token", "x")
    assert r.returncode == 2
