"""The report of a real 3-host run in every format, export and compare.

Three sshd hosts on 127.0.0.X (tests/sshd.py) measure two variants; the
run is made twice.  Every figure the report prints is recomputed here by
hand from the samples table (Python's statistics on steps * 1e9 / ns) and
must agree in text, markdown, csv, json and html.  summary.json (seqorch
export) is validated against docs/summary.schema.json with Debian's
python3-jsonschema.  compare is checked against hand-computed changes and
geometric mean, on the real second run and on a copy of the database
whose second run is made three times slower (the gate must fire) or has
other steps (cells must be refused).  The HTML page is rendered by
headless Chromium: no console message at all, one bar per measured cell,
and non-blank pixels in every chart of the screenshot."""
import copy
import csv
import html.parser
import io
import json
import math
import re
import shutil
import sqlite3
import statistics
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, SEQORCH, cpuinfo_signature, sha3_chain
from sshd import Sshd, keygen, write_hosts_toml

STEPS, SAMPLES = 20000, 3
VARIANTS = ("c-fused", "openssl-evp")
HOSTS = ("genoa", "graviton", "m4")
CHROMIUM = shutil.which("chromium")
HYPERFINE = shutil.which("hyperfine")
CHART_BG = (0xee, 0xf2, 0xf8)
PALETTE = [(0x1f, 0x77, 0xb4), (0x94, 0x67, 0xbd), (0x8c, 0x56, 0x4b)]


def sq(cwd, *args, check=True):
    p = subprocess.run([str(SEQORCH), *map(str, args)], cwd=cwd,
                       capture_output=True, text=True, timeout=600,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(cwd),
                            "LANG": "C"})
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def site(tmp_path_factory, agent_build):
    """Two runs of 3 hosts x 2 variants x 3 samples; yields the dir.  The
    hosts start with the session's agent build (sshd.py)."""
    tmp = tmp_path_factory.mktemp("report3")
    key = tmp / "id_ed25519"
    keygen(key, "seqorch-user")
    # The servers' directories must be reachable by the test user.
    base = Path(tempfile.mkdtemp(prefix="seqorch-sshd-"))
    base.chmod(0o755)
    servers = [Sshd(base, n, key, agent_build=agent_build).start()
               for n in HOSTS]
    try:
        write_hosts_toml(tmp / "hosts.toml", {
            s.name: s.host_entry(cpu=i % 2) for i, s in enumerate(servers)})
        for _ in range(2):
            sq(tmp, "run", "--study", "sha3", "--hosts", "all",
               "--variants", ",".join(VARIANTS), "--steps", STEPS,
               "--samples", SAMPLES)
        yield tmp
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(base, ignore_errors=True)


def fmt_rate(r):
    """report_format_rate: four significant digits and an SI suffix."""
    if not r > 0:
        return "-"
    i = 0
    while r >= 999.95 and i < 4:
        r /= 1000
        i += 1
    d = 3 if r < 9.9995 else 2 if r < 99.995 else 1
    return f"{r:.{d}f}" + ["", "k", "M", "G", "T"][i]


