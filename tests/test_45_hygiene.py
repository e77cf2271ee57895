"""Measurement hygiene (docs/measurement.md): counters per sample with
their source, the noise preflight, cpu = "auto", and the coordinator kept
off a local agent's CPU.  The preflight and the CPU choice are tested
against the recorded trees in tests/sysfs/ (SEQORCH_SYSFS_ROOT, test-only)
and against this machine's real /sys and /proc."""
import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import AGENT, ROOT, SEQORCH, query, seqorch, sha3_chain, \
    write_hosts

TREES = ROOT / "tests" / "sysfs"


def agent(*args, env=None, root=None):
    """Run the agent; returns (exit status, records, stderr)."""
    e = dict(os.environ if env is None else env)
    if root is not None:
        e["SEQORCH_SYSFS_ROOT"] = str(root)
    p = subprocess.run([str(AGENT), *map(str, args)], capture_output=True,
                       text=True, timeout=120, env=e)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()], \
        p.stderr


def preflight(root, cpu="auto"):
    rc, recs, err = agent("--preflight", "--cpu", cpu, root=root)
    assert rc == 0, err
    (rec,) = recs
    assert rec["type"] == "preflight"
    return rec


class StatFifo:
    """/proc/stat as a FIFO that hands out two recorded reads in turn, so
    that every pair of reads the agent makes sees the same CPU activity
    between them (a static file shows none)."""

    def __init__(self, path, before, after):
        self.path, self.texts, self.stop = path, (before, after), False
        path.unlink()
        os.mkfifo(path)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        i = 0
        while not self.stop:
            try:
                with open(self.path, "w") as f:
                    f.write(self.texts[i % 2])
            except OSError:
                return
            i += 1
            # Until that reader closes, an open for writing would join its
            # pipe and append the next text to this one.
            while not self.stop:
                try:
                    fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    break
                os.close(fd)
                time.sleep(0.001)

    def close(self):
        self.stop = True
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
        self.thread.join(5)


