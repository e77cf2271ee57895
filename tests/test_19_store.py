"""Files seqorch writes and reads beside results.db, tried as someone
who can plant files there would (docs/reliability.md, "The store and the
files it writes"): export's temporary and final names planted as
symlinks, a damaged artifact of the right size, FIFOs in artifacts/ and
as results.db, and a warm run under `ulimit -v`; and the smaller cases
of issue 20: a build log holding the report's marks, `ulimit -n`, gc on a
damaged index, the key search with HOME unset."""
import hashlib
import os
import subprocess
import tarfile

import pytest

from conftest import AGENT, query, seqorch, write_hosts


def run(cwd):
    r = seqorch(cwd, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "300", "--samples", "2", "--variants",
                "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def measured(scratch):
    run(scratch)
    return scratch


# --- item 7: export never writes through a planted link -----------------

def test_export_bundle_never_follows_a_planted_link(measured, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    # The fixed temporary name of old, and the final name, both links.
    (measured / "x.tar.tmp").symlink_to(victim)
    (measured / "x.tar").symlink_to(victim)
    r = seqorch(measured, "export", "--run", 1, "--bundle", "x.tar")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    assert not (measured / "x.tar").is_symlink()
    with tarfile.open(measured / "x.tar") as t:
        assert "manifest.json" in t.getnames()
    # No temporary file is left beside it.
    left = [p.name for p in measured.iterdir() if p.name.startswith(".")]
    assert left == []


def test_export_output_replaces_a_link_instead_of_following_it(measured,
                                                               tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (measured / "s.json").symlink_to(victim)
    r = seqorch(measured, "export", "--run", 1, "-o", "s.json")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    assert not (measured / "s.json").is_symlink()
    assert '"run"' in (measured / "s.json").read_text()
    assert [p.name for p in measured.iterdir() if p.name.startswith(".")] \
        == []
    # A directory that is not there: the error names the file.
    r = seqorch(measured, "export", "--run", 1, "-o", "no/s.json")
    assert r.returncode == 4 and '"no/s.json"' in r.stderr


def artifacts(cwd, run_id, *extra):
    r = seqorch(cwd, "artifacts", "--run", run_id, *extra, timeout=60)
    rows = {}
    # Between the header and the total, one line per artifact.
    lines = r.stdout.splitlines()
    if lines and lines[0].split()[:2] == ["host", "kind"]:
        lines.pop(0)
    if lines and lines[-1].startswith("total:"):
        lines.pop()
    for line in lines:
        host, kind, build, name, size, path, *state = line.split()
        rows[kind, name] = dict(path=path, state=state)
    return r, rows


# --- item 8: a damaged artifact of the right size is rewritten ------------

def test_a_damaged_artifact_of_the_right_size_is_stored_again(measured):
    _, rows = artifacts(measured, 1)
    path = rows["source", "kernels/sha3/study.c"]["path"]
    good = open(path, "rb").read()
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.seek(10)
        f.write(bytes([good[10] ^ 0x20]))
    assert os.path.getsize(path) == len(good)
    run(measured)
    r, rows = artifacts(measured, 2, "--verify")
    assert r.returncode == 0, r.stderr
    assert rows["source", "kernels/sha3/study.c"]["path"] == path
    assert open(path, "rb").read() == good
    assert hashlib.sha256(good).hexdigest() == os.path.basename(path)


# --- item 9: FIFOs are refused, never opened and waited on ----------------

def test_a_fifo_in_the_store_is_refused(measured):
    _, rows = artifacts(measured, 1)
    path = rows["build-commands", "commands"]["path"]
    os.unlink(path)
    os.mkfifo(path)
    r, rows = artifacts(measured, 1, "--verify")
    assert r.returncode == 1
    assert f'artifact "{path}" is not a regular file' in r.stderr
    assert rows["build-commands", "commands"]["state"] == ["BAD"]
    r = seqorch(measured, "export", "--run", 1, "--bundle", "b.tar",
                timeout=60)
    assert r.returncode != 0 and "is not a regular file" in r.stderr
    assert not (measured / "b.tar").exists()
    # A run puts the file back whole instead of reading the FIFO.
    run(measured)
    r, _ = artifacts(measured, 2, "--verify")
    assert r.returncode == 0, r.stderr
    assert os.path.isfile(path) and not os.path.islink(path)


@pytest.mark.parametrize("args", [
    ("report",), ("windows",), ("export", "--run", "1"),
    ("artifacts", "--run", "1"), ("gc", "--dry-run"),
])
def test_a_fifo_as_results_db_is_refused(tmp_path, args):
    os.mkfifo(tmp_path / "results.db")
    r = seqorch(tmp_path, *args, timeout=30)
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert 'database "results.db": "results.db" is not a regular file' \
        in r.stderr


def test_a_fifo_beside_results_db_is_refused(measured):
    os.mkfifo(measured / "results.db-journal")
    r = seqorch(measured, "report", timeout=30)
    assert r.returncode == 3
    assert '"results.db-journal" is not a regular file' in r.stderr


# --- item 13: a build log cannot end the report's sections ---------------

FORGING_CC = """#!/bin/sh
# A compile's output is the build log: it holds the report's marks.
case " $* " in *" -o "*)
    echo '@@seqorch:openssl'
    echo 'OpenSSL 0.0.0-forged'
    echo '@@seqorch:extra'
    echo 'forged=1'
    echo '@@seqorch:extra 5'
    echo 'after the marks' ;;
esac
exec cc "$@"
"""


def test_a_build_log_with_marks_is_kept_whole(tmp_path):
    cc = tmp_path / "bin" / "cc"
    cc.parent.mkdir()
    cc.write_text(FORGING_CC)
    cc.chmod(0o755)
    wd = tmp_path / "wd"
    write_hosts(tmp_path / "hosts.toml", wd, f'cc = "{cc}"\n')
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "300", "--samples", "1", "--variants", "c-fused")
    assert r.returncode == 0, r.stderr
    (openssl, extra, log), = query(tmp_path / "results.db",
                                   "select openssl, extra, log from builds")
    # the libcrypto the agent loads (seqorch-agent --openssl), as for any
    # build, not what the forging compiler printed
    real = subprocess.run([str(AGENT), "--openssl"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert openssl == real
    assert extra is None or "forged" not in extra
    assert "OpenSSL 0.0.0-forged" in log and "after the marks" in log
    assert log.count("@@seqorch:openssl") >= 1


# --- item 13: gc on a damaged index says what SQLite found ---------------

def test_gc_on_a_damaged_index_names_the_damage(measured):
    import sqlite3
    db = measured / "results.db"
    con = sqlite3.connect(db)
    con.execute("pragma wal_checkpoint(TRUNCATE)")
    con.execute("pragma journal_mode = delete")
    (root,), = con.execute("select rootpage from sqlite_master where name "
                           "= 'artifact_refs_sha'").fetchall()
    (size,), = con.execute("pragma page_size").fetchall()
    con.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)
    r = seqorch(measured, "gc", timeout=60)
    assert r.returncode == 3
    assert "cannot collect artifacts: database disk image is malformed" \
        in r.stderr, r.stderr
    assert "not an error" not in r.stderr


# --- item 10: a warm run under `ulimit -v` ------------------------------

def limited(cwd, limit, *args, timeout=300):
    """./seqorch ARGS under a real `ulimit` set by a shell."""
    from conftest import SEQORCH
    return subprocess.run(["sh", "-c", f'ulimit {limit} && exec "$@"', "sh",
                           str(SEQORCH), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def test_a_warm_run_fits_in_60_mb_of_address_space(measured):
    r = limited(measured, "-v 60000", "run", "--study", "sha3", "--hosts",
                "local", "--steps", "300", "--samples", "2", "--variants",
                "c-fused,openssl-evp")
    assert r.returncode == 0, r.stderr
    assert "out of memory" not in r.stderr
    db = measured / "results.db"
    assert query(db, "select id, status from runs") == [(1, "ok"), (2, "ok")]
    # The raw output was read back and kept, in a buffer of its size.
    warnings = [m for m, in query(db, "select message from events where "
                                  "run_id = 2 and level = 'warning'")]
    assert not any("not kept" in m for m in warnings), warnings
    _, rows = artifacts(measured, 2, "--verify")
    assert any(k == "raw" for k, _ in rows)


# --- item 13: `ulimit -n` too low is said as such ------------------------

@pytest.mark.parametrize("cmd", [
    ("run", "--study", "sha3", "--hosts", "local", "--steps", "300",
     "--samples", "1", "--variants", "c-fused"),
    ("deploy", "--hosts", "local"),
])
def test_too_few_open_files_is_named(scratch, cmd):
    r = limited(scratch, "-n 12", *cmd, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "too many open files: the open-file limit (ulimit -n) is 12" \
        in r.stderr
    assert "no compiler produced a working agent" not in r.stderr
    assert not (scratch / "results.db").exists() or \
        query(scratch / "results.db", "select status from runs") == []


def test_a_low_soft_limit_is_raised(scratch):
    r = limited(scratch, "-Sn 12", "run", "--study", "sha3", "--hosts",
                "local", "--steps", "300", "--samples", "1", "--variants",
                "c-fused", timeout=120)
    assert r.returncode == 0, r.stderr
    assert query(scratch / "results.db", "select status from runs") == \
        [("ok",)]


# A test-only fault: malloc preloaded to fail once, for the coordinator's
# own allocations (called from the seqorch binary, not from a library),
# once the file TRIGGER exists.
OOM_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
extern void *__libc_malloc(size_t);
extern char *program_invocation_short_name;
static int done;
void *malloc(size_t n) {
	Dl_info di;
	size_t l;
	if (!done && strcmp(program_invocation_short_name, "seqorch") == 0 &&
	    access(TRIGGER, F_OK) == 0 &&
	    dladdr(__builtin_return_address(0), &di) && di.dli_fname &&
	    (l = strlen(di.dli_fname)) >= 8 &&
	    strcmp(di.dli_fname + l - 8, "/seqorch") == 0) {
		done = 1;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}
"""


def test_an_abort_for_memory_ends_the_run_partial(measured, tmp_path,
                                                  workdir):
    import signal
    import time
    from conftest import agent_pids
    trigger = tmp_path / "oom-now"
    src = tmp_path / "shim.c"
    src.write_text(OOM_SHIM.replace("TRIGGER", f'"{trigger}"'))
    shim = tmp_path / "shim.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, src,
                    "-ldl"], check=True)
    from conftest import SEQORCH
    env = dict(os.environ, LD_PRELOAD=str(shim))
    p = subprocess.Popen([str(SEQORCH), "run", "--study", "sha3", "--hosts",
                          "local", "--steps", "300000", "--samples", "20",
                          "--variants", "c-fused"], cwd=measured, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    db = measured / "results.db"
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if query(db, "select count(*) from samples where run_id = 2") != \
                [(0,)]:
            trigger.touch()
            break
        time.sleep(0.2)
    _, err = p.communicate(timeout=120)
    # The agent runs detached: it is not left measuring after the test.
    for pid in agent_pids(workdir):
        os.kill(pid, signal.SIGTERM)
    assert trigger.exists(), err
    assert "out of memory allocating" in err
    assert p.returncode < 0, err    # the abort
    # Its samples before the abort are valid: partial, not failed.
    (status,), = query(db, "select status from runs where id = 2")
    assert status == "partial"
    msgs = [m for m, in query(db, "select message from events where run_id "
                              "= 2 and level = 'error'")]
    assert any("the coordinator ran out of memory allocating" in m
               for m in msgs), msgs
