"""The generated kernel sources in the repository are exactly what their
generators write: a change to a generator that was not rerun, or a hand
edit to its output, fails here."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


@pytest.fixture(scope="session", autouse=True)
def built():
    """Generators and their outputs only: no binary is needed, so these
    tests do not wait for conftest's `make all`."""


def generated():
    """{(study folder, generator): [outputs]} from kernels/generated.txt,
    the one list of generators (make regen reads it too)."""
    out = {}
    for line in (ROOT / "kernels" / "generated.txt").read_text() \
            .splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        gen, files = line.split(":", 1)
        study, name = gen.split("/")
        out[study, name] = files.split()
    return out


GENERATED = generated()


def test_every_generator_is_listed():
    found = {(p.parent.name, p.name)
             for p in (ROOT / "kernels").glob("*/gen-*.py")}
    assert found == set(GENERATED)


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
