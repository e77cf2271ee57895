"""The sha3 study's openssl-* variants: OpenSSL's release tarball (the
unmodified 3.5.7 of shared/fixtures) fetched with libcurl from a local
HTTP server on 127.0.0.1 or taken offline with --from, its perlasm run on
the coordinator, and a run on the local host whose every openssl-*
digest is hashlib's, with the version and every file's hash recorded per
build and the generated files kept; without the source those variants are
skipped with the reason."""
import hashlib
import http.server
import os
import platform
import random
import re
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import ROOT, cpu_flags, query, seqorch, write_hosts
from lib_x86sim import Machine, Program
from refs import chain_hex
import lib_apple
import lib_kernels

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
if not (FIXTURES / "openssl").exists():
    FIXTURES = Path("/work/shared/fixtures")
FIXTURE = FIXTURES / "openssl" / "openssl-3.5.7.tar.gz"
SHA = "a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8"
X86 = ["openssl-scalar", "openssl-avx2", "openssl-avx512",
       "openssl-avx512vl", "openssl-fused", "openssl-unrolled"]
ARM = ["openssl-scalar", "openssl-sha3", "openssl-fused", "openssl-unrolled"]
STEPS = 300


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.seen.append(self.path)
        data = self.server.data
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.data = FIXTURE.read_bytes()
    srv.seen = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.base = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def env_for(server):
    e = dict(os.environ)
    for k in ("http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
              "all_proxy", "no_proxy", "NO_PROXY"):
        e.pop(k, None)
    e["SEQORCH_URL_OPENSSL"] = f"{server.base}/openssl-3.5.7.tar.gz"
    return e


def readme_hashes():
    """The fixture README's sha256 lines: {path or "tarball": hash}."""
    text = (FIXTURE.parent / "README.md").read_text()
    out = {"tarball": re.search(r"sha256\s+([0-9a-f]{64})", text).group(1)}
    for path, h in re.findall(r"^\s+(crypto/\S+)\s+([0-9a-f]{64})$", text,
                              re.M):
        out[path] = h
    return out


def test_pinned_hash_is_the_fixture_and_its_readme():
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == SHA
    assert readme_hashes()["tarball"] == SHA
    line = (Path(__file__).resolve().parent.parent / "kernels" / "sha3" /
            "artifacts").read_text()
    assert f"openssl\t{SHA}\t{FIXTURE.stat().st_size}\t" in line


@pytest.fixture(scope="module")
def run(tmp_path_factory, server, workdir):
    """fetch --study sha3 over HTTP, then one run of the openssl-*
    variants beside c-fused on the local host."""
    d = tmp_path_factory.mktemp("osslrun")
    write_hosts(d / "hosts.toml", workdir)
    e = env_for(server)
    f = seqorch(d, "fetch", "--study", "sha3", "--cache", d / "cache",
                env=e, timeout=300)
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local",
                "--cache", d / "cache", "--steps", STEPS, "--samples", "1",
                "--variants", ",".join(X86 + ["c-fused"]), env=e,
                timeout=1800)
    return d, f, r


def test_fetch_over_http_then_run_uses_the_cache(run, server):
    d, f, r = run
    assert f.returncode == 0, f.stderr
    assert "1 artifact fetched" in f.stdout
    assert (d / "cache" / SHA).exists()
    assert r.returncode == 0, r.stderr
    assert server.seen == ["/openssl-3.5.7.tar.gz"], \
        "the run used the cached tarball"


def test_every_openssl_variant_digest_is_hashlibs(run):
    d, _, r = run
    db = d / "results.db"
    want = chain_hex("sha3", STEPS)
    rows = dict(query(db, "SELECT variant, digest FROM samples "
                      "WHERE valid = 1"))
    have512 = "avx512vl" in cpu_flags()
    for v in X86 + ["c-fused"]:
        if v in ("openssl-avx512", "openssl-avx512vl", "openssl-fused",
                 "openssl-unrolled") and not have512:
            (status, reason), = query(db, "SELECT status, reason FROM "
                                      "variants WHERE variant = ?", v)
            assert status == "skipped" and "cpu lacks" in reason
            continue
        assert rows.get(v) == want, (v, r.stderr)


def test_build_records_version_and_file_hashes(run):
    d, _, _ = run
    (extra, study), = query(d / "results.db", "SELECT extra, study FROM "
                            "builds")
    facts = dict(line.split("=", 1) for line in extra.splitlines())
    assert study == "sha3"
    assert facts["openssl.version"] == "3.5.7"
    assert facts["openssl.tarball_sha256"] == SHA
    for path, h in readme_hashes().items():
        if path != "tarball":
            assert facts[f"openssl.file.{path}"] == h, path


