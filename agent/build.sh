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
# (key=value facts about the compiler and the result) and OUTDIR/openssl
# (the host's `openssl version`, which the coordinator records per build).
set -u
cd "$(dirname "$0")/.." || exit 1
set -f
out=$1
cc=$2
cflags=$3
mkdir -p "$out/obj" || exit 1
: > "$out/commands"
: > "$out/build.log"
openssl version > "$out/openssl" 2>/dev/null || : > "$out/openssl"

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

# Objects are named 1.o, 2.o... so the link line never splits a path.
objs=
n=0
compile() {
	n=$((n + 1))
	# shellcheck disable=SC2086
	run $cc $cflags -std=c11 -D_GNU_SOURCE -Ikernels -Iagent $2 -c "$1" \
	    -o "$out/obj/$n.o" || exit 1
	objs="$objs $n.o"
}

# kernels/registry.sh decides which kernel files build on this target and
# with which flags (each variant's own), and writes the agent's table.
reg() {
	sh kernels/registry.sh "$@" 2>>"$out/build.log" || {
		echo "kernels/registry.sh $1 failed" >> "$out/build.log"
		exit 1
	}
}
reg agent "$arch" > "$out/registry-table.c" || exit 1
# Globbing is on only while listing sources, never while flags expand.
set +f
set -- agent/*.c
set -f
for f; do
	[ -f "$f" ] && compile "$f" ""
done
compile "$out/registry-table.c" ""
for f in $(reg files "$arch"); do
	compile "$f" "$(reg cflags "$f")"
done
echo "cd $out/obj" >> "$out/commands"
# shellcheck disable=SC2086
(cd "$out/obj" && run $cc $cflags -o ../seqorch-agent $objs -lcjson \
    -lcrypto) || exit 1

sum=$( (sha256sum "$out/seqorch-agent" 2>/dev/null ||
    shasum -a 256 "$out/seqorch-agent") | cut -d ' ' -f 1)
# meta marks a usable build, and a build without its hash is not one.
[ -n "$sum" ] || {
	echo "neither sha256sum nor shasum works on this host" >> "$out/build.log"
	exit 1
}
{
	echo "target=$target"
	echo "version=$version"
	echo "native=$native"
	echo "binary_sha256=$sum"
} > "$out/meta"
