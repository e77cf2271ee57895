"""seqorch against an x86-64 and an aarch64 Linux host at once (make
test-arm64; tests/arm64.py builds the emulated host).

One `seqorch run` of every study but randomx (which needs cmake and a C++
compiler the arm64 host does not have) on this machine ("local") and on
the emulated Graviton-like host ("arm", qemu-aarch64 -cpu max behind a
chrooted sshd), small --steps, then results.db is checked: every sample
valid on both hosts, one final digest per study across the two
architectures (equal to the Python chain of tests/refs.py), every ARM
variant built, run and valid on arm and none of them on x86-64.  Rates
under an emulator mean nothing and are not looked at.
"""
import json
import os
import sqlite3
import tempfile
import shutil
from pathlib import Path

import pytest

import refs
from arm64 import arm_sshd
from conftest import ROOT, SEQORCH
from sshd import keygen, write_hosts_toml

STUDIES = ("sha3", "sha512", "mul", "mul-wide", "mul32", "div32", "div64",
           "bitperm")
STEPS = 2000
SAMPLES = 2


def arm_variants(study):
    """The variants of study that build only for aarch64 (their arch file)."""
    out = []
    for d in sorted((ROOT / "kernels" / study).iterdir()):
        arch = d / "arch"
        if arch.is_file() and "aarch64" in arch.read_text().split():
            out.append(d.name)
    return out


def rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """(directory, results.db, the run's stderr) of one run of STUDIES on
    local and arm."""
    tmp = tmp_path_factory.mktemp("arm64")
    base = Path(tempfile.mkdtemp(prefix="seqorch-arm64-"))
    base.chmod(0o755)
    key = tmp / "id_ed25519"
    keygen(key, "seqorch-user")
    arm = arm_sshd(base, "arm", key)
    try:
        local = tmp / "local-work"
        local.mkdir()
        write_hosts_toml(tmp / "hosts.toml", {
            "local": {"transport": "local", "cpu": 0,
                      "workdir": str(local)},
            "arm": arm.host_entry(),
        })
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
        import subprocess
        r = subprocess.run(
            [str(SEQORCH), "run", "--study", ",".join(STUDIES), "--hosts",
             "local,arm", "--steps", str(STEPS), "--samples", str(SAMPLES)],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stdout + r.stderr + \
            arm.log.read_text()[-4000:]
        yield tmp, tmp / "results.db", r.stderr
    finally:
        arm.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_every_sample_valid_on_both(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        got = dict(rows(db, "SELECT host, count(*) FROM samples WHERE "
                        "study = ? AND valid = 1 GROUP BY host", study))
        bad = rows(db, "SELECT host, variant, invalid_reason FROM samples "
                   "WHERE study = ? AND valid = 0", study)
        assert not bad, (study, bad)
        assert got.get("local", 0) > 0 and got.get("arm", 0) > 0, \
            (study, got)


def test_one_digest_per_study_across_architectures(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        digests = rows(db, "SELECT DISTINCT digest FROM samples WHERE "
                       "study = ?", study)
        assert digests == [(refs.chain_hex(study, STEPS),)], study
        hosts = rows(db, "SELECT DISTINCT host FROM samples WHERE study = ? "
                     "ORDER BY host", study)
        assert hosts == [("arm",), ("local",)], study


def test_arm_variants_run_on_arm_only(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        want = arm_variants(study)
        for v in want:
            st = rows(db, "SELECT status, reason FROM variants WHERE "
                      "host = 'arm' AND study = ? AND variant = ?", study, v)
            assert st == [("ok", None)], (study, v, st)
            n = rows(db, "SELECT count(*) FROM samples WHERE host = 'arm' "
                     "AND study = ? AND variant = ? AND valid = 1", study, v)
            assert n == [(SAMPLES,)], (study, v)
        on_local = rows(db, "SELECT DISTINCT variant FROM samples WHERE "
                        "host = 'local' AND study = ?", study)
        assert not set(want) & {v for (v,) in on_local}, study


def test_arm_host_is_aarch64(fleet):
    _, db, _ = fleet
    for (text,) in rows(db, "SELECT facts FROM run_hosts WHERE host = 'arm'"):
        facts = json.loads(text)
        assert facts["arch"] == "aarch64"
        assert facts["os"] == "Linux"
    assert rows(db, "SELECT DISTINCT arch FROM hosts ORDER BY name") == \
        [("aarch64",), ("x86_64",)]
