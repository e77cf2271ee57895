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

# cc as Debian's gcc-12-locales has it write its diagnostics in German, in
# the locale gettext picks: LC_ALL, else LC_MESSAGES, else LANG, with
# LANGUAGE's first language before that one unless it is C (or POSIX).
# Only what it says changes, as with the real catalog.
GERMAN_CC = r"""#!/bin/sh
l=${LC_ALL:-${LC_MESSAGES:-${LANG:-C}}}
case $l in C | POSIX) ;; *) l=${LANGUAGE:-$l} ;; esac
case $l in de*) ;; *) exec cc "$@" ;; esac
e=$(mktemp) || exit 1
cc "$@" 2> "$e"
s=$?
sed -e 's/fatal error: /schwerwiegender Fehler: /' -e 's/error: /Fehler: /' \
    -e 's/compilation terminated\./Kompilierung beendet./' "$e" >&2
rm -f "$e"
exit $s
"""
