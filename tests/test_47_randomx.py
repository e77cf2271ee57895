"""The randomx study: its upstream source fetched with libcurl from a local
HTTP server (127.0.0.1, serving the unmodified v1.1.10 tarball of
shared/fixtures), the fetch failure cases, and `seqorch run --study randomx
--hosts local` building both targetings and storing digests and phases.

The build is the slow part (CMake builds RandomX twice); it happens once
per session in the shared workdir and later runs reuse it."""
import hashlib
import http.server
import re
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import query, seqorch, write_hosts
from refs import chain_hex

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / \
    "randomx" / "RandomX-1.1.10.tar.gz"
if not FIXTURE.exists():
    FIXTURE = Path("/work/shared/fixtures/randomx/RandomX-1.1.10.tar.gz")
SHA = "051cee65700a10adef84e7946416068bc805757683378a854a1b168ec18da783"
NAME = "RandomX-1.1.10.tar.gz"


class Handler(http.server.BaseHTTPRequestHandler):
    """/ok/ serves the file (with Range), /wrong/ other bytes of the same
    size, /trunc/ cuts the first response in half, /drop/ cuts every
    response in half (and so does any path in server.cutting) until its
    path is in server.healed, /404 and /500 fail, /loop redirects to
    itself.  A request for an absolute URL is a proxy request: served
    the same."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path
        if path.startswith("http://"):
            self.server.proxied.append(path)
            path = urlsplit(path).path
        rng = self.headers.get("Range")
        self.server.seen.append((path, rng))
        if path in ("/404", "/500"):
            self.send_error(int(path[1:]))
            return
        if path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = self.server.data
        if path.startswith("/wrong/"):
            data = data[:1000] + bytes([data[1000] ^ 1]) + data[1001:]
        start = 0
        if rng and not path.startswith("/norange/"):
            m = re.fullmatch(r"bytes=(\d+)-", rng)
            start = int(m.group(1))
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range",
                             f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        cut = (path.startswith("/drop/") or path in self.server.cutting) \
            and path not in self.server.healed or \
            (path.startswith("/trunc/") and start == 0)
        if cut:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.data = FIXTURE.read_bytes()
    srv.seen = []
    srv.proxied = []
    srv.cutting = set()
    srv.healed = set()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.base = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def fetch(cwd, server, path, cache, **env):
    import os
    e = dict(os.environ)
    for k in ("http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
              "all_proxy", "no_proxy", "NO_PROXY"):
        e.pop(k, None)
    e["SEQORCH_URL_RANDOMX"] = server.base + path
    e.update(env)
    return seqorch(cwd, "fetch", "--study", "randomx", "--cache", cache,
                   env=e, timeout=120)


def cache_files(cache):
    return sorted(p.name for p in Path(cache).iterdir()) \
        if Path(cache).exists() else []


def test_fixture_is_the_declared_artifact():
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == SHA
    line = (Path(__file__).resolve().parent.parent / "kernels" / "randomx" /
            "artifacts").read_text()
    assert f"randomx\t{SHA}\t{FIXTURE.stat().st_size}\t" in line


def test_fetch_fills_the_cache_once(tmp_path, server):
    cache = tmp_path / "c"
    r = fetch(tmp_path, server, f"/ok/{NAME}", cache)
    assert r.returncode == 0, r.stderr
    assert "1 artifact fetched" in r.stdout
    assert cache_files(cache) == [SHA]
    assert hashlib.sha256((cache / SHA).read_bytes()).hexdigest() == SHA
    n = len(server.seen)
    r = fetch(tmp_path, server, f"/ok/{NAME}", cache)
    assert r.returncode == 0 and "1 already cached" in r.stdout, r.stderr
    assert len(server.seen) == n, "a cached artifact is not downloaded"


def test_wrong_checksum_names_the_url(tmp_path, server):
    cache = tmp_path / "c"
    r = fetch(tmp_path, server, f"/wrong/{NAME}", cache)
    assert r.returncode == 1
    assert f"{server.base}/wrong/{NAME}" in r.stderr
    assert f"expected 163987 bytes with SHA-256 {SHA}" in r.stderr
    assert cache_files(cache) == [], "nothing wrong stays in the cache"


@pytest.mark.parametrize("path,why", [
    ("/404", "HTTP status 404"),
    ("/500", "HTTP status 500"),
    ("/loop", "more than 5 redirects (a redirect loop?)"),
])
def test_http_failures_name_the_url(tmp_path, server, path, why):
    cache = tmp_path / "c"
    r = fetch(tmp_path, server, path, cache)
    assert r.returncode == 1, r.stderr
    assert f'fetch "{server.base}{path}": {why}' in r.stderr
    # Nothing arrived: no .part and no .part.url to resume from.
    assert cache_files(cache) == []


def test_truncated_body_resumes_with_a_range(tmp_path, server):
    cache = tmp_path / "c"
    r = fetch(tmp_path, server, f"/trunc/{NAME}", cache)
    assert r.returncode == 0, r.stderr
    ranges = [rng for p, rng in server.seen if p == f"/trunc/{NAME}"]
    assert ranges[-2:] == [None, f"bytes={163987 // 2}-"], ranges
    assert cache_files(cache) == [SHA]


def test_dropped_connection_keeps_only_the_partial(tmp_path, server):
    cache = tmp_path / "c"
    url = f"/drop/{NAME}"
    r = fetch(tmp_path, server, url, cache)
    assert r.returncode == 1
    assert f'fetch "{server.base}{url}": connection dropped' in \
        r.stderr, r.stderr
    # Never in the cache under its hash; the partial file is kept, with
    # the URL its bytes came from ...
    assert cache_files(cache) == [f"{SHA}.part", f"{SHA}.part.url"]
    assert (cache / f"{SHA}.part.url").read_text() == server.base + url
    # ... and the next fetch from that URL continues it where it stopped.
    have = (cache / f"{SHA}.part").stat().st_size
    assert 0 < have < 163987
    server.healed.add(url)
    try:
        r = fetch(tmp_path, server, url, cache)
    finally:
        server.healed.discard(url)
    assert r.returncode == 0, r.stderr
    assert server.seen[-1] == (url, f"bytes={have}-")
    assert cache_files(cache) == [SHA]


def test_a_partial_from_another_url_is_never_resumed(tmp_path, server):
    """A mirror that truncates leaves a .part; an honest URL must not
    continue it (the mixed file fails its hash and the honest URL was
    blamed): it starts over."""
    cache = tmp_path / "c"
    r = fetch(tmp_path, server, f"/drop/{NAME}", cache)
    assert r.returncode == 1 and (cache / f"{SHA}.part").stat().st_size > 0
    # Bytes the bad mirror sent, planted where the honest one's would go.
    part = cache / f"{SHA}.part"
    part.write_bytes(b"\0" * part.stat().st_size)
    n = len(server.seen)
    r = fetch(tmp_path, server, f"/ok/{NAME}", cache)
    assert r.returncode == 0, r.stderr
    assert server.seen[n:] == [(f"/ok/{NAME}", None)]
    assert cache_files(cache) == [SHA]
    # A .part of unknown origin (no .url beside it) starts over too.
    (cache / SHA).unlink()
    part.write_bytes(b"\0" * 1000)
    n = len(server.seen)
    r = fetch(tmp_path, server, f"/ok/{NAME}", cache)
    assert r.returncode == 0, r.stderr
    assert server.seen[n:] == [(f"/ok/{NAME}", None)]


def test_server_without_ranges_starts_over(tmp_path, server):
    cache = tmp_path / "c"
    url = f"/norange/{NAME}"
    server.cutting.add(url)
    try:
        r = fetch(tmp_path, server, url, cache)
    finally:
        server.cutting.discard(url)
    assert r.returncode == 1 and f"{SHA}.part" in cache_files(cache)
    n = len(server.seen)
    r = fetch(tmp_path, server, url, cache)
    assert r.returncode == 0, r.stderr
    seen = [rng for p, rng in server.seen[n:] if p == url]
    assert seen[0] is not None and seen[-1] is None, seen
    assert cache_files(cache) == [SHA]


def test_proxy_from_the_environment(tmp_path, server):
    cache = tmp_path / "c"
    url = f"http://randomx.example/ok/{NAME}"
    r = fetch(tmp_path, server, "", cache, SEQORCH_URL_RANDOMX=url,
              http_proxy=server.base)
    assert r.returncode == 0, r.stderr
    assert server.proxied[-1] == url
    assert cache_files(cache) == [SHA]


def test_cache_key_in_hosts_toml(tmp_path, server, workdir):
    write_hosts(tmp_path / "hosts.toml", workdir,
                extra=f'\n[defaults]\ncache = "{tmp_path}/conf-cache"\n')
    r = fetch(tmp_path, server, f"/ok/{NAME}", tmp_path / "x")
    assert r.returncode == 0 and cache_files(tmp_path / "x") == [SHA]
    import os
    e = dict(os.environ, SEQORCH_URL_RANDOMX=f"{server.base}/ok/{NAME}")
    r = seqorch(tmp_path, "fetch", "--study", "randomx", env=e)
    assert r.returncode == 0, r.stderr
    assert cache_files(tmp_path / "conf-cache") == [SHA]
    (tmp_path / "hosts.toml").write_text(
        '[hosts.a]\ntransport = "local"\ncache = "/tmp"\n')
    r = seqorch(tmp_path, "fetch", "--study", "randomx", env=e)
    assert r.returncode == 2
    assert 'key "cache" belongs in [defaults]' in r.stderr


STEPS = 2


@pytest.fixture(scope="module")
def run(tmp_path_factory, server, workdir):
    """One run of the study on the local host: light mode and the host's
    librandomx, default and native targeting."""
    import os
    d = tmp_path_factory.mktemp("rxrun")
    write_hosts(d / "hosts.toml", workdir)
    e = dict(os.environ, SEQORCH_URL_RANDOMX=f"{server.base}/ok/{NAME}")
    r = seqorch(d, "run", "--study", "randomx", "--hosts", "local",
                "--steps", STEPS, "--samples", "2", "--variants",
                "light,system", env=e, timeout=1800)
    return d, r


def test_run_builds_both_targetings(run):
    d, r = run
    assert r.returncode == 0, r.stderr
    db = d / "results.db"
    rows = query(db, "SELECT targeting, study, status, source_sha256, "
                 "binary_sha256, native, extra FROM builds ORDER BY id")
    assert [t for t, *_ in rows] == ["default", "native"]
    bins = set()
    for t, study, status, src, binsum, native, extra in rows:
        assert study == "randomx" and status == "ok"
        assert len(src) == 64 and len(binsum) == 64
        bins.add(binsum)
        facts = dict(line.split("=", 1) for line in extra.splitlines())
        assert facts["randomx_source_sha256"] == SHA
        assert facts["randomx_arch"] == t
        assert len(facts["librandomx_sha256"]) == 64
        assert facts["cmake"].startswith("cmake version")
        assert facts["system_librandomx"].startswith("1.1.10")
        if t == "native":
            assert "-march=" in native
    assert len(bins) == 2, "native and default are different binaries"
    (commands,), = query(db, "SELECT commands FROM builds WHERE "
                         "targeting = 'native'")
    assert "-DARCH=native" in commands and "-march=native" in commands


def test_run_digests_agree_with_the_reference(run):
    d, r = run
    db = d / "results.db"
    want = chain_hex("randomx", STEPS)
    rows = query(db, "SELECT s.variant, b.targeting, s.digest, s.valid "
                 "FROM samples s JOIN builds b ON b.id = s.build_id")
    assert len(rows) == 2 * 2 * 2
    assert {(v, t) for v, t, *_ in rows} == {
        ("light", "default"), ("light", "native"), ("system", "default"),
        ("system", "native")}
    for v, t, digest, valid in rows:
        assert digest == want and valid == 1, (v, t)
    (ref, method), = query(db, "SELECT digest, method FROM refs WHERE "
                           "study = 'randomx' AND steps = ?", STEPS)
    assert ref == want and "librandomx" in method


def test_run_stores_phase_shares_that_add_up(run):
    d, r = run
    db = d / "results.db"
    rows = query(db, "SELECT s.id, s.variant, s.ns, m.name, m.value FROM "
                 "samples s JOIN sample_metrics m ON m.sample_id = s.id")
    by = {}
    for sid, v, ns, name, value in rows:
        assert v == "light", "the host's library has no phase hook"
        by.setdefault((sid, ns), {})[name] = value
    assert len(by) == 4
    for (sid, ns), m in by.items():
        assert set(m) == {"phase_proggen", "phase_compile", "phase_execute",
                          "phase_mprotect", "phase_other"}
        assert abs(sum(m.values()) - ns) <= 1e-6 * ns
        assert m["phase_execute"] > 0.5 * ns
        assert all(m[k] > 0 for k in m), m


def test_report_shows_rates_ratios_and_phases(run):
    d, r = run
    rep = seqorch(d, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    out = rep.stdout
    assert "rates per build" in out and "native / default targeting" in out
    assert "phase shares of hashing time" in out
    line = next(ln for ln in out.splitlines()
                if re.match(r"\s+local\s+\d+\s+native\s+light", ln))
    shares = [float(x) for x in re.findall(r"([\d.]+)%", line)]
    assert len(shares) == 6 and abs(sum(shares[:5]) - 100) < 0.1
    assert abs(shares[5] - 100) < 0.01


def test_targetings_alternate_in_one_order(run):
    """The two targetings are one conductor's builds: their samples
    alternate in the host's order (from results.db), in one window."""
    d, r = run
    db = d / "results.db"
    rows = query(db, "SELECT s.host_position, b.targeting, s.variant, "
                 "s.sample_index FROM samples s JOIN builds b ON "
                 "b.id = s.build_id ORDER BY s.host_position")
    assert [p for p, *_ in rows] == list(range(8))
    switches = sum(1 for a, b in zip(rows, rows[1:]) if a[1] != b[1])
    assert switches >= 5, rows
    for p, t, v, i in rows:
        assert p // 4 == i
    assert query(db, "SELECT count(*) FROM windows") == [(1,)]


