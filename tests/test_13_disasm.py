"""The disassembly check of each build: every variant that declares
instructions gets a row in table disasm; a declared instruction that is not
in the binary is flagged."""
import platform
import sqlite3

from conftest import query, seqorch, write_hosts
from lib_fakecc import FAKE_CC

# The "agent" is a shell script around the real one that claims c-fused
# must contain an instruction; a script has no such function to find.
CLAIM = ('case " $* " in *" --list "*) "$0.real" "$@" | sed '
         '\'/"study":"sha3","variant":"c-fused"/'
         's/"insns":\\[\\]/"insns":["vnotthere"]/\' ;; '
         '*) "$0.real" "$@" --out "$out" ;; esac')


def test_real_variants_contain_their_instructions(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "100", "--samples", "1")
    assert r.returncode == 0, r.stderr
    rows = query(scratch / "results.db", "SELECT variant, status, required, "
                 "excerpt FROM disasm")
    assert rows, "no variant declared instructions"
    for variant, status, required, excerpt in rows:
        assert status == "ok", (variant, status)
        for insn in required.split():
            assert f"\t{insn}" in excerpt, (variant, insn)
    if platform.machine() == "x86_64":
        assert any(v.startswith("avx512") for v, *_ in rows)


def test_unverifiable_claim_is_flagged(scratch, workdir):
    cc = scratch / "cc-claims"
    cc.write_text(FAKE_CC % CLAIM)
    cc.chmod(0o755)
    write_hosts(scratch / "hosts.toml", workdir, f'cc = "{cc}"\n')
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "100", "--samples", "1", "--variants", "c-fused")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    (status, missing, symbol), = query(
        db, "SELECT status, missing, symbol FROM disasm WHERE variant = "
        "'c-fused'")
    assert (status, missing, symbol) == ("no-symbol", None, "c_fused_chain")
    events = [m for m, in query(db, "SELECT message FROM events WHERE "
                               "level = 'warning'")]
    assert any("lack instructions" in m for m in events)


def test_a_binary_is_checked_once_per_host(scratch):
    """A second run of the same binary copies the first check instead of
    disassembling again (the marker shows which); a check that had no
    objdump is not copied."""
    def run():
        r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                    "--steps", "100", "--samples", "1", "--variants",
                    "c-fused,openssl-evp")
        assert r.returncode == 0, r.stderr

    db = scratch / "results.db"
    run()
    (first,), = query(db, "SELECT id FROM builds")
    con = sqlite3.connect(db)
    con.execute("UPDATE disasm SET excerpt = 'marker'")
    con.commit()
    run()
    second = query(db, "SELECT id FROM builds ORDER BY id")[-1][0]
    assert second != first
    copied = query(db, "SELECT variant, status, excerpt FROM disasm WHERE "
                   "build_id = ?", second)
    assert copied and all(e == "marker" for _, _, e in copied), copied
    assert sorted(v for v, *_ in copied) == sorted(
        v for v, in query(db, "SELECT variant FROM disasm WHERE "
                          "build_id = ?", first))
    con.execute("UPDATE disasm SET status = 'no-tool'")
    con.commit()
    con.close()
    run()
    third = query(db, "SELECT id FROM builds ORDER BY id")[-1][0]
    rows = query(db, "SELECT status, excerpt FROM disasm WHERE build_id = ?",
                 third)
    assert rows and all(s == "ok" and e != "marker" for s, e in rows), rows