def hand(db, run):
    """Per cell (variant, host): sorted rates, median, quartiles, cv; the
    best per host and the ratios of best medians, faster first."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT variant, host, steps, ns, valid FROM samples"
                       " WHERE run_id = ?", (run,)).fetchall()
    con.close()
    cells = {}
    for v, h, steps, ns, valid in rows:
        assert valid == 1
        cells.setdefault((v, h), []).append(steps * 1e9 / ns)
    out = {}
    for k, rates in cells.items():
        rates.sort()
        q1, _, q3 = statistics.quantiles(rates, n=4, method="inclusive")
        out[k] = {"rates": rates, "median": statistics.median(rates),
                  "q1": q1, "q3": q3,
                  "cv": statistics.stdev(rates) / statistics.mean(rates)}
    best = {}
    for (v, h), c in out.items():
        if h not in best or c["median"] > out[(best[h], h)]["median"]:
            best[h] = v
    ranked = sorted(best, key=lambda h: -out[(best[h], h)]["median"])
    ratios = [(a, b, out[(best[a], a)]["median"] / out[(best[b], b)]["median"])
              for i, a in enumerate(ranked) for b in ranked[i + 1:]]
    return out, best, ratios


def test_samples_are_real(site):
    db = site / "results.db"
    con = sqlite3.connect(db)
    digests = {d for (d,) in con.execute("SELECT digest FROM samples")}
    n = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    con.close()
    assert digests == {sha3_chain(STEPS)}
    assert n == 2 * len(HOSTS) * len(VARIANTS) * SAMPLES


def test_text(site):
    cells, best, ratios = hand(site / "results.db", 1)
    out = sq(site, "report", "--run", 1).stdout
    table = out.split("hashes/s over the n valid samples", 1)[1]
    table = table.split("\n\n", 1)[0]
    variant = None
    seen = 0
    for line in table.splitlines()[2:]:
        f = line.split()
        if f[0] in VARIANTS:
            variant = f.pop(0)
        host, median = f[0], f[1]
        assert median == fmt_rate(cells[(variant, host)]["median"]), line
        seen += 1
    assert seen == len(cells)
    spread = out.split("spread per cell", 1)[1].split("\n\n", 1)[0]
    for (v, h), c in cells.items():
        assert re.search(rf"^  {v}\s+{h}\s+{re.escape(fmt_rate(c['q1']))}"
                         rf"\s+{re.escape(fmt_rate(c['median']))}\s+"
                         rf"{re.escape(fmt_rate(c['q3']))}\s+"
                         rf"{100 * c['cv']:.2f}%\s+\d+ MHz \(samples\)$",
                         spread, re.M), (v, h, spread)
    for h, v in best.items():
        assert re.search(rf"^  {h}\s+{v}\s+"
                         rf"{re.escape(fmt_rate(cells[(v, h)]['median']))}",
                         out.split("best valid variant per host")[1],
                         re.M), out
    for a, b, r in ratios:
        m = re.search(rf"^  {a} / {b} = (\d+\.\d\d)x  \[(\S+), (\S+)\]  "
                      r"(faster|slower|not distinguishable at this "
                      r"precision)(; doubtful: \S+)?(; control: \S+)?$", out,
                      re.M)
        assert m, out
        assert m.group(1) == f"{r:.2f}"
        lo, hi = float(m.group(2)), float(m.group(3))
        assert lo <= r + 5e-4 and r - 5e-4 <= hi
        # n = 3 a side: the interval reaches the extremes of the samples.
        ra = cells[(best[a], a)]["rates"]
        rb = cells[(best[b], b)]["rates"]
        assert lo == pytest.approx(ra[0] / rb[-1], abs=6e-4)
        assert hi == pytest.approx(ra[-1] / rb[0], abs=6e-4)
        # Apart, it is "faster" when the t-test backs it, else the line
        # under the ratios says why not.
        if ra[0] > rb[-1] and m.group(4) != "faster":
            # One such ratio, or several ("no verdict for 2 ratios whose
            # interval leaves out 1: the t-test's p is over 5%").
            assert re.search(r"no verdict (where the|for \d+ ratios whose)"
                             r" interval leaves out 1: the t-test",
                             " ".join(out.split())), out
        else:
            assert m.group(4) == ("faster" if ra[0] > rb[-1] else
                                  "not distinguishable at this precision")
    # The host's clock and the cycles agree: cycles / ns per hash = clock.
    assert "position bias:" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_markdown(site):
    cells, best, ratios = hand(site / "results.db", 1)
    out = sq(site, "report", "--run", 1, "--format", "markdown").stdout
    for (v, h), c in cells.items():
        row = (f"| {v} | cc | {h} | {fmt_rate(c['median'])} | "
               f"{fmt_rate(c['q1'])} | {fmt_rate(c['q3'])} | "
               f"{fmt_rate(c['rates'][0])} | {fmt_rate(c['rates'][-1])} | "
               f"{100 * c['cv']:.2f}% | {SAMPLES} | ")
        assert row in out, (row, out)
    for a, b, r in ratios:
        assert f"| {a} | {b} | {r:.3f}x | [" in out
    # Every table row has as many cells as its header.
    for block in re.findall(r"((?:^\|.*\n)+)", out, re.M):
        widths = {len(re.split(r"(?<!\\)\|", line)) for line in
                  block.splitlines()}
        assert len(widths) == 1, block


def test_json(site):
    cells, best, ratios = hand(site / "results.db", 1)
    doc = json.loads(sq(site, "report", "--run", 1, "--format",
                        "json").stdout)
    assert (doc["format"], doc["schema_version"]) == ("seqorch-report", 4)
    run = doc["runs"][0]
    assert run["unit"] == "hash" and run["unit_plural"] == "hashes"
    assert len(run["cells"]) == len(cells)
    for row in run["cells"]:
        c = cells[(row["variant"], row["host"])]
        assert row["median_rate"] == pytest.approx(c["median"], rel=1e-12)
        assert row["q1_rate"] == pytest.approx(c["q1"], rel=1e-12)
        assert row["q3_rate"] == pytest.approx(c["q3"], rel=1e-12)
        assert row["cv_pct"] == pytest.approx(100 * c["cv"], rel=1e-9)
        # One clock per cell: cycles are clock x ns, from calibration.
        assert row["clock_source"] == "samples"
        assert row["cycles_source"] == "calibration"
        assert row["cycles_per_step"] == pytest.approx(
            row["clock_mhz"] * 1e-3 * row["ns_per_step"], rel=1e-12)
    assert {b["host"]: b["variant"] for b in run["best"]} == best
    got = [(x["a"], x["b"], x["ratio"]) for x in run["ratios"]]
    assert [g[:2] for g in got] == [r[:2] for r in ratios]
    for g, r in zip(got, ratios):
        assert g[2] == pytest.approx(r[2], rel=1e-12)
    for h in run["hosts"]:
        assert h["clock_source"] == "samples" and h["clock_mhz"] > 0
        assert h["cpu_model"] and h["arch"]
        assert h["cpu_signature"] == cpuinfo_signature()
    # The builds are summary.json's objects (one function makes both):
    # compiler metadata, target, and source and binary hashes.
    con = sqlite3.connect(site / "results.db")
    want = {i: (t, s, b, o) for i, t, s, b, o in con.execute(
        "SELECT id, target, source_sha256, binary_sha256, openssl"
        " FROM builds WHERE run_id = 1")}
    con.close()
    assert {b["id"]: (b["target"], b["source_sha256"], b["binary_sha256"],
                      b["openssl"]) for b in run["builds"]} == want
    assert all(re.fullmatch(r"[0-9a-f]{64}", b["binary_sha256"])
               for b in run["builds"])
    # One schema (issue 32 item 5): summary.json's hosts and cells are the
    # report's, the same names for the same values; the report adds
    # members, summary.json only the samples (steps, ns).
    export = json.loads(sq(site, "export", "--run", 1).stdout)
    assert export["schema_version"] == doc["schema_version"]
    assert run["builds"] == export["builds"]
    for key, extra in (("hosts", set()), ("cells", {"steps", "ns"})):
        assert len(run[key]) == len(export[key])
        for r, e in zip(run[key], export[key]):
            assert set(e) - extra <= set(r), (key, set(e) - set(r))
            assert {k: r[k] for k in set(e) - extra} == \
                {k: v for k, v in e.items() if k not in extra}


def significant(s):
    """The significant digits of a decimal number written as s."""
    digits = s.lower().split("e")[0].lstrip("-").replace(".", "")
    return digits.strip("0") or "0"


def test_csv(site):
    cells, _, _ = hand(site / "results.db", 1)
    out = sq(site, "report", "--run", 1, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    con = sqlite3.connect(site / "results.db")
    cols = [r[1] for r in con.execute("PRAGMA table_info(samples)")]
    n = con.execute("SELECT count(*) FROM samples WHERE run_id = 1"
                    ).fetchone()[0]
    con.close()
    # Every column of the table, one row per sample; no warmup column, as
    # the report has no --warmup samples (test_59's test_warmup).
    assert set(cols) - {"run_id", "warmup"} <= set(rows[0])
    assert "run_id" in rows[0] and "warmup" not in rows[0]
    assert len(rows) == n
    by = {}
    for r in rows:
        # Each rate and ns/step is the double the report computes, in the
        # fewest digits that read back as it: as many as Python's repr.
        steps, ns = int(r["steps"]), int(r["ns"])
        for field, v in (("rate", steps * 1e9 / ns), ("ns_per_step",
                                                      ns / steps)):
            assert float(r[field]) == v and "e" not in r[field]
            assert significant(r[field]) == significant(repr(v)), \
                (field, r[field], repr(v))
        by.setdefault((r["variant"], r["host"]), []).append(
            float(r["rate"]))
    for k, rates in by.items():
        assert statistics.median(rates) == pytest.approx(
            cells[k]["median"], rel=1e-12)


class Page(html.parser.HTMLParser):
    """Charts, their bars (with titles) and table cells of a page."""

    def __init__(self):
        super().__init__()
        self.charts, self.cells, self.fetches = [], [], []
        self._title = None
        self._td = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.fetches.append(a[k])
        if tag == "figure":
            self.charts.append({"kind": a.get("data-chart"), "bars": []})
        if tag == "rect" and a.get("class") == "bar":
            self.charts[-1]["bars"].append("")
            self._title = True
        if tag == "td":
            self._td = ""

    def handle_data(self, data):
        if self._title is True and self.charts and self.charts[-1]["bars"]:
            self.charts[-1]["bars"][-1] += data
        if self._td is not None:
            self._td += data

    def handle_endtag(self, tag):
        if tag == "title":
            self._title = None
        if tag == "td" and self._td is not None:
            self.cells.append(self._td)
            self._td = None


def approx(v, u):
    """v to the place of u's second significant digit, as seqorch writes
    a number of the per-cell CSV; exactly (repr) without an interval."""
    if not u > 0:
        return repr(v)
    place = math.floor(math.log10(u)) - 1
    if place < 0:
        return f"{v:.{-place}f}"
    return f"{math.floor(v / 10 ** place + 0.5) * 10 ** place:.0f}"


def test_csv_per_cell(site):
    """One row per cell, units in the column names, each number to the
    precision of its interval.  With 3 samples the median's 95% bootstrap
    interval is the range (a resample's median is the smallest sample
    with probability 7/27), so it is known here without resampling."""
    cells, _, _ = hand(site / "results.db", 1)
    out = sq(site, "report", "--run", 1, "--format", "csv", "--per",
             "cell").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0])[9:] == [
        "median_hashes_per_s", "median_lo95_hashes_per_s",
        "median_hi95_hashes_per_s", "mean_hashes_per_s", "q1_hashes_per_s",
        "q3_hashes_per_s", "min_hashes_per_s", "max_hashes_per_s", "cv_pct",
        "ns_per_hash", "cycles_per_hash", "cycles_source", "clock_mhz",
        "digest", "imported"]
    assert len(rows) == len(cells)
    for r in rows:
        c = cells[(r["variant"], r["host"])]
        rates = c["rates"]
        u = (rates[-1] - rates[0]) / 2
        assert (r["unit"], r["n"], r["digest"]) == ("hash", "3", "ok")
        assert r["median_hashes_per_s"] == approx(c["median"], u), r
        assert r["median_lo95_hashes_per_s"] == approx(rates[0], u)
        assert r["median_hi95_hashes_per_s"] == approx(rates[-1], u)
        assert r["q1_hashes_per_s"] == approx(c["q1"], u)
        cv = 100 * c["cv"]
        assert r["cv_pct"] == approx(cv, cv / math.sqrt(2 * 2))
        ns = 1e9 / c["median"]
        assert r["ns_per_hash"] == approx(ns, ns * u / c["median"])
        assert r["cycles_source"] == "calibration"
    # -o takes csv from the name; --per belongs to csv alone.
    sq(site, "report", "--run", 1, "--per", "cell", "-o", site / "c.csv")
    assert (site / "c.csv").read_text() == out
    p = sq(site, "report", "--run", 1, "--per", "cell", check=False)
    assert p.returncode == 2 and '"--per" goes with "--format csv"' in \
        p.stderr


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB(A) PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and inter == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            ul = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + left) & 255
            elif f == 2:
                line[i] = (line[i] + up) & 255
            elif f == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif f == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc \
                    else ul
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def chromium(page, png, width=1000, height=4000):
    """Render page headless; returns the console messages Chromium logged."""
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
         f"--window-size={width},{height}", f"--screenshot={png}",
         page.as_uri()], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(page.parent)})
    assert p.returncode == 0, p.stderr
    assert Path(png).exists(), p.stderr
    return [line for line in p.stderr.splitlines() if "CONSOLE" in line]


def chart_bands(rows):
    """Vertical spans where most of a row is the charts' background."""
    bands, start = [], None
    for y, row in enumerate(rows):
        on = sum(px == CHART_BG for px in row) > len(row) * 0.1
        if on and start is None:
            start = y
        if not on and start is not None:
            bands.append((start, y))
            start = None
    return [b for b in bands if b[1] - b[0] > 20]


