"""The generated kernel sources in the repository are exactly what their
generators write: a change to a generator that was not rerun, or a hand
edit to its output, fails here."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

# (study folder, generator): the files it writes, relative to the folder.
GENERATED = {
    ("sha3", "gen-avx512.py"): ["avx512-wrapped/kernel.S",
                                "avx512-fused/kernel.S",
                                "avx512-unrolled/kernel.S"],
    ("sha3", "gen-avx2.py"): ["keccak-avx2.h"],
    ("sha3", "gen-arm-scalar.py"): ["arm-scalar/kernel.c"],
    ("sha512", "gen-x86-rorx.py"): ["x86-rorx/kernel.S"],
}


@pytest.mark.parametrize("study,generator", sorted(GENERATED))
def test_generated_sources_are_current(tmp_path, study, generator):
    # A copy, so the generator writes beside itself and not into the tree.
    folder = ROOT / "kernels" / study
    copy = tmp_path / study
    shutil.copytree(folder, copy)
    for out in GENERATED[study, generator]:
        (copy / out).unlink()
    subprocess.run([sys.executable, str(copy / generator)], check=True,
                   cwd=tmp_path)
    for out in GENERATED[study, generator]:
        assert (copy / out).read_bytes() == (folder / out).read_bytes(), \
            f"{out} differs from what {generator} writes: rerun it"
