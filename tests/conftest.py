"""Shared pytest fixtures: the built binaries, a scratch directory with a
local-only hosts.toml, and helpers that run seqorch and read results.db."""
import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# `make sanitize` points this at its ASan/UBSan build.
BIN = Path(os.environ.get("SEQORCH_BIN_DIR", ROOT))
SEQORCH = BIN / "seqorch"
AGENT = BIN / "seqorch-agent"
# Independently computed (Python hashlib) chain digests, from shared/vectors.
VECTORS = ROOT / "tests" / "vectors" / "chains.json"


def sha3_chain(steps, seed=bytes(32)):
    """The chain computed independently with Python's hashlib."""
    x = seed
    for _ in range(steps):
        x = hashlib.sha3_256(x).digest()
    return x.hex()


@pytest.fixture(scope="session", autouse=True)
def built():
    """make builds both binaries once per test session."""
    subprocess.run(["make", "-s", "all"], cwd=ROOT, check=True)
    assert SEQORCH.exists() and AGENT.exists()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    """One agent build directory shared by the local-host tests, so the
    content-addressed build is done once and reused."""
    return tmp_path_factory.mktemp("workdir")


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


def vectors():
    return json.loads(VECTORS.read_text())