def test_html_in_chromium(site):
    assert CHROMIUM, "Debian chromium is missing (make deps installs it)"
    cells, best, ratios = hand(site / "results.db", 1)
    page = site / "report.html"
    sq(site, "report", "--run", 1, "--format", "html", "-o", page)
    text = page.read_text()
    parsed = Page()
    parsed.feed(text)
    assert parsed.fetches == []        # self-contained
    kinds = [c["kind"] for c in parsed.charts]
    assert kinds == ["cells", "vs-best", "ratios"]
    bars = parsed.charts[0]["bars"]
    assert len(bars) == len(cells)     # one bar per measured cell
    for (v, h), c in cells.items():
        assert f"{v} on {h}: median {fmt_rate(c['median'])}, n {SAMPLES}" \
            in bars
    for a, b, r in ratios:
        assert f"{r:.3f}x" in parsed.cells
    assert 'content="width=device-width' in text and "@media print" in text

    readable_on_a_phone(text, cells, best)

    png = site / "report.png"
    assert chromium(page, png, 1280) == []   # not one console message
    w, h, rows = png_pixels(png)
    bands = chart_bands(rows)
    assert len(bands) == 3, bands   # cells, vs-best, ratios
    for top, bottom in bands:
        ink = sum(px != CHART_BG and px != (255, 255, 255)
                  for row in rows[top:bottom] for px in row)
        assert ink > 0.02 * w * (bottom - top), (top, bottom, ink)
    # The bars: each host's colour fills part of the cells chart.
    top, bottom = bands[0]
    for colour in PALETTE[:len(HOSTS)]:
        assert sum(px == colour for row in rows[top:bottom]
                   for px in row) > 200, colour

    # On a phone's width the charts still render, and the page prints;
    # both widths are kept in build/ to be looked at (issue 32 item 21).
    shutil.copy(png, ROOT / "build" / "report-1280.png")
    assert chromium(page, site / "phone.png", 390, 3000) == []
    shutil.copy(site / "phone.png", ROOT / "build" / "report-390.png")
    assert len(chart_bands(png_pixels(site / "phone.png")[2])) == 3
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         f"--print-to-pdf={site / 'report.pdf'}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(site)})
    assert p.returncode == 0, p.stderr
    pdf = (site / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) >= 1