def test_generated_sources_are_kept_and_checked(run):
    d, _, _ = run
    db = d / "results.db"
    kept = dict(query(db, "SELECT name, sha256 FROM artifact_refs WHERE "
                      "kind = 'source' AND name LIKE 'generated/openssl/%'"))
    (extra,), = query(db, "SELECT extra FROM builds")
    facts = dict(line.split("=", 1) for line in extra.splitlines())
    for name in ("keccak1600-avx512vl.elf.s", "openssl-fused-x86_64.S",
                 "openssl-unrolled-x86_64.S", "keccak1600-armv8.ios64.S"):
        assert kept[f"generated/openssl/{name}"] == \
            facts[f"openssl.generated.{name}"], name
    rows = query(db, "SELECT variant, status, present FROM disasm WHERE "
                 "variant LIKE 'openssl-%'")
    assert {v for v, *_ in rows} == set(X86)
    for v, status, present in rows:
        assert status == "ok" and not present, v


def test_without_the_source_they_are_skipped(tmp_path, workdir):
    write_hosts(tmp_path / "hosts.toml", workdir)
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--cache", tmp_path / "empty", "--steps", 30,
                "--samples", "1", timeout=1800)
    assert r.returncode == 0, r.stderr
    rows = dict(query(tmp_path / "results.db", "SELECT variant, reason "
                      "FROM variants WHERE status = 'skipped'"))
    for v in X86:
        # The hint fetches into the cache this run read (issue 32 item 2).
        assert rows.get(v) == 'source "openssl" not fetched (seqorch ' \
            f"fetch --study sha3 --cache '{tmp_path / 'empty'}')", v
    assert not (tmp_path / "empty").exists() or \
        not any((tmp_path / "empty").iterdir()), "nothing was downloaded"


