"""SEQORCH_TRACE shows every operation on a host with its duration and
outcome, like GIT_TRACE: on stderr with 1, appended to a file with an
absolute path, and nothing when unset."""
import os
import re

from conftest import seqorch

LINE = re.compile(r"^seqorch trace: local: (connect|exec|put|read|stat) "
                  r"(.*) -> (ok|exit \d+|error) after \d+\.\d ms", re.M)


def deploy(scratch, **env):
    return seqorch(scratch, "deploy", "--hosts", "local",
                   env={**os.environ, **env})


def test_trace_to_stderr(scratch):
    r = deploy(scratch, SEQORCH_TRACE="1")
    assert r.returncode == 0, r.stderr
    ops = LINE.findall(r.stderr)
    kinds = {k for k, _, _ in ops}
    assert "connect" in kinds and kinds & {"exec", "read", "stat"}, r.stderr
    # Every line is whole and says how it ended.
    traced = [ln for ln in r.stderr.splitlines() if "seqorch trace:" in ln]
    assert len(traced) == len(ops)


def test_trace_to_a_file_and_off(scratch, tmp_path):
    f = tmp_path / "trace.log"
    r = deploy(scratch, SEQORCH_TRACE=str(f))
    assert r.returncode == 0, r.stderr
    assert "seqorch trace:" not in r.stderr
    assert LINE.search(f.read_text())
    r = deploy(scratch, SEQORCH_TRACE="")
    assert r.returncode == 0 and "seqorch trace:" not in r.stderr
    r = deploy(scratch, SEQORCH_TRACE="/nonexistent/dir/trace")
    assert r.returncode == 0
    assert 'cannot open SEQORCH_TRACE file "/nonexistent/dir/trace"' in \
        r.stderr and LINE.search(r.stderr)
