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
    """{(study folder, generator): [outputs]}: every kernels/*/gen-*.py,
    asked for the files it writes (`--outputs`, the one list of them;
    make regen runs the same generators)."""
    out = {}
    for gen in sorted((ROOT / "kernels").glob("*/gen-*.py")):
        r = subprocess.run([sys.executable, str(gen), "--outputs"],
                           capture_output=True, text=True, check=True)
        out[gen.parent.name, gen.name] = r.stdout.split()
    return out


GENERATED = generated()


def test_every_generator_names_its_outputs():
    assert len(GENERATED) >= 4
    for (study, generator), outs in GENERATED.items():
        assert outs, f"{generator} names no output"
        for out in outs:
            assert (ROOT / "kernels" / study / out).is_file(), \
                f"{generator} names {out}, which is not in kernels/{study}"


@pytest.mark.parametrize("study,generator", sorted(GENERATED))
def test_generated_sources_are_current(tmp_path, study, generator):
    # A copy, so the generator writes beside itself and not into the tree.
    folder = ROOT / "kernels" / study
    copy = tmp_path / study
    shutil.copytree(folder, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    for out in GENERATED[study, generator]:
        (copy / out).unlink()
    subprocess.run([sys.executable, str(copy / generator)], check=True,
                   cwd=tmp_path)
    for out in GENERATED[study, generator]:
        assert (copy / out).read_bytes() == (folder / out).read_bytes(), \
            f"{out} differs from what {generator} writes: rerun it"
    # What it writes is what --outputs says: nothing else was touched.
    written = {str(p.relative_to(copy)) for p in copy.rglob("*")
               if p.is_file() and before.get(p) != p.stat().st_mtime_ns}
    assert written == set(GENERATED[study, generator])