def stat_text(cpus):
    """A /proc/stat with user system idle ... steal per cpu."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for c, (user, idle, steal) in enumerate(cpus):
        lines.append(f"cpu{c} {user} 0 100 {idle} 0 0 0 {steal} 0 0")
    return "\n".join(lines) + "\n"


@pytest.fixture
def tree(tmp_path):
    """A writable copy of a recorded tree."""
    def copy(name):
        dst = tmp_path / name
        shutil.copytree(TREES / name, dst)
        return dst
    return copy


# The preflight and cpu = "auto" against recorded trees.

def test_hybrid_picks_a_performance_core_and_sees_turbo():
    rec = preflight(TREES / "hybrid-adl")
    # 16-19 are the E-cores (cpu/types intel_atom): never picked, though
    # the highest numbered; cpu 15 is the last P-core thread.
    assert rec["cpu"] == 15, rec
    assert "performance core (cpu/types intel_core)" in rec["cpu_choice"]
    assert "smt sibling cpu 14" in rec["cpu_choice"]
    assert rec["verdict"] == "noisy"
    assert rec["reasons"] == [
        'governor "powersave" on cpu 15 (not performance)',
        "turbo on (intel_pstate/no_turbo 0)"]
    assert "another seqorch-agent waits (pid 4242, state S)" in rec["notes"]
    assert "cpu 15 not in nohz_full (none)" in rec["notes"]
    assert "thermal throttle counts 60 since boot, none new" in rec["notes"]


def test_hybrid_from_the_perf_pmus_alone(tree):
    root = tree("hybrid-adl")
    shutil.rmtree(root / "sys/devices/system/cpu/types")
    rec = preflight(root)
    assert rec["cpu"] == 15
    assert "performance core (cpu_core pmu)" in rec["cpu_choice"]


def test_isolated_cpu_is_preferred(tree):
    root = tree("hybrid-adl")
    (root / "sys/devices/system/cpu/isolated").write_text("4-5\n")
    rec = preflight(root)
    assert rec["cpu"] == 5
    assert rec["cpu_choice"].endswith("; isolated (isolcpus 4-5)")
    assert "cpu 5 in isolcpus (4-5)" in rec["notes"]


def test_big_little_by_capacity():
    rec = preflight(TREES / "arm-biglittle")
    assert rec["cpu"] == 7
    assert "performance core (cpu_capacity 1024)" in rec["cpu_choice"]
    assert rec["reasons"] == [
        'governor "schedutil" on cpu 7 (not performance)']


@pytest.mark.parametrize("cpu,part", [("auto", "0xd0b"), ("2", "0xd05"),
                                      ("none", "0xd05")])
def test_big_little_cpu_model_is_the_measured_cores(cpu, part):
    """Each core's block of /proc/cpuinfo names its part, and cpu 0 is a
    little one (Cortex-A55, 0xd05): the facts name the core the agent is
    pinned to (cpu 7, a Cortex-A76, 0xd0b), the first block without one."""
    rc, recs, err = agent("--study", "mul", "--variants", "c", "--steps",
                          "10", "--samples", "1", "--cpu", cpu,
                          root=TREES / "arm-biglittle")
    assert rc == 0, err
    (facts,) = [r for r in recs if r["type"] == "facts"]
    assert facts["cpu_model"] == f"0x41 part {part}", facts


def test_tuned_server_is_quiet():
    rec = preflight(TREES / "quiet-server")
    assert rec["cpu"] == 3 and rec["verdict"] == "quiet"
    assert rec["reasons"] == []
    assert "isolated (isolcpus 3)" in rec["cpu_choice"]
    for note in ("governor performance on cpu 3", "cpu 3 in isolcpus (3)",
                 "cpu 3 in nohz_full (3)", "load 0.02 on 4 cpus",
                 "thermal throttle counts 0 since boot, none new"):
        assert note in rec["notes"]


def test_busy_sibling_and_steal(tree):
    root = tree("quiet-server")
    before = stat_text([(1000, 5000, 0)] * 4)
    # Between the reads cpu 1 (the sibling of cpu 3) is half busy and the
    # hypervisor took a fifth of cpu 3.
    after = stat_text([(1000, 5100, 0), (1050, 5050, 0), (1000, 5100, 0),
                       (1000, 5080, 20)])
    # The FIFO hands out reads in pairs; on a loaded machine a reader can
    # open it in the instant the server probes for the last one and read
    # nothing ("busy unknown"): such a pass is a harness miss, run again.
    for _ in range(5):
        fifo = StatFifo(root / "proc/stat", before, after)
        try:
            rec = preflight(root, cpu="3")
            auto = preflight(root)
        finally:
            fifo.close()
        if not any("busy unknown" in str(r["cpu_choice"]) for r in (rec, auto)):
            break
        (root / "proc/stat").unlink()
        (root / "proc/stat").write_text(before)
    assert rec["verdict"] == "noisy"
    assert rec["reasons"] == ["steal 20% on cpu 3 (the hypervisor ran "
                              "another guest)", "smt sibling cpu 1 busy 50%"]
    # auto leaves the isolated cpu 3 for cpu 2, whose sibling is idle.
    assert auto["cpu"] == 2, auto
    assert "smt sibling cpu 0 idle (0% busy)" in auto["cpu_choice"]
    assert auto["verdict"] == "quiet", auto


def test_running_agent_and_throttling_are_noisy(tree):
    root = tree("hybrid-adl")
    stat = root / "proc/4242/stat"
    stat.write_text(stat.read_text().replace(") S ", ") R "))
    (root / "proc/loadavg").write_text("14.2 9.0 3.1 13/900 4300\n")
    rec = preflight(root, cpu="3")
    assert "another seqorch-agent is running (pid 4242)" in rec["reasons"]
    assert "load 14.20 on 20 cpus" in rec["reasons"]


def test_own_build_agents_are_not_others(tree):
    """Issue 29, item 7: a conductor's build agents (its children) wait
    for its requests; they are not "another seqorch-agent".  The shell
    writes a running agent whose parent is its own pid, then becomes the
    agent (exec keeps the pid)."""
    root = tree("hybrid-adl")
    (root / "proc/4243").mkdir()
    (root / "proc/4243/comm").write_text("seqorch-agent\n")
    stat = root / "proc/4243/stat"
    line = (root / "proc/4242/stat").read_text().replace(
        "4242 (seqorch-agent) S 4200", "4243 (seqorch-agent) R $$")
    p = subprocess.run(
        ["sh", "-c", f'echo "{line.strip()}" > "$0" && exec "$@"', stat,
         AGENT, "--preflight", "--cpu", "3"], capture_output=True,
        text=True, timeout=120, env={**os.environ,
                                     "SEQORCH_SYSFS_ROOT": str(root)})
    assert p.returncode == 0, p.stderr
    rec, = [json.loads(x) for x in p.stdout.splitlines()]
    assert stat.read_text().split()[3].isdigit()    # the agent's pid
    assert not any("4243" in x for x in rec["reasons"] + rec["notes"]), rec
    # Another agent is still seen.
    assert "another seqorch-agent waits (pid 4242, state S)" in rec["notes"]


def test_unreadable_tree_is_notes_not_guesses(tmp_path):
    rc, recs, err = agent("--preflight", "--cpu", "auto", root=tmp_path)
    assert rc == 0, err
    (rec,) = recs
    assert rec["cpu"] is None
    assert rec["cpu_choice"] == ("cannot read the online cpus from "
                                 "/sys/devices/system/cpu/online")
    assert rec["verdict"] == "quiet" and rec["reasons"] == []
    assert "load unknown (no /proc/loadavg)" in rec["notes"]
    assert "cpu activity unknown (no /proc/stat)" in rec["notes"]


def test_recorded_vm_tree():
    """This VM's own files, recorded: 2 cpus without SMT or cpufreq."""
    rec = preflight(TREES / "this-vm")
    assert rec["cpu"] == 1
    assert rec["cpu_choice"].startswith("cpu 1: not cpu 0 (interrupts)")
    assert "no smt sibling" in rec["cpu_choice"]
    assert "governor unknown (no cpufreq for the cpu)" in rec["notes"]
    assert "cpu 1 not in isolcpus (none)" in rec["notes"]


