"""The emulated arm64 Linux host of tests/test_70_arm64.py (make test-arm64).

tests/arm64/build-host.sh builds a Debian bookworm arm64 rootfs once into
a cache directory (SEQORCH_ARM64_CACHE, default /var/cache/seqorch-arm64)
and registers qemu-aarch64-static -cpu max as the interpreter of aarch64
ELF files; arm_sshd() starts this machine's own sshd chrooted into an
overlay of that rootfs on a 127.0.0.X address (tests/sshd.py, chroot=).
Everything the coordinator runs on that host (sh, the compiler, the agent)
is then an aarch64 program, emulated; timing means nothing there, digests
and facts do.  Needs root, mmdebstrap and qemu-user-static (make
deps-arm64).
"""
import os
import subprocess
from pathlib import Path

import pytest

from sshd import Sshd

ROOT = Path(__file__).resolve().parent.parent
BUILD_HOST = ROOT / "tests" / "arm64" / "build-host.sh"
CACHE = Path(os.environ.get("SEQORCH_ARM64_CACHE",
                            "/var/cache/seqorch-arm64"))


def rootfs():
    """The rootfs, built by tests/arm64/build-host.sh unless cached."""
    if os.geteuid() != 0:
        pytest.fail("the arm64 host needs root (mmdebstrap, binfmt_misc, "
                    "a chrooted sshd)")
    r = subprocess.run(["sh", str(BUILD_HOST), str(CACHE)],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        pytest.fail(f"{BUILD_HOST} failed (make deps-arm64 installs what "
                    f"it needs):\n{r.stderr}")
    return Path(r.stdout.strip().splitlines()[-1])


def arm_sshd(base, name, user_key, files=None):
    """A started sshd whose sessions run in the arm64 rootfs; files maps
    a path in that rootfs to the text of an executable put there (in the
    overlay's upper layer, before it is mounted)."""
    s = Sshd(base, name, user_key, chroot=rootfs())
    for path, text in (files or {}).items():
        f = s.dir / "upper" / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        f.chmod(0o755)
    return s.start()