def test_fetch_from_a_file(tmp_path):
    r = seqorch(tmp_path, "fetch", "--study", "sha3", "--cache",
                tmp_path / "c", "--from", FIXTURE, timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'artifact "openssl"' in r.stdout
    assert hashlib.sha256((tmp_path / "c" / SHA).read_bytes()).hexdigest() \
        == SHA


def test_report_names_the_sources_beside_the_variants(run):
    d, _, _ = run
    r = seqorch(d, "report", "--run", "1")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    head = text[text.index("upstream sources of"):]
    assert "openssl-fused" in head.split("(sha256, file)")[0]
    assert "build 1: openssl 3.5.7" in head
    for h in readme_hashes().values():
        assert h in head, h
    import json
    r = seqorch(d, "report", "--run", "1", "--format", "json")
    files = {s["file"]: s["sha256"] for s in
             json.loads(r.stdout)["runs"][0]["sources"]}
    assert files["release tarball"] == SHA
    assert files["crypto/sha/asm/keccak1600-avx512vl.pl"] == \
        readme_hashes()["crypto/sha/asm/keccak1600-avx512vl.pl"]


@pytest.fixture(scope="module")
def generated(run):
    """The sources the run's coordinator generated (cache/generated/KEY,
    its openssl/ folder), as agent/build.sh gets them as
    SEQORCH_GENERATED."""
    d, _, _ = run
    found = list((d / "cache" / "generated").glob("*/openssl/meta"))
    assert len(found) == 1, found
    return found[0].parent.parent


@pytest.mark.parametrize("variant", X86)
def test_x86_variant_in_simulation(variant, generated, tmp_path):
    """Each x86-64 openssl-* kernel.S as the host's build preprocesses it
    (the generated files on its include path), run instruction by
    instruction in tests/lib_x86sim.py: OpenSSL's SHA3_absorb over one-
    and three-block messages against hashlib, and the fused and unrolled
    chains over 1, 3 and 1 + 2 steps against refs.py.  Where the CPU has
    no AVX-512 (CI's, this Genoa VM) this is the only run the AVX-512 ones
    get; where it runs them all, the natively checked ones check the
    interpreter."""
    asm = tmp_path / "kernel.s"
    asm.write_text(subprocess.run(
        ["cc", "-E", "-P", "-x", "assembler-with-cpp", "-I",
         str(generated / "openssl"), str(ROOT / "kernels" / "sha3" /
                                         variant / "kernel.S")],
        check=True, capture_output=True, text=True).stdout)
    prog = Program(asm, preprocess=False)
    prefix = variant.replace("-", "_")
    for msg in (b"", b"abc", random.Random(5).randbytes(300)):
        m = Machine(prog)
        padded = bytearray(msg) + b"\x06" + bytes(-(len(msg) + 1) % 136)
        padded[-1] |= 0x80
        state, inp = m.alloc(bytes(200)), m.alloc(bytes(padded))
        m.call(prefix + "_absorb", state, inp, len(padded), 136)
        assert m.gpr["rax"] == 0, "absorb left bytes unread"
        assert bytes(m.mem[state:state + 32]) == \
            hashlib.sha3_256(msg).digest(), len(msg)
    chain = prefix + "_x86_chain"
    if chain not in prog.labels:
        return
    for x in (bytes(32), random.Random(6).randbytes(32)):
        for parts in ((1,), (3,), (1, 2)):
            m = Machine(prog)
            buf = m.alloc(x)
            for steps in parts:
                m.call(chain, buf, steps)
            assert bytes(m.mem[buf:buf + 32]).hex() == chain_hex(
                "sha3", sum(parts), x), parts


@pytest.fixture(scope="module")
def apple(tmp_path_factory, generated):
    """The arm64 declarations of the openssl-* variants, built from the
    generated linux64 flavour, and the disassembly check's program."""
    decl = lib_apple.declarations(tmp_path_factory.mktemp("insns"),
                                  lib_kernels.obj_cache(tmp_path_factory),
                                  generated)
    return decl, lib_apple.disasm(tmp_path_factory.mktemp("disasm"))


@pytest.mark.parametrize("variant", ARM)
def test_arm64_variant_through_apple_clang(variant, generated, apple,
                                           tmp_path):
    """The Apple M4 path: keccak1600-armv8.pl's ios64 (Mach-O) flavour and
    the fused and unrolled chains, as the coordinator generated them,
    assembled with the variant's C side by `clang -target
    arm64-apple-macos14 -Werror`, linked by lld, and the disassembly check
    on llvm-objdump's output: eor3, rax1, xar and bcax in the SHA3
    variants' function, none in the integer one."""
    decl, tool = apple
    sym, insns, forbidden = decl["sha3", variant]
    if variant == "openssl-scalar":
        assert forbidden == ["eor3", "rax1", "xar", "bcax"]
    else:
        assert insns == ["eor3", "rax1", "xar", "bcax"]
    srcs = [f"kernels/sha3/{variant}/kernel.S",
            f"kernels/sha3/{variant}/kernel.c"]
    lib = lib_apple.compile_kernel(srcs, tmp_path, generated)
    lib_apple.check_disassembly(lib, sym, insns, forbidden, tool)


OTHER = "3.5.8"


def other_release(fixture):
    """A release of OpenSSL that nothing pins: the fixture's files that
    generate.pl reads, under openssl-3.5.8/ with VERSION.dat saying so
    (small, so the download's size is not the fixture's)."""
    import io
    import tarfile
    want = {f"crypto/sha/asm/keccak1600-{a}.pl" for a in
            ("x86_64", "avx2", "avx512", "avx512vl", "armv8")}
    want |= {"crypto/perlasm/x86_64-xlate.pl", "crypto/perlasm/arm-xlate.pl",
             "crypto/arm_arch.h", "VERSION.dat"}
    out = io.BytesIO()
    with tarfile.open(fixture, "r:gz") as src, \
            tarfile.open(fileobj=out, mode="w:gz") as dst:
        for m in src:
            top, _, rest = m.name.partition("/")
            if rest not in want:
                continue
            data = src.extractfile(m).read()
            if rest == "VERSION.dat":
                data = re.sub(rb"(?m)^PATCH=\d+$", b"PATCH=8", data)
            m.name = f"openssl-{OTHER}/{rest}"
            m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(scope="module")
def other(tmp_path_factory, workdir):
    """The unpinned 3.5.8 served on 127.0.0.1 by a server of its own (the
    module's counts its requests), and a folder with a hosts.toml."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.data = other_release(FIXTURE)
    srv.seen = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.base = f"http://127.0.0.1:{srv.server_address[1]}"
    srv.sha = hashlib.sha256(srv.data).hexdigest()
    srv.dir = tmp_path_factory.mktemp("other")
    write_hosts(srv.dir / "hosts.toml", workdir)
    srv.env = env_for(srv)
    srv.env["SEQORCH_URL_OPENSSL"] = f"{srv.base}/openssl-{OTHER}.tar.gz"
    yield srv
    srv.shutdown()
    srv.server_close()


def test_a_version_not_pinned_needs_its_hash(other, tmp_path):
    """Refused before anything is fetched, by fetch, run and reproduce."""
    for cmd in (["fetch", "--study", "sha3"],
                ["run", "--study", "sha3", "--hosts", "local"],
                ["reproduce", "sha3", "--hosts", "local"]):
        r = seqorch(other.dir, *cmd, "--openssl-version", OTHER,
                    env=other.env, timeout=60)
        assert r.returncode == 2, (cmd, r.stderr)
        assert f"openssl {OTHER} has no pinned SHA-256 (only 3.5.7 has): " \
            "give --sha256 HEX" in r.stderr, cmd
    r = seqorch(other.dir, "fetch", "--study", "sha3", "--openssl-version",
                "3.5.7", "--sha256", other.sha, env=other.env, timeout=60)
    assert r.returncode == 2
    assert f"--sha256 {other.sha} is not the SHA-256 pinned for openssl " \
        f"3.5.7: {SHA}" in r.stderr
    assert other.seen == []
    assert not (other.dir / "seqorch-cache").exists()
    assert not (other.dir / "results.db").exists()


def test_a_wrong_hash_is_refused_and_nothing_kept(other, tmp_path):
    wrong = hashlib.sha256(b"not it").hexdigest()
    r = seqorch(tmp_path, "fetch", "--study", "sha3", "--cache",
                tmp_path / "c", "--openssl-version", OTHER, "--sha256",
                wrong, env=other.env, timeout=300)
    assert r.returncode == 1, r.stderr
    assert f"with SHA-256 {other.sha}, expected any size with SHA-256 " \
        f"{wrong} (download deleted)" in r.stderr
    assert list((tmp_path / "c").iterdir()) == []


def test_a_named_version_is_fetched_built_and_recorded(other):
    """fetch --openssl-version 3.5.8 --sha256 (its size pinned nowhere),
    then a run of openssl-scalar built from it: hashlib's digest, the
    build naming 3.5.8 and its hash; the same bytes named as another
    version are refused before anything is built."""
    d = other.dir
    seen = len(other.seen)
    f = seqorch(d, "fetch", "--study", "sha3", "--openssl-version", OTHER,
                "--sha256", other.sha, env=other.env, timeout=300)
    assert f.returncode == 0, f.stderr
    assert "1 artifact fetched" in f.stdout
    assert hashlib.sha256((d / "seqorch-cache" / other.sha).read_bytes()) \
        .hexdigest() == other.sha
    assert not list((d / "seqorch-cache").glob("*.part*"))
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "openssl-scalar", "--steps", 30, "--samples",
                "1", "--openssl-version", OTHER, "--sha256", other.sha,
                env=other.env, timeout=1800)
    assert r.returncode == 0, r.stderr
    assert other.seen[seen:] == [f"/openssl-{OTHER}.tar.gz"], \
        "the run used the cache"
    db = d / "results.db"
    assert query(db, "SELECT digest FROM samples WHERE valid = 1") == \
        [(chain_hex("sha3", 30),)]
    (extra,), = query(db, "SELECT extra FROM builds")
    facts = dict(line.split("=", 1) for line in extra.splitlines())
    assert facts["openssl.version"] == OTHER
    assert facts["openssl.tarball_sha256"] == other.sha
    r = seqorch(d, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "openssl-scalar", "--steps", 30, "--samples",
                "1", "--openssl-version", "3.5.9", "--sha256", other.sha,
                env=other.env, timeout=600)
    assert r.returncode == 2
    assert f"the openssl tarball of SHA-256 {other.sha} holds version " \
        f"{OTHER}, not 3.5.9" in r.stderr
    assert query(db, "SELECT COUNT(*) FROM builds") == [(1,)]


def words(mask):
    return [int(w, 16) for w in mask.split(":")]


X86_ONLY = pytest.mark.skipif(platform.machine() != "x86_64",
                              reason="x86-64 capability names")


@X86_ONLY
def test_cap_clear_clears_one_bit_and_keeps_the_rest(tmp_path, workdir):
    """AVX512F (OPENSSL_ia32cap word 1, bit 16) cleared from what this
    host's libcrypto detects: the same digest, the mask applied is the
    detected one without that bit, all three stored on every sample."""
    write_hosts(tmp_path / "hosts.toml", workdir)
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "openssl-evp,c-fused", "--steps", 30,
                "--samples", "2", "--openssl-cap-clear", "AVX512F",
                timeout=1800)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    rows = query(db, "SELECT digest, openssl_cap_detected, "
                 "openssl_cap_cleared, openssl_cap FROM samples")
    assert len(rows) == 4
    for digest, detected, cleared, applied in rows:
        assert digest == chain_hex("sha3", 30)
        assert words(cleared) == [0, 1 << 16]
        assert words(applied) == [d & ~c for d, c in
                                  zip(words(detected), words(cleared))]
    assert query(db, "SELECT openssl_cap_clear FROM runs") == \
        [("AVX512F",)]


@X86_ONLY
def test_cap_clear_refuses_a_name_of_another_arch(tmp_path, workdir):
    write_hosts(tmp_path / "hosts.toml", workdir)
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "c-fused", "--steps", 30, "--samples", "1",
                "--openssl-cap-clear", "AVX2,ARMV8_SHA512", timeout=600)
    assert r.returncode == 1
    assert '"ARMV8_SHA512" is not an OpenSSL capability of x86_64' \
        in r.stderr
    assert query(tmp_path / "results.db",
                 "SELECT COUNT(*) FROM builds") == [(0,)]
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--openssl-cap-clear", "NOSUCH", timeout=60)
    assert r.returncode == 2
    assert 'unknown OpenSSL capability "NOSUCH"' in r.stderr