def read(path):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpulist(text):
    cpus = set()
    for part in filter(None, (text or "").replace("(null)", "").split(",")):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def test_real_sys_agrees_with_python():
    """The agent's reading of this machine's /sys and /proc, checked
    against Python's own reading of the same files."""
    rec = preflight(None)
    sysd = "/sys/devices/system/cpu"
    online = cpulist(read(f"{sysd}/online"))
    cpu = rec["cpu"]
    assert cpu in online
    if len(online) > 1:
        assert cpu != 0
    gov = read(f"{sysd}/cpu{cpu}/cpufreq/scaling_governor")
    if gov is None:
        assert "governor unknown (no cpufreq for the cpu)" in rec["notes"]
    elif gov == "performance":
        assert f"governor performance on cpu {cpu}" in rec["notes"]
    else:
        assert (f'governor "{gov}" on cpu {cpu} (not performance)'
                in rec["reasons"])
    sibs = cpulist(read(f"{sysd}/cpu{cpu}/topology/thread_siblings_list"))
    sibs.discard(cpu)
    if not sibs:
        assert "no smt sibling" in rec["cpu_choice"]
    for s in sibs:
        assert f"smt sibling cpu {s}" in " ".join(
            rec["reasons"] + rec["notes"])
    iso = cpulist(read(f"{sysd}/isolated"))
    assert ("; isolated (isolcpus" if cpu in iso else
            "; not isolated (isolcpus") in rec["cpu_choice"]
    load1 = float(read("/proc/loadavg").split()[0])
    text = f"load {load1:.2f} on {len(online)} cpus"
    # The load may tick between the two reads: compare the cpu count.
    assert any(x.startswith("load ") and x.endswith(f" on {len(online)} "
                                                  "cpus")
               for x in rec["reasons"] + rec["notes"]), (text, rec)
    assert rec["verdict"] == ("noisy" if rec["reasons"] else "quiet")


# Counters.

def test_counters_fallback_on_this_machine():
    rc, recs, err = agent("--study", "sha3", "--steps", "20000",
                          "--samples", "1", "--variants", "c-fused",
                          "--cpu", "none")
    assert rc == 0, err
    facts = next(r for r in recs if r["type"] == "facts")
    sample = next(r for r in recs if r["type"] == "sample")
    if facts["counters"] == "pmu":
        assert facts["counters_error"] is None
        assert sample["cycles_source"] == "pmu" and sample["cycles"] > 0
        return
    assert facts["counters"] == "none"
    why = facts["counters_error"]
    if not os.path.exists("/sys/bus/event_source/devices/cpu"):
        assert why.startswith("no hardware pmu: perf_event_open (cycles) "
                              "failed: E")
        assert "a vm without a virtual pmu?" in why
    else:
        assert "perf_event_paranoid" in why
    # Never a made-up figure: no counts, and the source says so.
    assert sample["cycles"] is None and sample["instructions"] is None
    assert sample["cycles_source"] == "calibration"


