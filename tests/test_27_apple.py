"""The Apple M4 without a Mac (issue 21): what can be checked here.

- Every agent source is compiled for `clang -target arm64-apple-macos14`
  with -Wall -Wextra -Werror (-fsyntax-only): Debian's aarch64 C library
  headers stand in for the POSIX ones and tests/apple/include declares the
  few Apple interfaces the agent calls (tests/apple/README).  That parses
  and type-checks the __APPLE__ branches (QoS, host_processor_info,
  libproc, sysctl); it runs none of them.
- Every ARM variant's kernel.c is compiled into a Mach-O object with that
  target, disassembled by llvm-objdump (what Xcode's `objdump` is) through
  the coordinator's own command (disasm_command), and checked with its
  disasm_body/disasm_find: the declared instructions are found in Apple
  syntax under the underscored symbol, the forbidden ones are not.  The
  declarations come from the kernels themselves, built for aarch64 and
  run under qemu-aarch64 (tests/apple/insns.c).
"""
import shutil
import subprocess

import pytest

from conftest import ROOT
import lib_apple
import lib_kernels as t20


def need(tool, package):
    return t20.need(tool, package)


def apple_flags():
    return lib_apple.flags()


def agent_sources():
    return sorted(p.name for p in (ROOT / "agent").glob("*.c"))


