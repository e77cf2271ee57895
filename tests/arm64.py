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
import pwd
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from sshd import Sshd, test_user

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


def whiteout(root, upper, package):
    """Remove the files of an installed Debian package of root from the
    overlay whose upper layer is upper: a whiteout (a 0/0 character
    device) for each, its directories kept, each path taken through
    root's own symlinks (/lib is usr/lib) so that none is shadowed."""
    info = root / "var/lib/dpkg/info"
    # Multi-Arch: same packages' lists carry the architecture.
    listing = info / f"{package}:arm64.list"
    if not listing.exists():
        listing = info / f"{package}.list"
    for line in listing.read_text().splitlines():
        p = root / line.lstrip("/")
        if not os.path.lexists(p) or (p.is_dir() and not p.is_symlink()):
            continue
        real = Path(os.path.realpath(p.parent)) / p.name
        if not real.is_relative_to(root):
            continue
        w = upper / real.relative_to(root)
        w.parent.mkdir(parents=True, exist_ok=True)
        os.mknod(w, stat.S_IFCHR | 0o600, os.makedev(0, 0))


def home_dir(server):
    """The user's home in a chroot server's overlay's upper layer."""
    _, uid, _ = test_user()
    return server.dir / "upper" / pwd.getpwuid(uid).pw_dir.lstrip("/")


def arm_sshd(base, name, user_key, files=None, without=(), builds=None):
    """A started sshd whose sessions run in the arm64 rootfs; files maps
    a path in that rootfs to the text of an executable put there, and the
    files of the Debian packages in without are removed (both in the
    overlay's upper layer, before it is mounted: the rootfs is shared).
    builds, another such server, gives the agent builds it has in its
    workdir to this one's (their objects left out, as conftest.seed_build
    does), and its compiler cache (build-host.sh's ccache): a deploy with
    the same compiler and flags finds them built."""
    root = rootfs()
    s = Sshd(base, name, user_key, chroot=root)
    for package in without:
        whiteout(root, s.dir / "upper", package)
    for path, text in (files or {}).items():
        f = s.dir / "upper" / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        f.chmod(0o755)
    if builds is not None:
        home = home_dir(s)
        for part in ("work/build", ".cache/ccache"):
            if (home_dir(builds) / part).is_dir():
                shutil.copytree(home_dir(builds) / part, home / part,
                                symlinks=True,
                                ignore=shutil.ignore_patterns("obj"))
        _, uid, gid = test_user()
        for d, dirs, names in os.walk(home):
            for n in [d, *(os.path.join(d, x) for x in dirs + names)]:
                os.lchown(n, uid, gid)
    return s.start()