def test_counter_seam_runs_the_counter_path():
    env = dict(os.environ, SEQORCH_TEST_COUNTERS="software")
    rc, recs, err = agent("--study", "sha3", "--steps", "20000",
                          "--samples", "2", "--variants", "c-fused",
                          "--cpu", "none", env=env)
    assert rc == 0, err
    facts = next(r for r in recs if r["type"] == "facts")
    assert facts["counters"] == "test-seam"
    samples = [r for r in recs if r["type"] == "sample"]
    assert len(samples) == 2
    for s in samples:
        assert s["cycles_source"] == "test-seam"
        # task-clock: ns this thread ran, enabled around the timed call
        # only, so never more than the sample's wall time (plus the clock
        # reads) and most of it on any machine.
        assert 0 < s["cycles"] <= s["ns"] * 1.01 + 100000, s
        assert s["instructions"] > 0


def test_counter_seam_outside_the_tests_fails_loudly():
    env = {k: v for k, v in os.environ.items()
           if k != "PYTEST_CURRENT_TEST"}
    env["SEQORCH_TEST_COUNTERS"] = "software"
    rc, recs, err = agent("--study", "sha3", "--steps", "1000",
                          "--samples", "1", "--cpu", "none", env=env)
    assert rc == 2
    assert ('test seam SEQORCH_TEST_COUNTERS="software" outside the tests: '
            "unset it") in err
    assert recs[-1]["type"] == "error"
    assert not any(r["type"] == "sample" for r in recs)


# End to end, on the local host.

def hosts(scratch, workdir, cpu):
    write_hosts(scratch / "hosts.toml", workdir)
    text = (scratch / "hosts.toml").read_text()
    (scratch / "hosts.toml").write_text(text.replace("cpu = 0",
                                                     f"cpu = {cpu}"))


def test_run_records_sources_verdicts_and_cpu_choice(scratch, workdir):
    hosts(scratch, workdir, '"auto"')
    env = dict(os.environ, SEQORCH_TEST_COUNTERS="software")
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "3000", "--samples", "2", "--variants",
                "c-fused,openssl-evp", env=env)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    rows = query(db, "SELECT digest, cycles, instructions, cycles_source, "
                 "ns FROM samples")
    assert len(rows) == 4
    for digest, cycles, insns, src, ns in rows:
        assert digest == sha3_chain(3000)
        assert src == "test-seam" and 0 < cycles <= ns * 1.01 + 100000
    (choice, counters, error, facts), = query(
        db, "SELECT cpu_choice, counters, counters_error, facts "
        "FROM run_hosts")
    assert choice.startswith("cpu ") and counters == "test-seam"
    assert error is None and json.loads(facts)["sysfs_root"] is None
    (verdict, pre), = query(db, "SELECT verdict, preflight FROM windows")
    pre = json.loads(pre)
    assert verdict == pre["verdict"] and pre["type"] == "preflight"
    assert verdict in ("quiet", "noisy")
    if verdict == "noisy":
        (msg,), = query(db, "SELECT message FROM events WHERE message "
                        "LIKE 'host is noisy%'")
        assert pre["reasons"][0] in msg
    rep = seqorch(scratch, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    out = rep.stdout
    assert "counters" in out and "noise" in out and "ipc" in out
    assert " test-seam " in out and f"  cpu auto  {choice[:40]}" in out
    doc = json.loads(seqorch(scratch, "report", "--latest",
                             "--format", "json").stdout)
    text = json.dumps(doc)
    assert '"cycles_source": "test-seam"' in text
    assert f'"noisy_windows": {1 if verdict == "noisy" else 0}' in text


def test_run_on_this_machine_uses_the_calibration(scratch, workdir):
    hosts(scratch, workdir, 1)
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "3000", "--samples", "1", "--variants",
                "c-fused")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    (counters, error), = query(db, "SELECT counters, counters_error "
                               "FROM run_hosts")
    (cycles, src), = query(db, "SELECT cycles, cycles_source FROM samples")
    if counters == "pmu":
        assert cycles > 0 and src == "pmu"
        return
    assert counters == "none" and error
    assert cycles is None and src == "calibration"
    rep = seqorch(scratch, "report", "--latest").stdout
    assert " calib " in rep and f"  counters  {error[:40]}" in rep