@pytest.mark.parametrize("src", agent_sources())
def test_agent_source_compiles_for_macos(src):
    """The agent's -Werror build would stop on a Mac at the first warning
    of an __APPLE__ branch (facts.c's cpuinfo() unused there, say)."""
    cmd = ["clang", *apple_flags(),
           # POSIX headers the aarch64 glibc has for arm64 Linux; the
           # OpenSSL configuration header is the machine's own.
           "-isystem", "/usr/include", "-idirafter",
           "/usr/include/x86_64-linux-gnu",
           "-include", str(ROOT / "tests/apple/include/darwin-extra.h"),
           "-fsyntax-only", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra",
           "-Werror", "-Ikernels", "-Iagent", f"agent/{src}"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def declarations(tmp_path_factory):
    """{(study, variant): (symbol, insns, forbidden)} of every kernel an
    arm64 agent has, as the kernels declare them on aarch64."""
    return lib_apple.declarations(tmp_path_factory.mktemp("insns"),
                                  t20.obj_cache(tmp_path_factory))


@pytest.fixture(scope="module")
def disasm(tmp_path_factory):
    return lib_apple.disasm(tmp_path_factory.mktemp("disasm"))


def arm_variants():
    return [tuple(line.split("\t")[:2]) for line in
            t20.registry("manifest", "aarch64", "nolibs").splitlines()]


@pytest.mark.parametrize("study,variant", arm_variants())
def test_macho_disassembly_check(study, variant, declarations, disasm,
                                 tmp_path):
    sym, insns, forbidden = declarations[study, variant]
    if sym == "-" or not (insns or forbidden):
        pytest.skip("declares no instructions")
    src = next(f"kernels/{study}/{variant}/{k}" for k in
               ("kernel.c", "kernel.S")
               if (ROOT / "kernels" / study / variant / k).exists())
    lib = lib_apple.compile_kernel([src], tmp_path)
    lib_apple.check_disassembly(lib, sym, insns, forbidden, disasm)


def test_macho_forbidden_lane_move_is_seen(disasm, tmp_path):
    """mul32/neon forbids umov: llvm-objdump prints it "mov.s w0, v0[1]"
    on Mach-O, and a check that reads "mov" lets the chain's lane
    extraction pass unseen."""
    src = tmp_path / "lane.c"
    src.write_text("#include <arm_neon.h>\n"
                   "unsigned lane(uint32x4_t v) "
                   "{ return vgetq_lane_u32(v, 1); }\n")
    obj = tmp_path / "lane.o"
    subprocess.run(["clang", *apple_flags(), "-ffreestanding", "-O2", "-c",
                    src, "-o", obj], check=True)
    exe, path = disasm
    r = subprocess.run([exe, lib_apple.macho_link([obj], tmp_path, "lane"),
                        "lane", "umov",
                        "mov"],
                       env={"PATH": path, "LANG": "C"},
                       capture_output=True, text=True, check=True)
    assert r.stdout.splitlines()[1:] == ["umov yes", "mov yes"], r.stdout


# Answers -dumpmachine as Apple clang does; compiles with the aarch64 gcc.
# The machine's OpenSSL headers serve for the compile (the arm64 ones are
# not installed: only the two configuration headers differ, and the cross
# compiler finds those last, after its own).
APPLE_CC = """#!/bin/sh
for a; do
	if [ "$a" = -dumpmachine ]; then
		echo arm64-apple-darwin24.1.0
		exit 0
	fi
done
exec aarch64-linux-gnu-gcc -idirafter /usr/include/x86_64-linux-gnu "$@"
"""


def test_registry_names_apple_arm64_aarch64():
    assert t20.registry("arch", "arm64-apple-darwin24.1.0").strip() == \
        "aarch64"
    assert t20.registry("arch", "aarch64-linux-gnu").strip() == "aarch64"
    assert t20.registry("arch", "x86_64-pc-linux-gnu").strip() == "x86_64"


def test_build_with_apple_dumpmachine(tmp_path):
    """agent/build.sh with a compiler that calls itself arm64-apple-darwin
    compiles every ARM variant into the agent and its table, and links it
    without libcrypto (this machine has no arm64 one): the agent needs
    only libc.  It cannot run here, so its `--openssl` answer is unknown
    (the arm64 host of the integration tests runs the whole agent)."""
    need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
    cc = tmp_path / "apple-cc"
    cc.write_text(APPLE_CC)
    cc.chmod(0o755)
    out = tmp_path / "out"
    subprocess.run(["sh", "agent/build.sh", str(out), str(cc), "-O2"],
                   cwd=ROOT, capture_output=True, text=True, timeout=600)
    table = (out / "registry-table.c").read_text()
    assert "for aarch64;" in table, table[:200]
    commands = (out / "commands").read_text()
    arm = [line.split("\t") for line in
           t20.registry("manifest", "aarch64").splitlines()]
    for study, variant, arch, flags, _ in arm:
        if arch != "aarch64":
            continue
        assert f"kernel_{study}_{variant}".replace("-", "_") in table
        src = f"kernels/{study}/{variant}/kernel."
        line = next((c for c in commands.splitlines() if src in c), None)
        assert line is not None, f"{study}/{variant} not compiled"
        if flags != "-":
            assert flags in line, line
    # Every object was compiled and linked, for arm64.
    log = (out / "build.log").read_text()
    assert "-o ../seqorch-agent" in commands.splitlines()[-1]
    elf = (out / "seqorch-agent").read_bytes()[:20]
    assert elf[:4] == b"\x7fELF" and elf[18:20] == b"\xb7\x00", elf
    # What fails is only the binary run here (no arm64 libc, or no
    # binfmt at all), which build.sh says leaves builds.openssl unknown.
    agent = str(out / "seqorch-agent")
    assert [line for line in log.splitlines() if "error" in line and
            "collect2" not in line and agent not in line] == [], log[-2000:]
    assert "seqorch-agent --openssl failed" in log or \
        (out / "openssl").read_text() != "", log[-2000:]


def prebuild(*args, env=None):
    return subprocess.run(["/bin/sh", "kernels/randomx/prebuild.sh", *args],
                          cwd=ROOT, capture_output=True, text=True, env=env)


def test_randomx_links_the_cxx_runtime_of_its_compiler(tmp_path):
    """RandomX's C++ runtime is the one its compiler links: Xcode's clang
    has only libc++ (-lc++; -lstdc++ is gone since Xcode 10).  Here a
    clang++ told -stdlib=libc++ stands for it, g++ for Linux."""
    need("clang++", "clang")
    need("g++", "g++")
    libcxx = tmp_path / "clang++"
    libcxx.write_text('#!/bin/sh\nexec /usr/bin/clang++ -stdlib=libc++ '
                      '"$@"\n')
    libcxx.chmod(0o755)
    assert prebuild("--cxx-runtime", str(libcxx)).stdout == "-lc++\n"
    assert prebuild("--cxx-runtime", "g++").stdout == "-lstdc++\n"


def test_randomx_cmake_search(tmp_path):
    """cmake from PATH, else from Homebrew's directories, which a
    non-interactive SSH session's PATH lacks; the error names them."""
    r = prebuild("--cmake")
    assert r.returncode == 0 and r.stdout == shutil.which("cmake") + "\n"
    r = prebuild("--cmake", env={"PATH": str(tmp_path)})
    assert r.returncode == 1
    assert "/opt/homebrew/bin /usr/local/bin" in r.stderr, r.stderr
