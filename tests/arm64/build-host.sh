#!/bin/sh
# Builds the emulated arm64 Linux host the integration tests measure
# beside this x86-64 machine (tests/arm64.py starts it, docs/hacking.md
# says how), from Debian packages only:
#
#   sh tests/arm64/build-host.sh CACHE
#
# CACHE/rootfs   a Debian bookworm arm64 root filesystem (mmdebstrap, from
#                the mirrors apt is configured with here) holding what the
#                agent needs to build on a host: a C compiler (behind
#                ccache), libc, the OpenSSL headers, objdump, openssl; no
#                cJSON (issue 33); cmake, make and g++ for RandomX
#                (tests/arm64.py's overlays can remove the headers, cmake
#                and g++)
# CACHE/qemu-aarch64-cpu-max   a small static program that runs
#                qemu-aarch64-static -cpu max, so that the emulated CPU has
#                SHA3, SHA512, SVE and SVE2 (BITPERM), as a Graviton does
#
# and registers that program as the binfmt_misc interpreter of aarch64 ELF
# files (entry "seqorch-aarch64", flag F: the kernel opens it now, so that
# it runs inside a chroot too).  The program itself execs
# /usr/bin/qemu-aarch64-static by path, which therefore sits in the rootfs
# too (copied from this machine).
#
# Idempotent: a rootfs whose stamp matches the package list is reused
# (this machine's qemu copied in again when it changed), the entry is left
# as it is when it already names the same or an identical interpreter;
# concurrent calls wait for each other (flock).  Run as root (mmdebstrap's
# root mode, binfmt_misc).  Needs mmdebstrap, qemu-user-static and a C
# compiler with a static libc (the Makefile's DEBS_ARM64).  Prints
# CACHE/rootfs.
set -eu
. "$(dirname "$0")/../lib-rootfs.sh"

cache=${1:?usage: build-host.sh CACHE}
qemu=/usr/bin/qemu-aarch64-static
binfmt=/proc/sys/fs/binfmt_misc
entry=seqorch-aarch64
# What the agent's build and the coordinator's probes run on a host
# (agent/build.sh, orchestrator/remote-scripts.c), RandomX's build (cmake,
# make, g++: kernels/randomx/prebuild.sh) and ccache (below); util-linux
# (lscpu), coreutils and mawk come with the base system.
packages=gcc,g++,cmake,make,libc6-dev,libssl-dev,openssl,binutils,procps,ccache

die() {
	echo "build-host.sh: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, binfmt_misc)"
[ -x "$qemu" ] || die "no $qemu (install qemu-user-static)"
command -v mmdebstrap >/dev/null || die "no mmdebstrap (install mmdebstrap)"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
# One build at a time: the others wait, then find it made.
exec 9> "$cache/lock"
flock 9
wrapper=$cache/qemu-aarch64-cpu-max

# The interpreter: a static binary, as binfmt_misc's F flag runs it in
# whatever root the aarch64 program lives in.  Without the P flag the
# kernel passes it the program's path, then the program's arguments.
src=$cache/qemu-aarch64-cpu-max.c
cat > "$src.tmp" <<EOF
#include <stdio.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char *args[argc + 3];
	int i;

	args[0] = "$qemu";
	args[1] = "-cpu";
	args[2] = "max";
	for (i = 1; i < argc; i++)
		args[i + 2] = argv[i];
	args[argc + 2] = NULL;
	execv(args[0], args);
	perror("$qemu");
	return 127;
}
EOF
if [ -x "$wrapper" ] && cmp -s "$src.tmp" "$src"; then
	rm -f "$src.tmp"
else
	mv "$src.tmp" "$src"
	${CC:-cc} -O2 -static -o "$wrapper.tmp" "$src"
	mv "$wrapper.tmp" "$wrapper"
fi

# The entry, unless it exists with this interpreter or an identical one
# (another cache's, SEQORCH_ARM64_CACHE: replacing the entry under a run
# that uses it would fail its execs in between).  A newer entry is
# matched first, so another aarch64 entry (qemu-user-binfmt's) may stay.
[ -w "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" ||
    die "cannot mount binfmt_misc on $binfmt"
if [ -f "$binfmt/$entry" ]; then
	current=$(sed -n 's/^interpreter //p' "$binfmt/$entry")
	[ "$current" = "$wrapper" ] || cmp -s "$current" "$wrapper" ||
	    echo -1 > "$binfmt/$entry"
fi
if [ ! -f "$binfmt/$entry" ]; then
	magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
	mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
	printf '%s\n' ":$entry:M::$magic:$mask:$wrapper:F" > "$binfmt/register"
fi
grep -qx enabled "$binfmt/$entry" || die "binfmt entry $entry is disabled"

# mmdebstrap runs the packages' scripts through the entry above, so qemu is
# in the rootfs while it builds; it removes it at the end.
rootfs_build "$cache" "$packages" build-host.sh \
    mmdebstrap --quiet --mode=root --arch=arm64 --variant=minbase \
    --include="$packages" \
    --setup-hook="mkdir -p \"\$1/usr/bin\" && cp $qemu \"\$1$qemu\"" \
    bookworm "$cache/rootfs.tmp" || die "cannot build the rootfs in $cache"
cmp -s "$qemu" "$cache/rootfs$qemu" || cp "$qemu" "$cache/rootfs$qemu"
# cc and gcc on PATH are ccache (its masquerade: it runs the next one on
# PATH, /usr/bin's), its cache in the user's home, so a host's second
# agent build with the same compiler and flags (sha3's has OpenSSL's
# perlasm sources, the other studies' not) compiles only what differs:
# under qemu every compile takes seconds.  The compiler is still the
# host's gcc, run by the host.
for c in cc gcc; do
	[ -L "$cache/rootfs/usr/local/bin/$c" ] ||
	    ln -s ../../bin/ccache "$cache/rootfs/usr/local/bin/$c"
done
echo "$cache/rootfs"