def test_require_quiet_refuses_a_noisy_host(scratch, workdir):
    hosts(scratch, workdir, '"auto"')
    env = dict(os.environ, SEQORCH_SYSFS_ROOT=str(TREES / "hybrid-adl"))
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "1000", "--samples", "1", "--variants",
                "c-fused", "--require-quiet", env=env)
    assert r.returncode == 1
    db = scratch / "results.db"
    (status, error), = query(db, "SELECT status, error FROM run_hosts")
    assert status == "failed"
    # Pinned to cpu 15 where the machine has it; else the cpu it ran on.
    assert re.search(r'host is noisy, not measuring \(--require-quiet\): '
                     r'governor "powersave" on cpu \d+ \(not performance\); '
                     r'turbo on \(intel_pstate/no_turbo 0\)$', error), error
    assert query(db, "SELECT COUNT(*) FROM samples") == [(0,)]
    assert query(db, "SELECT COUNT(*) FROM windows") == [(0,)]
    # The choice and the test root are on record.
    (choice, facts), = query(db, "SELECT cpu_choice, facts FROM run_hosts")
    assert choice.startswith("cpu 15: ")
    assert json.loads(facts)["sysfs_root"] == str(TREES / "hybrid-adl")


def test_require_quiet_measures_a_quiet_host(scratch, workdir):
    hosts(scratch, workdir, '"auto"')
    env = dict(os.environ, SEQORCH_SYSFS_ROOT=str(TREES / "quiet-server"))
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "1000", "--samples", "1", "--variants",
                "c-fused", "--require-quiet", env=env)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    assert query(db, "SELECT verdict FROM windows") == [("quiet",)]
    assert query(db, "SELECT COUNT(*) FROM samples") == [(1,)]
    rep = seqorch(scratch, "report", "--latest").stdout
    assert "  local  ok" in rep and " quiet" in rep


def test_local_coordinator_leaves_the_agents_cpu(scratch, workdir):
    online = cpulist(read("/sys/devices/system/cpu/online"))
    if len(online) < 2:
        pytest.skip("one cpu: nothing to keep the coordinator off")
    hosts(scratch, workdir, '"auto"')
    p = subprocess.Popen([str(SEQORCH), "run", "--study", "sha3", "--hosts",
                          "local", "--steps", "200000", "--samples", "3",
                          "--variants", "c-fused,openssl-evp"],
                         cwd=scratch, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    db = scratch / "results.db"
    seen = None
    try:
        deadline = time.time() + 300
        while p.poll() is None and time.time() < deadline:
            rows = []
            if db.exists():
                try:
                    rows = query(db, "SELECT message FROM events WHERE "
                                 "message LIKE 'coordinator threads%'")
                except Exception:
                    rows = []
            if rows:
                (msg,), = rows
                cpu = int(msg.split("cpu ")[1].split()[0])
                allowed = [cpulist(line.split(":")[1].strip())
                           for t in Path(f"/proc/{p.pid}/task").iterdir()
                           for line in (read(t / "status") or "")
                           .splitlines()
                           if line.startswith("Cpus_allowed_list")]
                seen = (msg, cpu, allowed)
                break
            time.sleep(0.05)
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert seen is not None, "no event about the coordinator's threads"
    msg, cpu, allowed = seen
    assert msg.startswith(f"coordinator threads kept off the agent's cpu "
                          f"{cpu} (now on cpus ")
    assert allowed and all(cpu not in a for a in allowed), allowed


def test_hosts_check_shows_the_preflight(scratch, workdir):
    hosts(scratch, workdir, '"auto"')
    env = dict(os.environ, SEQORCH_SYSFS_ROOT=str(TREES / "hybrid-adl"))
    r = seqorch(scratch, "hosts", "check", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert ('  noise     noisy: governor "powersave" on cpu 15 (not '
            'performance); turbo on (intel_pstate/no_turbo 0)') in lines
    assert any(x.startswith("  cpu auto  cpu 15: not cpu 0 (interrupts); "
                            "performance core") for x in lines)
    assert any(x.startswith("  seen      ") and "pid 4242" in x
               for x in lines)
    assert "  missing   nothing" in lines
