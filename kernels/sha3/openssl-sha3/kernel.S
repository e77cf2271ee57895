/*
 * sha3/openssl-sha3: keccak1600-armv8.pl's SHA3-extension path
 * (KeccakF1600_ce, SHA3_absorb_cext) as the coordinator generated it from
 * the fetched release (kernels/sha3/generate.pl), found through the -I
 * kernels/registry.sh gives a variant that needs "openssl".  Symbols
 * renamed so that every variant links its own copy; on Mach-O the C names
 * take the leading underscore, and the permutation is named as C would
 * name it so that the disassembly check finds it.
 */
#if defined(__APPLE__)
#define KeccakF1600_ce _openssl_sha3_permute
#define _SHA3_absorb _openssl_sha3_absorb_int
#define _SHA3_squeeze _openssl_sha3_squeeze_int
#define _SHA3_absorb_cext _openssl_sha3_absorb
#define _SHA3_squeeze_cext _openssl_sha3_squeeze
#else
#define KeccakF1600_ce openssl_sha3_permute
#define SHA3_absorb openssl_sha3_absorb_int
#define SHA3_squeeze openssl_sha3_squeeze_int
#define SHA3_absorb_cext openssl_sha3_absorb
#define SHA3_squeeze_cext openssl_sha3_squeeze
#endif
#define KeccakF1600 openssl_sha3_keccakf
#define KeccakF1600_int openssl_sha3_keccakf_int
#define KeccakF1600_cext openssl_sha3_keccakf_cext

#if defined(__APPLE__)
#include "keccak1600-armv8.ios64.S"
#else
#include "keccak1600-armv8.linux64.S"
	.section .note.GNU-stack,"",%progbits
#endif
