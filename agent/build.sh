#!/bin/sh
# Builds seqorch-agent on a measured host; the coordinator uploads this
# script with the sources and runs it from the source directory:
#
#   sh agent/build.sh OUTDIR CC CFLAGS [STUDY TARGETING ARTIFACTS [GENERATED]]
#
# STUDY, TARGETING and ARTIFACTS come together, for a study that needs
# them (kernels/kernel.h): TARGETING "native" adds -march=native
# (-mcpu=native on AArch64/Arm) to CFLAGS for everything built, "default"
# nothing; when the study has kernels/STUDY/prebuild.sh it runs first
# (sh kernels/STUDY/prebuild.sh OUTDIR/prebuild CC CFLAGS ARTIFACTS
# TARGETING, ARTIFACTS being the directory of the uploaded artifacts, named
# by their SHA-256), its commands join OUTDIR/commands, its output the log,
# its OUTDIR/prebuild/libs the link line and its OUTDIR/prebuild/meta the
# file OUTDIR/extra; then the study's variants are built.  GENERATED is
# the directory of the sources the coordinator generated from the study's
# artifacts (orchestrator/generate.h), one folder per artifact: the
# variants that need one are built from it (SEQORCH_GENERATED, read by
# kernels/registry.sh) and each folder's meta joins OUTDIR/extra.
#
# CC and CFLAGS are split into words on purpose (CC may be "ccache gcc",
# CFLAGS a list of flags); globbing is off, and no expansion here ever
# evaluates their contents.  Writes OUTDIR/seqorch-agent, OUTDIR/commands
# (every compile command, exactly), OUTDIR/build.log and OUTDIR/meta
# (key=value facts about the compiler and the result) and OUTDIR/openssl
# (the libcrypto the agent loads, `seqorch-agent --openssl`, which the
# coordinator records per build).
set -u
cd "$(dirname "$0")/.." || exit 1
set -f
out=$1
cc=$2
cflags=$3
study=${4:-}
targeting=${5:-}
artifacts=${6:-}
SEQORCH_GENERATED=${7:-}
export SEQORCH_GENERATED
mkdir -p "$out/obj" || exit 1

# What the build is doing, one line a step ("@@seqorch:step TEXT"), on fd
# 3 when the caller opened it (rscript_build does: the coordinator shows
# it live; a build_wrapper may not pass it on, and then nothing is said).
if { true >&3; } 2>/dev/null; then
	step() { echo "@@seqorch:step $*" >&3; }
else
	step() { :; }
fi
: > "$out/commands"
: > "$out/build.log"
: > "$out/openssl"

# kernels/registry.sh decides which kernel files build on this target and
# with which flags (each variant's own), writes the agent's table and names
# the target's architecture (Apple clang's arm64 is aarch64).
reg() {
	sh kernels/registry.sh "$@" 2>>"$out/build.log" || {
		echo "kernels/registry.sh $1 failed" >> "$out/build.log"
		exit 1
	}
}

target=$($cc -dumpmachine 2>>"$out/build.log") || {
	echo "compiler \"$cc\" does not run" >> "$out/build.log"
	exit 1
}
arch=$(reg arch "$target") || exit 1
version=$($cc --version 2>/dev/null | head -n 1)
case $targeting in
'' | default) ;;
native)
	case $arch in
	aarch64 | arm*) cflags="$cflags -mcpu=native" ;;
	*) cflags="$cflags -march=native" ;;
	esac
	;;
*)
	echo "unknown targeting \"$targeting\" (default, native)" \
	    >> "$out/build.log"
	exit 1
	;;
esac

# The flags of a cc entry ("clang -O3 -march=native": its words from the
# first that starts with "-") are the build's as much as CFLAGS are, so
# what native resolved to and what each variant was compiled for are read
# from both: $flags, the command being "$cc_cmd $flags" (= "$cc $cflags").
cc_cmd= flags=
for w in $cc; do
	case $flags$w in
	-*) flags="$flags${flags:+ }$w" ;;
	*) cc_cmd="$cc_cmd${cc_cmd:+ }$w" ;;
	esac
done
flags="$flags${flags:+ }$cflags"

