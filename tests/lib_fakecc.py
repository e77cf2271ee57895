"""FAKE_CC, shared by the tests that make a host's agent misbehave: a
compiler script that builds the real agent with cc, then wraps it in a
shell script whose body (the %s) filters or replaces what it does."""

FAKE_CC = """#!/bin/sh
# A compiler that builds the real agent, then wraps it to misbehave.
out=; prev=
for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
cc "$@" || exit 1
case "$out" in
*/seqorch-agent)
    mv "$out" "$out.real"
    cat > "$out" <<'WRAP'
#!/bin/sh
# The agent appends its records to --out FILE; filter them on the way.
# Rotate the arguments, dropping --out FILE and keeping each word whole.
skip=0; out=; n=$#
while [ $n -gt 0 ]; do
    a=$1; shift; n=$((n - 1))
    if [ $skip = 1 ]; then out=$a; skip=0; continue; fi
    if [ "$a" = --out ]; then skip=1; continue; fi
    set -- "$@" "$a"
done
%s
WRAP
    chmod +x "$out" ;;
esac
"""