def test_report_gives_native_over_default_paired(run):
    d, r = run
    out = seqorch(d, "report", "--latest").stdout
    assert "builds against their host's baseline, paired" in out, out
    for v in ("light", "system (control)"):
        line = next(ln for ln in out.splitlines()
                    if re.match(rf"\s+local\s+{re.escape(v)}\s+cc, native"
                                rf"\s+cc, default\s+2\s", ln))
        assert re.search(r"\d\.\d{3}x\s+\[\d\.\d{3}, \d\.\d{3}\]", line), \
            line


def test_hosts_check_reports_a_missing_cmake(tmp_path, workdir):
    """The study's probe runs on the host: without cmake on the PATH (a
    copy of /usr/bin without it) randomx cannot build, sha3 still can."""
    import os
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for f in Path("/usr/bin").iterdir():
        if f.name != "cmake":
            (bindir / f.name).symlink_to(f)
    write_hosts(tmp_path / "hosts.toml", workdir)
    env = dict(os.environ, PATH=str(bindir))
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "local", env=env)
    # sha3 needs no probe of its own: only the compiler line speaks for it
    assert "; cflags ok" in r.stdout, r.stdout + r.stderr
    assert "study     sha3" not in r.stdout, r.stdout
    # only what is missing, and the host still passes: sha3 can run
    assert "study     randomx with cc: cannot build, missing cmake " \
        "(Debian: cmake)\n" in r.stdout, r.stdout
    assert "C++" not in r.stdout
    assert "  missing   nothing\n" in r.stdout
    assert r.returncode == 0, r.stderr
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "local")
    assert "study     randomx with cc: ok" in r.stdout, r.stdout
