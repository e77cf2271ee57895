#!/bin/sh
# make bench: XKCP's single-instance Keccak-p[1600] code as peers of the sha3
# kernels (tests/kernels/others.c -x).  Unpacks the fixture tarball (never
# committed here: the code is XKCP's) into OUT/src after checking its
# SHA-256, then builds every single-instance x86-64 config with each
# compiler into OUT/<cc>-<config>.so, tests/kernels/xkcp-chain.c around it:
# those of them that CFLAGS target (no AVX-512 ones where they do not).
#
#   sh tests/kernels/xkcp.sh OUT TARBALL CFLAGS CC...
#
# Each shared object exports xkcp_chain and xkcp_name only (a version
# script hides XKCP's own symbols, -Bsymbolic binds the assembly's calls
# inside the object), so calls between them are direct, as in a static
# link.
set -eu
[ $# -ge 4 ] || { echo "usage: xkcp.sh OUT TARBALL CFLAGS CC..." >&2; exit 2; }
out=$1 tarball=$2 cflags=$3
shift 3
sha=1595beee6d0e8ef7053d5950bed0d680662fb3297eadd909dc8914b451ca1ad1
top=XKCP-6ce53d0
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -f "$tarball" ]; then
	echo "xkcp.sh: \"$tarball\": no such file (set XKCP_TARBALL)" >&2
	exit 1
fi
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$sha" ]; then
	echo "xkcp.sh: \"$tarball\": SHA-256 $got, expected $sha" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out/src"
tar xzf "$tarball" -C "$out/src"
k=$out/src/$top/lib/low/KeccakP-1600
printf '{ global: xkcp_chain; xkcp_name; local: *; };\n' >"$out/exports.map"
common="-I$out/src/$top/lib/common -I$out/src/$top/lib/low/common -I$k/common"

# name  implementation dir  source  config dir ("-": none)
configs='plain64-lcu6 plain-64bits KeccakP-1600-opt64.c lcu6
plain64-lcua plain-64bits KeccakP-1600-opt64.c lcua
plain64-lcua-shld plain-64bits KeccakP-1600-opt64.c lcua-shld
plain64-u6 plain-64bits KeccakP-1600-opt64.c u6
plain64-ua plain-64bits KeccakP-1600-opt64.c ua
avx512c-u6 AVX512/C KeccakP-1600-AVX512.c u6
avx512c-u12 AVX512/C KeccakP-1600-AVX512.c u12
avx512c-ua AVX512/C KeccakP-1600-AVX512.c ua
avx512-asm AVX512 KeccakP-1600-AVX512.s -
avx2-asm AVX2 KeccakP-1600-AVX2.s -'

# A config whose instructions the flags do not target (AVX-512 where
# -march=native finds none) would not build, or not run: left out, said.
targets() {
	# shellcheck disable=SC2086
	$1 $cflags -dM -E -x c /dev/null | grep -q "define $2 "
}

for cc in "$@"; do
	avx2=0 avx512=0
	targets "$cc" __AVX2__ && avx2=1
	targets "$cc" __AVX512F__ && targets "$cc" __AVX512VL__ && avx512=1
	[ $avx512 = 1 ] || echo "xkcp.sh: $cc $cflags targets no AVX-512F/VL:" \
	    "its AVX-512 configs are not built" >&2
	[ $avx2 = 1 ] || echo "xkcp.sh: $cc $cflags targets no AVX2:" \
	    "avx2-asm is not built" >&2
	echo "$configs" | while read -r name dir src cfg; do
		case $name in
		avx512*) [ $avx512 = 1 ] || continue ;;
		avx2*) [ $avx2 = 1 ] || continue ;;
		esac
		inc="-I$k/$dir"
		[ "$cfg" = - ] || inc="-I$k/$dir/$cfg $inc"
		so=$out/$cc-$name.so
		# shellcheck disable=SC2086
		$cc $cflags -fPIC -shared -fvisibility=hidden -Wl,-Bsymbolic \
		    -Wl,--version-script="$out/exports.map" \
		    $inc $common -DXKCP_NAME="\"XKCP $name ($cc)\"" \
		    -o "$so" "$here/xkcp-chain.c" "$k/$dir/$src"
		echo "$so"
	done
done
