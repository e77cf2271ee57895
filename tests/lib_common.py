"""Helpers that several test files share: waiting for a condition, a port
where nothing listens, what the bash completion offers, an empty
results database made from schema.sql, libfaketime's path, and a
command prefix that runs a coordinator as if on another machine.  (conftest.py
holds the fixtures and the seqorch/query helpers; sshd.py the servers.)"""
import re
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT



# A coordinator on another machine: it runs in a UTS namespace of its own
# whose host name is not ours, as in a container, so its lease row names
# that host and no other coordinator here can ask after its process.
OTHER_MACHINE = ["unshare", "--uts", "sh", "-c",
                 'hostname lease-container && exec "$0" "$@"']


def faketime_lib():
    """libfaketime (Debian package faketime, in the Makefile's DEBS)."""
    libs = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))
    assert libs, "libfaketime.so.1 is missing: run make deps (faketime)"
    return libs[0]


def schema_db(path):
    """A connection to a new database at path made from schema.sql, with
    the user_version db.c records for the schema it applied (its last
    "-- version: N"), as a report or an import expects."""
    con = sqlite3.connect(path)
    schema = (ROOT / "schema.sql").read_text()
    con.executescript(schema)
    version = max(int(ln.split(":")[1]) for ln in schema.splitlines()
                  if ln.startswith("-- version:"))
    con.execute(f"PRAGMA user_version = {version}")
    return con

def wait_for(pred, what="the condition", p=None, tmp_path=None,
             timeout=240, ignore=()):
    """Poll pred() until it returns something true and return that; fail
    naming what on timeout, or at once when the process p ended meanwhile
    (with tmp_path/run.err, its stderr, when tmp_path is given).  An
    exception of the types in ignore (a database not yet created) counts
    as false."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            v = pred()
        except ignore:
            v = None
        if v:
            return v
        if p is not None and p.poll() is not None:
            err = (tmp_path / "run.err").read_text() if tmp_path else ""
            pytest.fail(f"the process ended (exit {p.returncode}) before "
                        f"{what}:\n{err}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def dead_port(addr):
    """A port on addr where nothing listens (the address is this worker's:
    sshd.free_endpoint, so no other test starts a server there)."""
    s = socket.socket()
    s.bind((addr, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def complete(cwd, *words, ordered=False):
    """What build/seqorch.bash offers for the last of words (seqorch
    first), in cwd, in a bash that reads no dotfiles; sorted unless
    ordered (then in the order the completion gives)."""
    script = (f"source {ROOT / 'build' / 'seqorch.bash'}\n"
              'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))\n'
              '_seqorch; printf "%s\\n" "${COMPREPLY[@]}"\n')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script,
                        "bash", *words], cwd=cwd, capture_output=True,
                       text=True, timeout=60,
                       env={"PATH": f"{BIN}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    out = [w for w in r.stdout.splitlines() if w]
    return out if ordered else sorted(out)


def check_randomx_published(sec, host, best):
    """The randomx section of a reproduce umbrella's printed table: the
    seed's Graviton figures, HOST's light-mode rate beside each (the ratio
    to BEST, {targeting: median rate} from the summary), and the
    native / default ratios, published and HOST's."""
    assert "    graviton5  native 570.9 hashes/s  full mode, secure JIT, " \
        "native compiler targeting\n" in sec
    assert "    graviton5  default 571.6 hashes/s  full mode, secure JIT, " \
        "default compiler targeting\n" in sec
    for t, pub in (("default", 571.6), ("native", 570.9)):
        m = re.search(rf"^    {host} +{t} \S+ hashes/s  light, n 10; "
                      rf"graviton5's {pub}: (\d\.\d{{3}})x\n      "
                      r"indicative only: light, where the seed ran full$",
                      sec, re.M)
        assert m, sec
        assert abs(float(m.group(1)) - best[t] / pub) <= 0.0005 + 1e-9
    assert "  native / default: published 0.999x (graviton5)\n" in sec
    m = re.search(rf"^  native / default: {host} (\d\.\d{{3}})x$", sec, re.M)
    assert m, sec
    assert abs(float(m.group(1)) - best["native"] / best["default"]) <= \
        0.0005 + 1e-9
