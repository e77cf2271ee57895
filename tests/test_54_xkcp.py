"""XKCP beside the sha3 kernels (make bench): tests/kernels/xkcp.sh builds
every single-instance config from the fixture tarball after checking its
SHA-256, and tests/kernels/others.c chains each through XKCP's SnP calls
in one process with ours, ending in Python hashlib's digest.  Skipped
where the fixture is absent (XKCP_TARBALL, or the path make bench uses)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, cpu_flags, locked, sha3_chain

CANDIDATES = [os.environ.get("XKCP_TARBALL", "")] + [
    str(ROOT / up / "shared/fixtures/xkcp/XKCP-6ce53d0.tar.gz")
    for up in ("..", "../..")]
TARBALL = next((p for p in CANDIDATES if p and os.path.isfile(p)), None)
ALL_CONFIGS = {"plain64-lcu6", "plain64-lcua", "plain64-lcua-shld",
               "plain64-u6", "plain64-ua", "avx512c-u6", "avx512c-u12",
               "avx512c-ua", "avx512-asm", "avx2-asm"}
# -march=native targets AVX-512 only where /proc/cpuinfo has it: the
# AVX-512 configs are left out elsewhere (they would not build or run).
HAVE512 = {"avx512f", "avx512vl"} <= cpu_flags()
CONFIGS = {c for c in ALL_CONFIGS if HAVE512 or not c.startswith("avx512")}

pytestmark = pytest.mark.skipif(TARBALL is None,
                                reason="no XKCP fixture tarball")


def xkcp_sh(out, tarball, *ccs):
    return subprocess.run(["sh", str(ROOT / "tests/kernels/xkcp.sh"),
                           str(out), str(tarball), "-O2 -march=native",
                           *ccs], capture_output=True, text=True)


@pytest.fixture(scope="module")
def others(built):
    with locked(ROOT / "build" / "pytest-make.lock"):
        subprocess.run(["make", "-s", "build/others"], cwd=ROOT, check=True)
    return ROOT / "build" / "others"


@pytest.fixture(scope="module")
def shared_objects(tmp_path_factory):
    """Every config built with gcc (make bench adds clang)."""
    out = tmp_path_factory.mktemp("xkcp")
    p = xkcp_sh(out, TARBALL, "gcc")
    assert p.returncode == 0, p.stderr
    return p.stdout.split(), p.stderr


def test_every_config_is_built(shared_objects):
    so, err = shared_objects
    names = {os.path.basename(p)[len("gcc-"):-len(".so")] for p in so}
    assert names == CONFIGS
    left_out = "gcc -O2 -march=native targets no AVX-512F/VL: its AVX-512 " \
        "configs are not built"
    assert (left_out in err) == (not HAVE512), err


def test_xkcp_chains_end_in_hashlib_digest(others, shared_objects):
    objects, _ = shared_objects
    steps = 1000
    args = [str(others), "-S", "sha3", "-n", str(steps), "-s", "2", "-r",
            "2"]
    for so in objects:
        args += ["-x", so]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    # every sample of every implementation agreed (others fails if not),
    # and the common digest is Python's
    assert f"digest {sha3_chain(steps)}" in lines
    for name in CONFIGS:
        assert any(line.startswith(f"XKCP {name} (gcc) ") for line in lines), \
            (name, p.stdout)
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 2
    for line in rounds:
        assert re.search(r"median: \S+ [\d.]+ ns, [\d.]+x XKCP \S+ \(gcc\), "
                         r"[\d.]+x libgcrypt, [\d.]+x evp-fetched", line), line


def test_tarball_with_another_sha256_is_refused(tmp_path):
    bad = tmp_path / "XKCP-6ce53d0.tar.gz"
    shutil.copy(TARBALL, bad)
    with open(bad, "ab") as f:
        f.write(b"\0")
    p = xkcp_sh(tmp_path / "out", bad, "gcc")
    assert p.returncode != 0
    assert f'"{bad}": SHA-256 ' in p.stderr
    assert "expected 1595beee6d0e8ef7053d5950bed0d680662fb3297eadd909dc8914b4" \
        "51ca1ad1" in p.stderr
    assert not (tmp_path / "out").exists()


def test_bad_shared_object_is_named(others, tmp_path):
    p = subprocess.run([str(others), "-S", "sha3", "-n", "10", "-s", "1",
                        "-x", str(tmp_path / "missing.so")],
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert f'-x "{tmp_path / "missing.so"}": ' in p.stderr