# What the compiler makes of flags $1: gcc's -Q --help=target (every
# target option's value), else clang's cc1 line (-target-cpu and its
# -target-feature words), one a line.
target_options() {
	# shellcheck disable=SC2086
	o=$($cc_cmd $1 -Q --help=target 2>/dev/null) && [ -n "$o" ] ||
	    o=$($cc_cmd $1 -### -c -x c /dev/null 2>&1 | tr ' ' '\n' | awk 'p {
		gsub(/"/, ""); print; p = 0 } /^"-target-(cpu|feature)"$/ { p = 1 }')
	printf '%s\n' "$o"
}

# What -march=native / -mcpu=native / -mtune=native resolved to, where the
# compiler says: $native as "-march=A -mcpu=C -mtune=T" (gcc) or the CPU
# (clang), and each in res_march, res_mcpu, res_mtune.  A compiler that
# does not know the CPU (gcc 12 on a Neoverse V2) resolves native to its
# generic target, and its options are then the same as without native:
# native_generic=1, which the coordinator warns about.
native= native_generic= res_march= res_mcpu= res_mtune=
case " $flags " in
*=native*)
	with=$(target_options "$flags")
	plain=
	for w in $flags; do
		case $w in
		-march=native | -mcpu=native | -mtune=native) ;;
		*) plain="$plain $w" ;;
		esac
	done
	[ "$with" != "$(target_options "$plain")" ] || native_generic=1
	opt() {
		printf '%s\n' "$with" | awk -v k="-$1=" '$1 == k && $2 != "" {
		    print $2; exit }'
	}
	res_march=$(opt march) res_mcpu=$(opt mcpu) res_mtune=$(opt mtune)
	native=$(echo ${res_march:+-march=$res_march} \
	    ${res_mcpu:+-mcpu=$res_mcpu} ${res_mtune:+-mtune=$res_mtune})
	if [ -z "$native" ]; then
		native=$(printf '%s\n' "$with" | sed -n 1p)
		res_march=$native res_mcpu=$native res_mtune=$native
	fi
	;;
esac

# The CPU the build's flags name (the last -mcpu=; "native" as gcc's
# driver resolves it, with the features it found), or "" for none.  gcc
# lets a variant's -march=ARCH+FEATURES replace that CPU's architecture
# ("switch -mcpu=... conflicts with -march=..."), so such a variant is
# compiled for -mcpu=CPU+FEATURES instead: the host's CPU, plus what the
# variant needs.  clang keeps the CPU by itself and is left alone, as is
# a native that the compiler could not resolve (it is generic then).
mcpu=
case $version in
*clang*) ;;
*)
	for w in $flags; do
		case $w in -mcpu=*) mcpu=${w#-mcpu=} ;; esac
	done
	if [ "$mcpu" = native ]; then
		mcpu=$($cc $cflags -### -c -x c /dev/null 2>&1 | tr ' ' '\n' |
		    sed -n 's/^"*-mcpu=\([^"]*\)"*$/\1/p' | tail -n 1)
		[ "$mcpu" != native ] || mcpu=
		# the CPU with the features the driver found
		[ -z "$mcpu" ] || res_mcpu=$mcpu
	fi
	;;
esac

# A variant's own flags ($1), -march=ARCH+FEATURES turned into
# -mcpu=CPU+FEATURES when the build names a CPU (above).
variant_flags() {
	vf=
	for w in $1; do
		case $mcpu:$w in
		?*:-march=*+*) w="-mcpu=$mcpu+${w#-march=*+}" ;;
		esac
		vf="$vf${vf:+ }$w"
	done
	printf '%s\n' "$vf"
}

