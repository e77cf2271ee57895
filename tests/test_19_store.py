"""Files seqorch writes and reads beside results.db, tried as someone
who can plant files there would (docs/reliability.md, "The store and the
files it writes"): export's temporary and final names planted as
symlinks, a damaged artifact of the right size, FIFOs in artifacts/ and
as results.db, and a warm run under `ulimit -v`."""
import hashlib
import os
import tarfile

import pytest

from conftest import query, seqorch


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
    # A directory that cannot be written: the error names the file.
    ro = measured / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = seqorch(measured, "export", "--run", 1, "-o", "ro/s.json")
        if os.geteuid() != 0:
            assert r.returncode == 1 and '"ro/s.json"' in r.stderr
    finally:
        ro.chmod(0o755)
