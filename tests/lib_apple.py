"""The Apple M4 path without a Mac, as tests/test_27_apple.py (the agent
and its kernels) and tests/test_48_openssl.py (OpenSSL's Mach-O flavour)
check it: `clang -target arm64-apple-macos14` over Debian's aarch64 C
library headers and tests/apple/include, lld's Mach-O linker, and the
coordinator's disassembly check reading llvm-objdump (tests/apple/README)."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT
import lib_kernels

TARGET = ["-target", "arm64-apple-macos14"]
AARCH64_INCLUDE = "/usr/aarch64-linux-gnu/include"


def flags():
    """clang flags that compile for macOS here: clang's own headers, the
    declarations of tests/apple/include, then the aarch64 C library's
    (Apple clang predefines __nonnull, glibc's cdefs.h wants to)."""
    lib_kernels.need("clang", "clang")
    if not os.path.isdir(AARCH64_INCLUDE):
        pytest.fail(f"{AARCH64_INCLUDE} missing: install "
                    "libc6-dev-arm64-cross (make deps)")
    res = subprocess.run(["clang", "-print-resource-dir"], check=True,
                         capture_output=True, text=True).stdout.strip()
    return [*TARGET, "-nostdinc", "-isystem", f"{res}/include",
            "-isystem", str(ROOT / "tests/apple/include"),
            "-isystem", AARCH64_INCLUDE, "-U__nonnull"]


def declarations(out, cache, generated=None):
    """{(study, variant): (symbol, insns, forbidden)} of every kernel an
    arm64 agent has (with generated, also those built from the
    coordinator's generated sources), as the kernels declare them on
    aarch64: tests/apple/insns.c run under qemu-aarch64."""
    cc = lib_kernels.need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu "
                          "and libc6-dev-arm64-cross")
    lib_kernels.need("qemu-aarch64", "qemu-user")
    reg = (lambda *a: lib_kernels.registry(*a, generated=generated))
    table = out / "table.c"
    table.write_text(reg("agent", "aarch64", "nolibs"))
    objs = [lib_kernels.compiled(cc, reg("cflags", s).split(), s, cache)
            for s in reg("files", "aarch64", "nolibs").split()]
    exe = out / "insns"
    r = subprocess.run([cc, *lib_kernels.CFLAGS, "-static", "-o", exe,
                        "tests/apple/insns.c", table, "agent/registry.c",
                        "agent/cpu.c", *objs], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["qemu-aarch64", "-cpu", "max", exe], check=True,
                       capture_output=True, text=True)
    decl = {}
    for line in r.stdout.splitlines():
        s, v, sym, ins, forb = line.split("\t")
        split = (lambda x: [] if x == "-" else x.split(","))
        decl[s, v] = (sym, split(ins), split(forb))
    return decl


def disasm(d):
    """tests/apple/disasm.c linked with the coordinator's objects into d,
    and a PATH whose objdump is llvm-objdump, as on a Mac with Xcode:
    (program, PATH)."""
    lib_kernels.need("llvm-objdump", "llvm")
    subprocess.run(["cc", *os.environ.get("SEQORCH_TEST_CFLAGS",
                                          "").split(),
                    "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror",
                    f"-I{ROOT / 'orchestrator'}", f"-I{ROOT / 'kernels'}",
                    "-o", str(d / "disasm"), str(ROOT / "tests/apple/disasm.c"),
                    str(ROOT / "build/libseqorch.a"), "-lsqlite3", "-lcjson",
                    "-lcrypto", "-lssh2", "-lcurl", "-lpthread", "-lstdc++",
                    "-lm", "-ldl"], check=True)
    bindir = d / "bin"
    bindir.mkdir()
    (bindir / "objdump").symlink_to(shutil.which("llvm-objdump"))
    return d / "disasm", f"{bindir}:/usr/bin:/bin"


def macho_link(objs, tmp_path, name):
    """objs linked by lld as a Mach-O dylib: in an object, the first
    function shares its address with the section's ltmp0 label and
    llvm-objdump names only that; a linked image names the function, as
    in the agent a Mac links."""
    ld = lib_kernels.need("lld", "lld")
    lib = tmp_path / (name + ".dylib")
    subprocess.run([ld, "-flavor", "darwin", "-arch", "arm64",
                    "-platform_version", "macos", "14.0", "14.0", "-dylib",
                    "-undefined", "dynamic_lookup", "-o", lib, *objs],
                   check=True)
    out = subprocess.run(["file", lib], capture_output=True, text=True)
    assert "Mach-O 64-bit arm64" in out.stdout, out.stdout
    return lib


def compile_kernel(srcs, tmp_path, generated=None):
    """Each of a variant's srcs (kernel.c, kernel.S) compiled by clang for
    arm64-apple-macos14 with -Werror and its registry flags, linked into
    one Mach-O dylib."""
    objs = []
    for src in srcs:
        obj = tmp_path / (os.path.basename(src) + ".o")
        # -ffreestanding for clang's own stdint.h (Darwin's uint64_t is
        # unsigned long long, glibc's unsigned long); -fbuiltin keeps
        # the hosted code generation.
        cf = lib_kernels.registry("cflags", src, generated=generated)
        r = subprocess.run(["clang", *flags(), "-ffreestanding",
                            "-fbuiltin", "-O2", "-std=c11", "-Wall",
                            "-Wextra", "-Werror", "-Ikernels", "-Iagent",
                            *cf.split(), "-c", src, "-o", obj], cwd=ROOT,
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{src}: {r.stderr}"
        objs.append(obj)
    return macho_link(objs, tmp_path, "kernel")


def check_disassembly(lib, sym, insns, forbidden, disasm_tool):
    """The coordinator's check on lib: the declared instructions found in
    Apple syntax under the underscored symbol, the forbidden ones not."""
    exe, path = disasm_tool
    r = subprocess.run([exe, lib, sym, *insns, *forbidden],
                       env={"PATH": path, "LANG": "C"},
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # llvm-objdump, told the extensions the ARM variants use.
    assert lines[0] == "status 4", r.stdout + r.stderr
    assert "no-symbol" not in lines, f"_{sym} not in the dump"
    found = dict(line.split() for line in lines[1:])
    assert [m for m in insns if found[m] != "yes"] == [], r.stdout
    assert [m for m in forbidden if found[m] != "no"] == [], r.stdout