# What a variant was compiled for: the last -march, -mcpu and -mtune of
# the build's flags and its own ($2), a native one as the compiler
# resolved it (above; left "native" where it does not say), as
# OUTDIR/extra's compiled_for.STUDY/VARIANT (builds.extra); once for a
# variant of two files, kernel.c and kernel.S (one flags file, listed one
# after the other by registry.sh files).
compiled_last=
compiled_for() {
	v=${1#kernels/}
	v=${v%/*}
	[ "$v" != "$compiled_last" ] || return 0
	compiled_last=$v
	ma= mc= mt=
	for w in $flags $2; do
		case $w in
		-march=*) ma=$w ;;
		-mcpu=*) mc=$w ;;
		-mtune=*) mt=$w ;;
		esac
	done
	[ "$ma" != -march=native ] || ma=-march=${res_march:-native}
	[ "$mc" != -mcpu=native ] || mc=-mcpu=${res_mcpu:-native}
	[ "$mt" != -mtune=native ] || mt=-mtune=${res_mtune:-native}
	printf '%s\n' "compiled_for.$v=$(echo $ma $mc $mt)" >> "$out/extra"
}

# printf, not echo: dash's echo and macOS's /bin/sh's (bash, xpg_echo)
# turn a backslash in a flag or path into a tab or a newline.
run() {
	printf '%s\n' "$*" >> "$out/commands"
	"$@" >> "$out/build.log" 2>&1 3>&-
}

# Objects are named 1.o, 2.o... so the link line never splits a path.
objs=
n=0
compile() {
	n=$((n + 1))
	step "compiling $n/$total ${1#"$out"/}"
	# shellcheck disable=SC2086
	run $cc $cflags -std=c11 -D_GNU_SOURCE -Ikernels -Iagent $2 -c "$1" \
	    -o "$out/obj/$n.o" || exit 1
	objs="$objs $n.o"
}

# The study's own build on this host (RandomX from its fetched source),
# before the variants that link it.
libs=
: > "$out/extra"
SEQORCH_PREBUILT=
if [ -n "$study" ] && [ -f "kernels/$study/prebuild.sh" ]; then
	mkdir -p "$out/prebuild" || exit 1
	: > "$out/prebuild/commands"
	printf '%s\n' "sh kernels/$study/prebuild.sh $out/prebuild $cc $cflags \
$artifacts $targeting" >> "$out/commands"
	sh "kernels/$study/prebuild.sh" "$out/prebuild" "$cc" "$cflags" \
	    "$artifacts" "$targeting" >> "$out/build.log" 2>&1
	prc=$?
	cat "$out/prebuild/commands" >> "$out/commands"
	if [ $prc -ne 0 ] || [ ! -s "$out/prebuild/libs" ]; then
		echo "kernels/$study/prebuild.sh failed (status $prc)" \
		    >> "$out/build.log"
		exit 1
	fi
	libs=$(cat "$out/prebuild/libs")
	cat "$out/prebuild/meta" >> "$out/extra" 2>/dev/null
	SEQORCH_PREBUILT=$study
fi
export SEQORCH_PREBUILT
if [ -n "$SEQORCH_GENERATED" ]; then
	set +f
	for m in "$SEQORCH_GENERATED"/*/meta; do
		[ -f "$m" ] && cat "$m" >> "$out/extra"
	done
	set -f
fi

# The libraries variants need (libcrypto), as this compiler with these
# flags links them: one it cannot leaves its variants out, skipped with
# the reason (SEQORCH_NOLIBS, kernels/registry.sh), and the rest build.
# The agent itself needs only the compiler and libc; with libcrypto it
# also says which one it loaded (SEQORCH_LIBCRYPTO, agent/facts.c).
step "probing the libraries variants need"
printf '%s\n' "sh kernels/registry.sh libs $cc $cflags $out/probe" \
    >> "$out/commands"
probed=$(reg libs "$cc" "$cflags" "$out/probe") || exit 1
rm -rf "$out/probe"
tab=$(printf '\t')
SEQORCH_NOLIBS=$(printf '%s\n' "$probed" | grep -v "${tab}ok\$" || true)
export SEQORCH_NOLIBS
linklibs= agentdefs=
for w in $(printf '%s\n' "$probed" | sed -n "s/${tab}ok\$//p"); do
	linklibs="$linklibs $w"
	[ "$w" != -lcrypto ] || agentdefs=-DSEQORCH_LIBCRYPTO
done
if [ -n "$SEQORCH_NOLIBS" ]; then
	printf '%s\n' "$SEQORCH_NOLIBS" | while IFS="$tab" read -r w why; do
		echo "without $w: its variants are skipped ($why)"
	done >> "$out/build.log"
fi

reg agent "$arch" > "$out/registry-table.c" || exit 1
kfiles=$(reg files "$arch") || exit 1
# Globbing is on only while listing sources, never while flags expand.
set +f
set -- agent/*.c
set -f
# Every compile and the link: the steps' denominator.
total=$(($# + 2))
for f in $kfiles; do total=$((total + 1)); done
for f; do
	[ -f "$f" ] && compile "$f" "$agentdefs"
done
compile "$out/registry-table.c" ""
for f in $kfiles; do
	vflags=$(variant_flags "$(reg cflags "$f")")
	case $f in
	kernels/*/*/kernel.*) compiled_for "$f" "$vflags" ;;
	esac
	compile "$f" "$vflags"
done
step "linking seqorch-agent"
printf '%s\n' "cd $out/obj" >> "$out/commands"
# shellcheck disable=SC2086
(cd "$out/obj" && run $cc $cflags -o ../seqorch-agent $objs $libs $linklibs \
    -ldl) || exit 1

sum=$( (sha256sum "$out/seqorch-agent" 2>/dev/null ||
    shasum -a 256 "$out/seqorch-agent") | cut -d ' ' -f 1)
# meta marks a usable build, and a build without its hash is not one.
[ -n "$sum" ] || {
	echo "neither sha256sum nor shasum works on this host" >> "$out/build.log"
	exit 1
}
# The libcrypto the agent loads (facts_libcrypto), not the `openssl`
# command on PATH: on macOS that is LibreSSL's, whatever the agent links.
# Unknown (empty) when it does not answer: the run then says why.
"$out/seqorch-agent" --openssl > "$out/openssl" 2>> "$out/build.log" || {
	echo "seqorch-agent --openssl failed: builds.openssl stays unknown" \
	    >> "$out/build.log"
	: > "$out/openssl"
}
{
	echo "target=$target"
	echo "version=$version"
	echo "native=$native"
	echo "native_generic=$native_generic"
	echo "targeting=${targeting:-default}"
	echo "binary_sha256=$sum"
} > "$out/meta"
