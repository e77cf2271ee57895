"""seqorch-agent run directly, protocol 3: window records around the timed
samples with the host's state, the host lock, adaptive samples and resumed
sample indices."""
import hashlib
import json
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import AGENT
from lib_common import wait_for

VARIANTS = ["c-wrapped", "c-fused", "openssl-evp"]
STATE_KEYS = {"at", "load1", "load5", "load15", "calib_mhz", "governor",
              "freq_khz", "temp_c", "throttle_count", "busy_on_cpu",
              "runnable"}
AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def command(*args):
    return [str(AGENT), "--study", "sha3", "--variants", ",".join(VARIANTS),
            "--cpu", "0", *map(str, args)]


def agent(*args, timeout=300):
    """Run the agent to the end: (pid, exit code, records, stderr)."""
    p = subprocess.Popen(command(*args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    return p.pid, p.returncode, [json.loads(l) for l in out.splitlines()], err


def records(path):
    """Complete records in an --out file written by a running agent."""
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text().splitlines(keepends=True)
            if l.endswith("\n")]


def of_type(recs, t):
    return [r for r in recs if r["type"] == t]


def start_holder(tmp_path, lock, holder="first run"):
    """An agent that takes the lock and then times for a few seconds; returns
    it once its window has begun (so the lock is held)."""
    out = tmp_path / "first.jsonl"
    p = subprocess.Popen(command("--steps", 500000, "--samples", 2, "--lock",
                                 lock, "--holder", holder, "--out", out),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: of_type(records(out), "window") or p.poll() is not None,
             "the holder's window")
    assert p.poll() is None, p.stderr.read()
    return p, out


def check_state(state, pid):
    assert set(state) == STATE_KEYS
    assert AT.match(state["at"]), state["at"]
    for key in ("load1", "load5", "load15"):
        assert state[key] is None or state[key] >= 0
    # x86-64 and arm64 have the dependent-add loop; elsewhere it is null.
    assert state["calib_mhz"] is None or state["calib_mhz"] > 0
    assert state["governor"] is None or isinstance(state["governor"], str)
    for key in ("freq_khz", "throttle_count"):
        assert state[key] is None or (isinstance(state[key], int)
                                      and state[key] >= 0)
    assert state["temp_c"] is None or isinstance(state["temp_c"], (int, float))
    # This test runs on Linux: /proc is there, so these are never null.
    assert isinstance(state["busy_on_cpu"], list)
    assert len(state["busy_on_cpu"]) <= 16
    for entry in state["busy_on_cpu"]:
        assert set(entry) == {"pid", "comm"}
        assert entry["pid"] != pid and entry["comm"]
    # The agent itself is running while it looks.
    assert isinstance(state["runnable"], int) and state["runnable"] >= 1


def test_window_brackets_every_sample():
    pid, rc, recs, err = agent("--steps", 2000, "--samples", 3)
    assert rc == 0, err
    assert recs[0]["type"] == "hello" and recs[0]["proto"] == 13
    types = [r["type"] for r in recs]
    assert types.count("window") == 2
    begin = types.index("window")
    end = len(types) - 1 - types[::-1].index("window")
    assert recs[begin]["phase"] == "begin" and recs[end]["phase"] == "end"
    # Setup and self-tests before the window, only samples inside it.
    assert types[:begin] == ["hello", "facts"] + ["variant"] * 3 + [
        "selftest", "preflight"]
    assert types[begin + 1:end] == ["sample"] * 9
    assert types[end + 1:] == ["done"]
    for w in (recs[begin], recs[end]):
        check_state(w["state"], pid)
    assert recs[begin]["state"]["at"] <= recs[end]["state"]["at"]
    assert all(s["reason"] is None for s in of_type(recs, "sample"))
    # The clock is estimated just before and just after every sample.
    for s in of_type(recs, "sample"):
        assert s["calib_mhz"] > 0 and s["calib_after_mhz"] > 0, s
    assert of_type(recs, "done")[0]["samples"] == 9


def test_busy_process_on_the_pinned_cpu_is_named():
    spin = subprocess.Popen([sys.executable, "-c",
                             "import os\nos.sched_setaffinity(0, {0})\n"
                             "while True: pass"])
    try:
        time.sleep(0.3)
        pid, rc, recs, err = agent("--steps", 1000, "--samples", 1)
        assert rc == 0, err
        for w in of_type(recs, "window"):
            busy = w["state"]["busy_on_cpu"]
            assert spin.pid in [e["pid"] for e in busy], busy
            assert all(e["pid"] != pid for e in busy)
    finally:
        spin.kill()
        spin.wait()


def test_second_agent_waits_for_the_lock(tmp_path):
    lock = tmp_path / "window.lock"
    first, out = start_holder(tmp_path, lock)
    try:
        assert lock.read_text() == "first run\n"
        pid, rc, recs, err = agent("--steps", 1000, "--samples", 1, "--lock",
                                   lock, "--holder", "second run")
        assert first.wait(timeout=300) == 0
    finally:
        first.kill()
        first.wait()
    assert rc == 0, err
    types = [r["type"] for r in recs]
    assert types.index("selftest") < types.index("wait") < types.index(
        "window")
    assert of_type(recs, "wait") == [{"type": "wait",
                                      "holder": "first run"}]
    first_end = of_type(records(out), "window")[-1]
    second_begin = of_type(recs, "window")[0]
    assert first_end["phase"] == "end" and second_begin["phase"] == "begin"
    assert second_begin["state"]["at"] >= first_end["state"]["at"]
    assert lock.read_text() == "second run\n"


def test_no_wait_gives_up_with_exit_4(tmp_path):
    lock = tmp_path / "window.lock"
    first, _ = start_holder(tmp_path, lock)
    try:
        _, rc, recs, err = agent("--steps", 1000, "--samples", 1, "--lock",
                                 lock, "--holder", "second run", "--no-wait")
    finally:
        first.kill()
        first.wait()
    assert rc == 4, err
    want = f'host lock "{lock}" is held by "first run"'
    assert recs[-1] == {"type": "error", "message": want}
    assert want in err
    assert not of_type(recs, "window") and not of_type(recs, "sample")


def test_killed_holder_leaves_no_stale_lock(tmp_path):
    lock = tmp_path / "window.lock"
    first, _ = start_holder(tmp_path, lock)
    first.send_signal(signal.SIGKILL)
    first.wait()
    _, rc, recs, err = agent("--steps", 1000, "--samples", 1, "--lock", lock,
                             "--holder", "next", "--no-wait")
    assert rc == 0, err
    assert not of_type(recs, "wait")


def expected_position(order, variant, index, reverse):
    """Where the full run puts variant at sample index (docs/protocol.md)."""
    n, i = len(order), order.index(variant)
    if reverse:
        return n - 1 - i if index % 2 else i
    return (i - index) % n


def test_adaptive_samples_until_max():
    _, rc, recs, err = agent("--steps", 2000, "--samples", 2, "--max-cv",
                             "0.0000001", "--max-samples", 5)
    assert rc == 0, err
    order = [v["variant"] for v in of_type(recs, "variant")]
    samples = of_type(recs, "sample")
    assert of_type(recs, "done")[0]["samples"] == len(samples) == 15
    for v in VARIANTS:
        mine = [s for s in samples if s["variant"] == v]
        assert [s["sample"] for s in mine] == [0, 1, 2, 3, 4]
        assert [s["reason"] for s in mine[:2]] == [None, None]
        for s in mine[2:]:
            assert re.fullmatch(r"cv [0-9.e+-]+% > 1e-05% after "
                                rf"{s['sample']} samples",
                                s["reason"]), s["reason"]
        # Every variant was still too spread out, so every extra round
        # holds all three, in the order the index gives.
        for s in mine:
            assert s["position"] == expected_position(order, v, s["sample"],
                                                      False)
    types = [r["type"] for r in recs]
    assert types[-2:] == ["window", "done"]


def test_conductors_steady_build_pairs_the_extra_rounds():
    """A conductor's extra rounds: a variant whose build "b" is still too
    spread out samples in its steady build "a" too, with a reason naming
    the build it pairs, so that the report can pair the builds' samples
    index by index (before, "b" sampled alone).  The variants steady in
    every build take nothing.  ("a"'s 400 stored
    samples keep it steady whatever this machine's load does to two
    more.)"""
    sha = hashlib.sha256(AGENT.read_bytes()).hexdigest()
    _, rc, recs, err = agent(
        "--token", "ab", "--conduct", "--build", f"a:{sha}:{AGENT}",
        "--build", f"b:{sha}:{AGENT}", "--steps", 2000, "--samples", 0,
        "--max-cv", "0.5", "--max-samples", 402, "--extra-from", "400:20",
        "--stored-spread", "a:c-fused:400:1000000:0",
        "--stored-spread", "b:c-fused:400:1000000:1e20",
        *(a for v in VARIANTS if v != "c-fused" for b in "ab"
          for a in ("--stored-spread", f"{b}:{v}:400:1000000:0")))
    assert rc == 0, err
    build, got = "", []
    for r in recs:
        if r["type"] == "build":
            build = r["build_id"]
        elif r["type"] == "sample":
            got.append((build, r["variant"], r["sample"], r["order"],
                        r["reason"]))
    # Both builds at each index, side by side, in places 20 on.
    assert sorted(g[:3] for g in got) == [
        (b, "c-fused", i) for b in "ab" for i in (400, 401)], got
    assert [g[3] for g in got] == list(range(20, 24)), got
    assert [g[2] for g in got] == [400, 400, 401, 401], got
    for b, _, i, _, why in got:
        wide = rf"cv [0-9.e+]+% > 50% after {i} samples \(400 stored before " \
            r"the resume\)"
        assert re.fullmatch(wide if b == "b" else
                            rf"pairs build \"b\"'s extra sample: {wide}",
                            why), why


def test_stored_spread_continues_the_runs_decision():
    """A resumed --max-cv run: the spread of each variant starts from what
    the run stored (--stored-spread), and the extra rounds take indices
    and places after the stored ones (--extra-from).  A variant stored
    steady gets nothing, one at --max-samples nothing, one stored spread
    out its rounds up to --max-samples in all."""
    _, rc, recs, err = agent(
        "--steps", 2000, "--samples", 0, "--max-cv", "0.01",
        "--max-samples", 5, "--extra-from", "7:40",
        "--stored-spread", "c-wrapped:2:1000000:1e15",
        "--stored-spread", "c-fused:5:1000000:1e15",
        "--stored-spread", "openssl-evp:3:1000000:0")
    assert rc == 0, err
    samples = of_type(recs, "sample")
    assert of_type(recs, "hello")[0]["samples"] == 0
    # Only the samples it took, not the stored ones.
    assert of_type(recs, "done")[0]["samples"] == len(samples) == 3
    assert [(s["variant"], s["sample"], s["order"]) for s in samples] == \
        [("c-wrapped", i, 40 + i - 7) for i in (7, 8, 9)]
    for n, s in enumerate(samples, 2):
        assert re.fullmatch(rf"cv [0-9.e+]+% > 1% after {n} samples "
                            r"\(2 stored before the resume\)",
                            s["reason"]), s["reason"]
    # Planned samples first: the stored ones count in the decision after
    # them (a spread of 2 alone would be judged on this agent's samples).
    _, rc, recs, err = agent(
        "--steps", 2000, "--first-sample", 2, "--samples", 1,
        "--max-cv", "0.5", "--max-samples", 6,
        *(a for v in VARIANTS
          for a in ("--stored-spread", f"{v}:2:1000000:1e15")))
    assert rc == 0, err
    for v in VARIANTS:
        mine = [s for s in of_type(recs, "sample") if s["variant"] == v]
        assert [s["sample"] for s in mine] == [2, 3, 4, 5]
        assert [s["reason"] is None for s in mine] == [True] + [False] * 3


def serve(requests, *args):
    """An agent with --serve given requests on stdin: (exit code,
    records, stderr)."""
    p = subprocess.run(command("--serve", "--steps", 2000, *args),
                       input=requests, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, [json.loads(l) for l in p.stdout.splitlines()], \
        p.stderr


def test_serve_takes_an_extra_sample_with_its_reason():
    """A conductor's --max-cv extra sample: the request's rest is the
    record's reason, at an index past the planned ones (protocol 13);
    one at a planned index is refused.  Before, the reason was ignored
    and the index refused."""
    why = "cv 5.2% > 1% after 2 samples (1 stored before the resume)"
    rc, recs, err = serve(f"sample 0 0 0 c-fused\nsample 1 0 3 c-fused "
                          f"{why}\nquit\n", "--samples", 1)
    assert rc == 0, err
    assert [(s["sample"], s["order"], s["reason"])
            for s in of_type(recs, "sample")] == [(0, 0, None), (1, 3, why)]
    assert of_type(recs, "done")[0]["samples"] == 2
    rc, recs, err = serve("sample 0 0 0 c-fused cv 9% > 1% after 2 "
                          "samples\n", "--samples", 1)
    assert rc == 2
    assert of_type(recs, "error")[0]["message"] == \
        "--serve: extra sample 0 is not past --first-sample and --samples"
    # Extra rounds alone: --samples 0.
    rc, recs, err = serve(f"sample 4 0 9 openssl-evp {why}\n", "--samples",
                          0, "--first-sample", 4)
    assert rc == 0, err
    assert [s["reason"] for s in of_type(recs, "sample")] == [why]


@pytest.mark.parametrize("order_opt", ["rotate", "reverse"])
def test_first_sample_repeats_the_full_runs_positions(order_opt):
    _, rc, full, err = agent("--steps", 1000, "--samples", 5, "--order",
                             order_opt)
    assert rc == 0, err
    _, rc, part, err = agent("--steps", 1000, "--samples", 2,
                             "--first-sample", 3, "--order", order_opt)
    assert rc == 0, err
    got = {(s["variant"], s["sample"]): s["position"]
           for s in of_type(part, "sample")}
    want = {(s["variant"], s["sample"]): s["position"]
            for s in of_type(full, "sample") if s["sample"] >= 3}
    assert got == want and len(got) == 6
    assert of_type(part, "hello")[0]["samples"] == 2
    order = [v["variant"] for v in of_type(full, "variant")]
    for (v, i), pos in got.items():
        assert pos == expected_position(order, v, i, order_opt == "reverse")


@pytest.mark.parametrize("args,message", [
    (["--max-cv", "0.01"], "--max-cv and --max-samples go together"),
    (["--max-samples", "5"], "--max-cv and --max-samples go together"),
    (["--max-cv", "0", "--max-samples", "5"], 'invalid --max-cv "0"'),
    (["--samples", "3", "--max-cv", "0.01", "--max-samples", "2"],
     "--max-samples 2 is below --samples 3"),
    (["--lock", "/tmp/x.lock"], "--lock and --holder go together"),
    (["--lock", "/tmp/x.lock", "--holder", "a\nb"],
     "invalid --holder: control character at byte 1"),
    (["--no-wait"], "--no-wait needs --lock"),
    (["--first-sample", "-1"], 'invalid --first-sample "-1"'),
])
def test_bad_options(args, message):
    _, rc, recs, err = agent(*args)
    assert rc == 2
    assert message in err
    assert recs == [{"type": "error", "message": err.strip().removeprefix(
        "seqorch-agent: ")}]


def libcrypto_of(binary):
    """The libcrypto file the dynamic loader resolves for binary."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"libcrypto\.so\S* => (\S+)", out)
    assert m, out
    return m.group(1)


def test_openssl_is_the_loaded_libcrypto(workdir):
    """builds.openssl is what the agent loads: OpenSSL_version() of the
    libcrypto file the loader resolves for it (checked through ctypes on
    that file), not the `openssl` command (LibreSSL's on macOS)."""
    import ctypes
    import os
    line = subprocess.run([str(AGENT), "--openssl"], capture_output=True,
                          text=True, check=True).stdout.strip()
    path = libcrypto_of(AGENT)
    lib = ctypes.CDLL(path)
    lib.OpenSSL_version.restype = ctypes.c_char_p
    version = lib.OpenSSL_version(0).decode()
    m = re.fullmatch(r"(.+) \((/\S+)\)", line)
    assert m, line
    assert m.group(1) == version
    assert os.path.realpath(m.group(2)) == os.path.realpath(path)
    # Each finished build of the real agent (not another test's wrapper
    # script, not one in progress) records that line for builds.openssl.
    builds = [d / "openssl" for d in (workdir / "build").iterdir()
              if "." not in d.name and (d / "meta").exists() and
              (d / "seqorch-agent").read_bytes()[:4] == b"\x7fELF"]
    assert builds, list((workdir / "build").iterdir())
    for f in builds:
        got = f.read_text().strip()
        m = re.fullmatch(r"(.+) \((/\S+)\)", got)
        assert m and m.group(1) == version, (f, got)
