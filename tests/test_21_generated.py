"""The generated kernel sources in the repository are exactly what their
generators write: a change to a generator that was not rerun, or a hand
edit to its output, fails here."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SHA3 = ROOT / "kernels" / "sha3"
GENERATED = {
    "gen-avx512.py": ["avx512-wrapped/kernel.S", "avx512-fused/kernel.S",
                      "avx512-unrolled/kernel.S"],
    "gen-avx2.py": ["keccak-avx2.h"],
    "gen-arm-scalar.py": ["arm-scalar/kernel.c"],
}


@pytest.mark.parametrize("generator", sorted(GENERATED))
def test_generated_sources_are_current(tmp_path, generator):
    # A copy, so the generator writes beside itself and not into the tree.
    copy = tmp_path / "sha3"
    shutil.copytree(SHA3, copy)
    for out in GENERATED[generator]:
        (copy / out).unlink()
    subprocess.run([sys.executable, str(copy / generator)], check=True,
                   cwd=tmp_path)
    for out in GENERATED[generator]:
        assert (copy / out).read_bytes() == (SHA3 / out).read_bytes(), \
            f"{out} differs from what {generator} writes: rerun it"