def css(text, selector):
    """The declarations of the page's rule for selector, as a dict."""
    m = re.search(r"(?:^|[}\n])" + re.escape(selector) + r"\{([^}]*)\}", text)
    assert m, selector
    return dict(d.split(":", 1) for d in m[1].split(";") if d)


def readable_on_a_phone(text, cells, best):
    """Issue 32 items 21-22, on the page's HTML: a chart never shrinks
    below its viewBox (so 12 px labels stay 12 px at 390 px), tables keep
    their first column in view, both charts of cells list them in one
    order, hosts in neutral colours with a legend."""
    boxes = {int(w) for w in re.findall(r'viewBox="0 0 (\d+) ', text)}
    assert boxes and css(text, "svg")["min-width"] in \
        {f"{w}px" for w in boxes}
    sizes = re.findall(r"svg [^{}]*\{[^}]*font-size:(\d+)px", text)
    assert sizes and min(map(int, sizes)) >= 12
    assert "overflow-x" in css(text, "figure")
    first = css(text, ".scroll th:first-child,.scroll td:first-child")
    assert first["position"] == "sticky" and first["left"] == "0"
    assert first["white-space"] == "nowrap"     # names whole
    figs = re.findall(r'<figure class="chart" data-chart="([^"]+)"(.*?)'
                      r"</figure>", text, re.S)
    labels = {k: re.findall(r'class="label" text-anchor="end">([^<]*)<',
                            body) for k, body in figs}
    assert labels["cells"] == labels["vs-best"]
    # Hosts fastest first, then each host's variants fastest first.
    ranked = sorted(best, key=lambda h: -cells[(best[h], h)]["median"])
    want = [f"{v} \u00b7 {h}" for h in ranked for v in sorted(
        VARIANTS, key=lambda v: -cells[(v, h)]["median"])]
    assert labels["cells"] == want
    for k, body in figs[:2]:
        legend = re.findall(r'background:#(\w{6})"></span>([^<]*)<', body)
        assert [h for _, h in legend] == ranked
        for c, _ in legend:
            r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
            assert not (r > g + 60 and r > b + 60), c   # no red
            assert not (g > r + 40 and g > b + 40), c   # no green


