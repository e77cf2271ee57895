"""Turns a real agent's records (stdin) into a hostile stream (stdout) for
the protocol tests: python3 bad_agent.py MODE.  Every mode starts from the
real records and breaks one rule of docs/protocol.md."""
import json
import sys


def main(mode):
    recs = [json.loads(line) for line in sys.stdin if line.strip()]
    out = []
    seen_sample = False
    for r in recs:
        t = r["type"]
        if mode == "unrequested" and t == "variant" and \
                r["variant"] == "c-fused":
            out.append(r)
            out.append(dict(r, variant="c-unrolled"))
            continue
        if mode == "dupdiff" and t == "sample" and not seen_sample:
            seen_sample = True
            out.append(r)
            out.append(dict(r, ns=r["ns"] + 1))
            continue
        if mode == "donecount" and t == "done":
            r = dict(r, samples=r["samples"] + 1)
        if mode == "endfirst" and t == "window":
            r = dict(r, phase="end" if r["phase"] == "begin" else "begin")
        if mode == "twobegins" and t == "window" and r["phase"] == "begin":
            out.append(r)
        if mode == "nowindow" and t == "window":
            continue
        if mode == "okfailed" and t == "variant" and \
                r["variant"] == "c-fused":
            out.append(r)
            r = dict(r, status="failed", reason="known answer wrong")
        if mode == "selftest" and t == "selftest":
            r = dict(r, digest="f" + r["digest"][1:])
        if mode == "buildid" and t == "sample":
            r = dict(r, build_id="999")
        if mode == "waits" and t == "window" and r["phase"] == "begin":
            out.extend({"type": "wait", "holder": "x"} for _ in range(20000))
        if mode == "ctrl" and t == "window":
            r = {"type": "error", "message": "disk \x1b[2J\x1b[31mon fire"}
            out.append(r)
            break
        out.append(r)
    for r in out:
        print(json.dumps(r))


main(sys.argv[1])
