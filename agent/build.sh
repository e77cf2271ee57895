#!/bin/sh
# Builds seqorch-agent on a measured host; the coordinator uploads this
# script with the sources and runs it from the source directory:
#
#   sh agent/build.sh OUTDIR CC CFLAGS
#
# CC and CFLAGS are split into words on purpose (CC may be "ccache gcc",
# CFLAGS a list of flags); globbing is off, and no expansion here ever
# evaluates their contents.  Writes OUTDIR/seqorch-agent, OUTDIR/commands
# (every compile command, exactly), OUTDIR/build.log and OUTDIR/meta
# (key=value facts about the compiler and the result).
set -u
cd "$(dirname "$0")/.." || exit 1
set -f
out=$1
cc=$2
cflags=$3
mkdir -p "$out/obj" || exit 1
: > "$out/commands"
: > "$out/build.log"

target=$($cc -dumpmachine 2>>"$out/build.log") || {
	echo "compiler \"$cc\" does not run" >> "$out/build.log"
	exit 1
}
arch=${target%%-*}
version=$($cc --version 2>/dev/null | head -n 1)

# What -march=native / -mcpu=native resolved to, where the compiler says.
native=
case " $cflags " in
*native*)
	native=$($cc $cflags -Q --help=target 2>/dev/null |
	    awk '($1 == "-march=" || $1 == "-mcpu=" || $1 == "-mtune=") \
	    && $2 != "" { printf "%s%s ", $1, $2 }')
	if [ -z "$native" ]; then
		native=$($cc $cflags -### -c -x c /dev/null 2>&1 |
		    tr ' ' '\n' | awk 'p { gsub(/"/, ""); print; exit }
		    /"-target-cpu"/ { p = 1 }')
	fi
	;;
esac

run() {
	echo "$*" >> "$out/commands"
	"$@" >> "$out/build.log" 2>&1
}

objs=
n=0
compile() {
	n=$((n + 1))
	o="$out/obj/$n.o"
	# shellcheck disable=SC2086
	run $cc $cflags -std=c11 -D_GNU_SOURCE -Ikernels -Iagent $2 -c "$1" \
	    -o "$o" || exit 1
	objs="$objs $o"
}

set +f
for f in agent/*.c kernels/*/study.c; do
	[ -f "$f" ] && compile "$f" ""
done
for d in kernels/*/*/; do
	d=${d%/}
	if [ -f "$d/arch" ] && [ "$(cat "$d/arch")" != "$arch" ]; then
		continue
	fi
	vflags=
	[ -f "$d/flags" ] && vflags=$(cat "$d/flags")
	for f in "$d"/kernel.c "$d"/kernel.S; do
		[ -f "$f" ] && compile "$f" "$vflags"
	done
done
set -f
# shellcheck disable=SC2086
run $cc $cflags -o "$out/seqorch-agent" $objs -lcjson -lcrypto || exit 1

sum=$( (sha256sum "$out/seqorch-agent" 2>/dev/null ||
    shasum -a 256 "$out/seqorch-agent") | cut -d ' ' -f 1)
{
	echo "target=$target"
	echo "version=$version"
	echo "native=$native"
	echo "binary_sha256=$sum"
} > "$out/meta"