def test_noisy_banner_separates_hosts(site, tmp_path):
    d = modified(site, tmp_path, "UPDATE windows SET verdict = 'noisy'"
                 " WHERE run_id = 1")
    page = sq(d, "report", "--run", 1, "--format", "html").stdout
    assert re.search(r"Noisy: genoa \d+/\d+ windows, graviton \d+/\d+ "
                     r"windows, m4 \d+/\d+ windows\.", page), page


def test_console_check_can_fail(tmp_path):
    """The console check sees a script error, and the page's CSP turns a
    network fetch into a console error."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x<script>no_such_fn()</script>")
    assert chromium(bad, tmp_path / "bad.png", 400, 300)
    fetch = tmp_path / "fetch.html"
    fetch.write_text(
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" "
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        "<img src=\"http://127.0.0.1:9/x.png\">")
    assert chromium(fetch, tmp_path / "fetch.png", 400, 300)


def test_export_validates(site):
    cells, _, _ = hand(site / "results.db", 1)
    schema = json.loads((ROOT / "docs" / "summary.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    sq(site, "export", "--run", 1, "-o", site / "summary.json")
    doc = json.loads((site / "summary.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["common_digest"] == sha3_chain(STEPS)
    assert doc["run"]["steps"] == STEPS
    for c in doc["cells"]:
        h = cells[(c["variant"], c["host"])]
        rates = sorted(c["steps"] * 1e9 / ns for ns in c["ns"])
        assert rates == pytest.approx(h["rates"], rel=1e-15)
        assert c["ns"] == sorted(c["ns"])
        assert c["median_rate"] == pytest.approx(h["median"], rel=1e-12)
        assert c["mean_rate"] == pytest.approx(
            statistics.mean(h["rates"]), rel=1e-12)
    for b in doc["builds"]:
        assert re.fullmatch(r"[0-9a-f]{64}", b["source_sha256"])
        assert re.fullmatch(r"[0-9a-f]{64}", b["binary_sha256"])
        assert b["compiler_version"]
    # stdout gives the same document; the schema rejects a broken one.
    assert json.loads(sq(site, "export", "--run", 1).stdout) == doc
    bad = copy.deepcopy(doc)
    bad["cells"][0]["ns"][0] = -1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)
    del bad["cells"][0]
    bad["common_digest"] = "XYZ"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)
    p = sq(site, "export", "--run", 99, check=False)
    assert p.returncode == 2 and "no run with id 99" in p.stderr
    assert p.stdout == ""


def same_shape(ours, theirs, path="$"):
    """The keys (at every level) and value types of hyperfine's document,
    except user and system: null, as seqorch does not measure them."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), \
            (path, sorted(ours), sorted(theirs))
        for k in theirs:
            if k in ("user", "system"):
                assert ours[k] is None, (path, k)
            elif k == "parameters":
                assert set(ours[k]) == {"host", "variant", "build"}
                assert all(isinstance(v, str) for v in ours[k].values())
            else:
                same_shape(ours[k], theirs[k], f"{path}.{k}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and ours, path
        for o in ours:
            same_shape(o, theirs[0], f"{path}[]")
    else:
        assert type(ours) in ({int, float} if type(theirs) in (int, float)
                              else {type(theirs)}), (path, ours, theirs)


def test_export_hyperfine(site, tmp_path):
    """export --format hyperfine against a file hyperfine 1.15 wrote
    itself, key by key, and its numbers against results.db's samples."""
    assert HYPERFINE, "Debian hyperfine is missing (make deps installs it)"
    subprocess.run([HYPERFINE, "--runs", "2", "-L", "host", "local",
                    "--export-json", tmp_path / "h.json", "true {host}"],
                   check=True, capture_output=True, timeout=120)
    theirs = json.loads((tmp_path / "h.json").read_text())
    sq(site, "export", "--run", 1, "--format", "hyperfine", "-o",
       tmp_path / "s.json")
    ours = json.loads((tmp_path / "s.json").read_text())
    same_shape(ours, theirs)
    assert json.loads(sq(site, "export", "--run", 1, "--format",
                         "hyperfine", "-o", "-").stdout) == ours
    con = sqlite3.connect(site / "results.db")
    want = {}
    for h, v, b, c, ns in con.execute(
            "SELECT s.host, s.variant, s.build_id, b.compiler, s.ns FROM"
            " samples s JOIN builds b ON b.id = s.build_id WHERE"
            " s.run_id = 1 AND s.valid = 1 ORDER BY s.sample_index"):
        want.setdefault((f"{h}/{v}/{c}", h, v, str(b)), []).append(ns / 1e9)
    con.close()
    assert len(ours["results"]) == len(want)
    for r in ours["results"]:
        p = r["parameters"]
        t = want[(r["command"], p["host"], p["variant"], p["build"])]
        assert r["times"] == t
        assert r["exit_codes"] == [0] * len(t)
        assert r["mean"] == pytest.approx(statistics.mean(t), rel=1e-12)
        assert r["stddev"] == pytest.approx(statistics.stdev(t), rel=1e-9)
        assert r["median"] == statistics.median(t)
        assert (r["min"], r["max"]) == (min(t), max(t))
    p = sq(site, "export", "--run", 1, "--format", "hyperfine", "--bundle",
           tmp_path / "b", check=False)
    assert p.returncode == 2 and "holds summary.json" in p.stderr


def test_compare(site):
    c1, _, _ = hand(site / "results.db", 1)
    c2, _, _ = hand(site / "results.db", 2)
    out = json.loads(sq(site, "compare", 1, 2, "--format", "json").stdout)
    assert (out["baseline"], out["new"]) == (1, 2)
    # The version the report's and summary.json's JSON carry (issue 32).
    assert out["schema_version"] == 4
    logs = []
    for cell in out["cells"]:
        k = (cell["variant"], cell["host"])
        r = c2[k]["median"] / c1[k]["median"]
        assert cell["ratio"] == pytest.approx(r, rel=1e-12)
        assert cell["lo"] <= cell["ratio"] <= cell["hi"]
        # Welch's t-test backs every verdict (schema 4's t_p).
        assert 0 <= cell["t_p"] <= 1, cell
        if cell["verdict"] != "undecided":
            assert cell["t_p"] < 0.05, cell
        logs.append(math.log(r))
    assert len(logs) == len(c1)
    g = out["geometric_mean"]
    assert g["ratio"] == pytest.approx(math.exp(sum(logs) / len(logs)),
                                       rel=1e-12)
    assert g["cells"] == len(c1)
    assert 0 <= g["t_p"] <= 1 and (g["verdict"] == "undecided" or
                                   g["t_p"] < 0.05), g
    # CSV (issue 32 item 17): the JSON's cells, row for row.
    rows = list(csv.DictReader(io.StringIO(
        sq(site, "compare", 1, 2, "--format", "csv").stdout)))
    assert [(r["variant"], r["host"], r["verdict"]) for r in rows] == \
        [(c["variant"], c["host"], c["verdict"]) for c in out["cells"]]
    for r, cell in zip(rows, out["cells"]):
        assert (r["study"], r["baseline_run"], r["new_run"]) == \
            ("sha3", "1", "2")
        assert float(r["ratio"]) == pytest.approx(cell["ratio"], abs=1e-5)
        assert float(r["baseline_median_per_s"]) == pytest.approx(
            c1[(r["variant"], r["host"])]["median"], abs=0.05)
        assert r["reason"] == ""
    text = sq(site, "compare", "--baseline", 1).stdout
    assert "run 1 (baseline) -> run 2" in text
    for (v, h), c in c1.items():
        change = f"{100 * (c2[(v, h)]['median'] / c['median'] - 1):+.1f}%"
        assert re.search(rf"^  {v}\s+cc\s+{h}\s+\S+\s+\S+\s+"
                         rf"{re.escape(change)}  \[", text, re.M), text


# Each run-1 cell's samples within 2% of its fastest: the site's real
# samples can differ by more than the factor a test applies when the
# machine was busy, and three samples' bootstrap interval then spans it.
EVEN_RUN_1 = ("UPDATE samples SET ns = CAST((SELECT MIN(a.ns) FROM samples a"
              " WHERE a.run_id = 1 AND a.host = samples.host AND a.variant ="
              " samples.variant) * (1 + 0.01 * (sample_index % 3)) AS"
              " INTEGER) WHERE run_id = 1")


def test_compare_gate_and_refusal(site, tmp_path):
    """A copy whose run 1 has even samples and whose run 2 is run 1 five
    times slower, sample for sample (so the verdict does not depend on how
    busy the machine was): every cell is decided slower and --fail-slower
    exits 1; with other steps every cell is refused."""
    db = tmp_path / "results.db"
    shutil.copy(site / "results.db", db)
    con = sqlite3.connect(db)
    with con:
        con.execute(EVEN_RUN_1)
        con.execute("UPDATE samples SET ns = (SELECT a.ns * 5 FROM samples a"
                    " WHERE a.run_id = 1 AND a.host = samples.host AND"
                    " a.variant = samples.variant AND a.sample_index ="
                    " samples.sample_index) WHERE run_id = 2")
    con.close()
    out = json.loads(sq(tmp_path, "compare", 1, 2, "--format",
                        "json").stdout)
    for cell in out["cells"]:
        assert cell["verdict"] == "slower", cell
        assert cell["ratio"] == pytest.approx(0.2, rel=1e-9)
        assert cell["hi"] < 1
    p = sq(tmp_path, "compare", 1, 2, "--fail-slower", "10", check=False)
    assert p.returncode == 1, p.stderr
    assert f"{len(out['cells'])} cells slower by more than 10%" in p.stderr
    # JSON gives the gate's verdict as the exit status does.
    gate = json.loads(sq(tmp_path, "compare", 1, 2, "--fail-slower", "10",
                         "--format", "json", check=False).stdout)
    assert (gate["fail_slower_pct"], gate["slower_cells"],
            gate["gate_passed"]) == (10, len(out["cells"]), False)
    md = sq(tmp_path, "compare", 1, 2, "--fail-slower", "10", "--format",
            "md", check=False).stdout
    assert "Fail threshold: a cell decided slower by more than 10%." in md
    # Slower by 80%: a 90% threshold lets it pass.
    assert sq(tmp_path, "compare", 1, 2, "--fail-slower", "90",
              check=False).returncode == 0
    gate = json.loads(sq(tmp_path, "compare", 1, 2, "--fail-slower", "90",
                         "--format", "json", check=False).stdout)
    assert (gate["slower_cells"], gate["gate_passed"]) == (0, True)
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE samples SET steps = steps * 2 WHERE run_id = 2")
    con.close()
    p = sq(tmp_path, "compare", 1, 2, check=False)
    # Nothing compared is a failure, gate or not (issue 32 item 17).
    assert p.returncode == 1, p.stderr
    text = p.stdout
    # One line for the runs' mismatch, values baseline first as in the
    # table (issue 32 item 17), not one per cell.
    assert f"refused, all {len(out['cells'])} cells of both runs: steps " \
        f"differ ({STEPS}, {2 * STEPS})\n" in text
    assert text.count("steps differ") == 1 and "variant" not in text
    assert "geometric mean: no cell could be compared" in text
    doc = json.loads(sq(tmp_path, "compare", 1, 2, "--format", "json",
                        check=False).stdout)
    assert doc["refused"] == f"steps differ ({STEPS}, {2 * STEPS})"
    assert all(c["refused"] == doc["refused"] for c in doc["cells"])
    p = sq(tmp_path, "compare", 1, 2, "--fail-slower", "0", check=False)
    assert p.returncode == 2 and "invalid --fail-slower" in p.stderr


def test_reference(site):
    out = sq(site, "report", "--run", 1, "--reference", "seed:genoa").stdout
    cells, best, _ = hand(site / "results.db", 1)
    for h, v in best.items():
        r = cells[(v, h)]["median"] / 4.056e6
        # The control can be a noisy host's best, and is said to be.
        label = f"{v} (the study's control)" if v == "openssl-evp" else v
        assert f"{h} {label} {fmt_rate(cells[(v, h)]['median'])} hashes/s is " \
            f"{r:.2f}x seed:genoa (4.056M hashes/s" in out.replace("\n  ", " ")
    assert "steps differ: 20000 here, 10000000 published" in \
        out.replace("\n  ", " ")
    doc = json.loads(sq(site, "report", "--run", 1, "--reference",
                        "seed:m4", "--format", "json").stdout)
    assert doc["runs"][0]["reference"]["median_rate"] == 8072000
    p = sq(site, "report", "--reference", "seed:pdp11", check=False)
    assert p.returncode == 2 and "unknown reference" in p.stderr
    # The machine alone, as hosts.toml's reference key names it.
    assert sq(site, "report", "--run", 1, "--reference", "genoa").stdout == \
        out


def modified(site, tmp_path, *sql):
    """A copy of the site's database changed by sql statements."""
    tmp_path.mkdir(exist_ok=True)
    db = tmp_path / "results.db"
    shutil.copy(site / "results.db", db)
    con = sqlite3.connect(db)
    with con:
        for s in sql:
            con.execute(s)
    con.close()
    return tmp_path


def test_report_refuses_and_n1(site, tmp_path):
    """A host whose samples have other steps: every ratio with it is
    refused (and says why); with one sample per cell no verdict is given
    however far apart the hosts are."""
    d = modified(site, tmp_path,
                 "UPDATE samples SET steps = steps * 2 WHERE run_id = 1"
                 " AND host = 'm4'")
    out = sq(d, "report", "--run", 1).stdout
    assert re.search(rf"^  (m4 / \S+|\S+ / m4): refused, steps differ "
                     rf"\((20000, 40000|40000, 20000)\)$", out, re.M), out
    assert len(re.findall(r": refused, steps differ", out)) == 2
    assert re.search(r"^  \S+ / \S+ = \d+\.\d\dx  \[", out, re.M), out
    doc = json.loads(sq(d, "report", "--run", 1, "--format",
                        "json").stdout)
    refused = [x for x in doc["runs"][0]["ratios"] if x["refused"]]
    assert len(refused) == 2 and all(x["ratio"] is None for x in refused)

    d = modified(site, tmp_path / "n1",
                 "DELETE FROM samples WHERE run_id = 1 AND sample_index > 0")
    out = sq(d, "report", "--run", 1).stdout
    pairs = re.findall(r"^  \S+ / \S+ = \d+\.\d\dx  (.*)$", out, re.M)
    assert len(pairs) == 3
    assert all(p.split(";")[0] == "[no interval: n < 2]  not "
               "distinguishable at this precision" for p in pairs), out


def test_position_bias_is_seen(site, tmp_path):
    """Samples that ran first made three times as slow (the others
    even, EVEN_RUN_1): the report says position 0 shifts results, and that
    it is slower."""
    d = modified(site, tmp_path, EVEN_RUN_1, "UPDATE samples SET ns = ns * 3"
                 " WHERE run_id = 1 AND position = 0")
    out = sq(d, "report", "--run", 1).stdout
    assert "position bias: some positions in the alternating order shift " \
        "results" in out, out
    assert re.search(r"^  position 0: n 9, 0\.\d+x  \[\S+, \S+\]"
                     r"  Holm p \S+  slower$", out, re.M), out
    assert "verdicts by rank tests, Holm-corrected over the " in out
    out = sq(site, "report", "--run", 1).stdout
    assert re.search(r"^position bias: ", out, re.M)


def test_phase_shares_and_build_rates_of_one_run(site, tmp_path):
    """Phase shares sum each run's own metrics only, even when the two
    runs' sample ids interleave (the report reads the metrics of a run's
    span of ids); the per-build rates appear once a build states its
    targeting, and neither section without metrics or targeting."""
    out = sq(site, "report", "--run", 1).stdout
    assert "phase shares" not in out and "rates per build" not in out
    shares = {1: (0.1, 0.2, 0.3, 0.15, 0.25), 2: (0.5, 0.1, 0.1, 0.1, 0.2)}
    names = ("phase_proggen", "phase_compile", "phase_execute",
             "phase_mprotect", "phase_other")
    metrics = [f"INSERT INTO sample_metrics SELECT id, '{n}', ns * {f}"
               f" FROM samples WHERE run_id = {run} AND valid = 1"
               for run, fs in shares.items() for n, f in zip(names, fs)]
    con = sqlite3.connect(site / "results.db")
    first = dict(con.execute("SELECT run_id, MIN(id) FROM samples"
                             " GROUP BY run_id").fetchall())
    con.close()
    d = modified(site, tmp_path,
                 "UPDATE samples SET id = id + 1000000",
                 f"UPDATE samples SET id = (id - 1000000 - {first[1]}) * 2"
                 " + 1 WHERE run_id = 1",
                 f"UPDATE samples SET id = (id - 1000000 - {first[2]}) * 2"
                 " + 2 WHERE run_id = 2",
                 *metrics,
                 "UPDATE builds SET targeting = 'native' WHERE run_id = 1")
    con = sqlite3.connect(d / "results.db")
    spans = con.execute("SELECT MIN(id), MAX(id) FROM samples"
                        " GROUP BY run_id ORDER BY run_id").fetchall()
    builds = dict(con.execute("SELECT host, id FROM builds"
                              " WHERE run_id = 1").fetchall())
    con.close()
    assert spans[1][0] < spans[0][1], "the runs' ids interleave"
    for run, fs in shares.items():
        out = sq(d, "report", "--run", run).stdout
        assert "phase shares of hashing time" in out, out
        want = [round(100 * f, 2) for f in fs] + [100.0]
        lines = re.findall(r"^  \S+\s+\d+\s+(?:native|-)\s+\S+\s+\d+"
                           r"(?: +\d+\.\d\d%){6}$", out, re.M)
        assert len(lines) == len(HOSTS) * len(VARIANTS), out
        assert "do not compare across OSes" not in out
        for ln in lines:
            assert [float(x) for x in re.findall(r"(\d+\.\d\d)%", ln)] \
                == want, out
            assert re.match(r"  \S+\s+\d+\s+(native|-)\s+\S+\s+3 ", ln), ln
        assert ("rates per build" in out) == (run == 1), out
    out = sq(d, "report", "--run", 1).stdout
    for host, build in builds.items():
        assert re.search(rf"^  {host}\s+{build}\s+\S+\s+native\s+"
                         rf"c-fused\s+{SAMPLES} ", out, re.M), out
    # Their tables follow every text table's width rule: within 80
    # columns, or whole with their width said above their head.
    wide = None
    for line in out.splitlines():
        m = re.fullmatch(r"  \(table is (\d+) columns wide\)", line)
        if m:
            wide = int(m[1])
            continue
        wide = None if line == "" else wide
        assert len(line) <= (wide or 80), line
    head = out.index("phase shares of hashing time")
    assert re.match(r"[^\n]*\n  \(table is \d+ columns wide\)\n  host ",
                    out[head:]), out[head:]


def test_jit_phase_of_macos_does_not_compare(site, tmp_path):
    """RandomX's W^X step is pthread_jit_write_protect_np on macOS and
    mprotect on Linux: the m4 host's agent names its phase
    jit_write_protect, and the report says those shares do not compare
    across OSes, in text, JSON and Markdown."""
    metrics = [f"INSERT INTO sample_metrics SELECT id, '{n}', ns * {f}"
               f" FROM samples WHERE run_id = 1 AND valid = 1"
               f" AND host {'=' if mac else '<>'} 'm4'"
               for mac in (True, False)
               for n, f in (("phase_execute", 0.7), ("phase_other", 0.2),
                            ("phase_jit_write_protect" if mac else
                             "phase_mprotect", 0.1))]
    d = modified(site, tmp_path, *metrics)
    out = sq(d, "report", "--run", 1).stdout
    head = re.search(r"^  host .* execute +(jit_write_protect +mprotect|"
                     r"mprotect +jit_write_protect) +other +total$", out,
                     re.M)
    assert head, out
    note = ("jit_write_protect (macOS: pthread_jit_write_protect_np, a "
            "thread's switch) and mprotect (Linux: two mprotect calls a "
            "program) are RandomX's W^X step made by different OS calls: "
            "their shares do not compare across OSes")
    # Wrapped to 80 columns, under itself.
    m = re.search(r"^  note: (.*(?:\n {8}\S.*)*)$", out, re.M)
    assert m and " ".join(m[1].split()) == note, out
    # Each share under its name: the columns are as wide as the names.
    cols = [m.end() for m in re.finditer(r"\S+", head.group(0))][-5:]
    for row in re.findall(r"^  (?:genoa|graviton|m4) .*%$", out, re.M):
        assert [row[c - 1] for c in cols] == ["%"] * 5, (head, row)
    phases = json.loads(sq(d, "report", "--run", 1, "--format",
                           "json").stdout)["runs"][0]["phases"]
    assert phases["note"] == note
    assert len(phases["cells"]) == len(HOSTS) * len(VARIANTS)
    for row in phases["cells"]:
        mac = row["host"] == "m4"
        assert row["share"]["jit_write_protect"] == \
            pytest.approx(0.1 if mac else 0, abs=1e-6)
        assert row["share"]["mprotect"] == \
            pytest.approx(0 if mac else 0.1, abs=1e-6)
    md = sq(d, "report", "--run", 1, "--format", "markdown").stdout
    assert "their shares do not compare across OSes" in md
    phases = json.loads(sq(site, "report", "--run", 1, "--format",
                           "json").stdout)["runs"][0]["phases"]
    assert phases["note"] is None
