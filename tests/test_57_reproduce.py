"""The seeds as units a user can name: study groups (`--study div`),
`seqorch reproduce` and the published tables beside the measured ones."""
from conftest import query, seqorch


def test_group_runs_its_studies_in_order(scratch):
    # Seed 001's "division" is div32 then div64; div32 named again warns.
    r = seqorch(scratch, "run", "--study", "div,div32", "--hosts", "local",
                "--steps", "200", "--samples", "1", "--variants", "c-div")
    assert r.returncode == 0, r.stderr
    assert ('seqorch: warning: study "div32" is named twice: it runs '
            'twice, each time as a run of its own') in r.stderr
    runs = query(scratch / "results.db", "SELECT study FROM runs ORDER BY id")
    assert [s for s, in runs] == ["div32", "div64", "div32"]
    st = seqorch(scratch, "studies")
    assert "div: group, --study div runs div32,div64 in that order" \
        in st.stdout.splitlines()
