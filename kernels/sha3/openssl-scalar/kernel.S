/*
 * sha3/openssl-scalar: OpenSSL's integer Keccak (keccak1600-x86_64.pl on
 * x86-64, keccak1600-armv8.pl's integer path on aarch64) as the
 * coordinator generated it from the fetched release
 * (kernels/sha3/generate.pl), found through the -I kernels/registry.sh
 * gives a variant that needs "openssl".  Its symbols are renamed so that
 * every variant links its own copy; on Mach-O the C names take the
 * leading underscore, and the permutation is named as C would name it so
 * that the disassembly check finds it.
 */
#if defined(__APPLE__)
#define PERMUTE _openssl_scalar_permute
#define _SHA3_absorb _openssl_scalar_absorb
#define _SHA3_squeeze _openssl_scalar_squeeze
#define _SHA3_absorb_cext _openssl_scalar_absorb_cext
#define _SHA3_squeeze_cext _openssl_scalar_squeeze_cext
#else
#define PERMUTE openssl_scalar_permute
#define SHA3_absorb openssl_scalar_absorb
#define SHA3_squeeze openssl_scalar_squeeze
#define SHA3_absorb_cext openssl_scalar_absorb_cext
#define SHA3_squeeze_cext openssl_scalar_squeeze_cext
#endif
#define KeccakF1600 openssl_scalar_keccakf
#define KeccakF1600_ce openssl_scalar_keccakf_ce
#define KeccakF1600_cext openssl_scalar_keccakf_cext

#if defined(__x86_64__)
#define __KeccakF1600 PERMUTE
#if defined(__APPLE__)
#include "keccak1600-x86_64.macosx.s"
#else
#include "keccak1600-x86_64.elf.s"
#endif
#elif defined(__aarch64__)
#define KeccakF1600_int PERMUTE
#if defined(__APPLE__)
#include "keccak1600-armv8.ios64.S"
#else
#include "keccak1600-armv8.linux64.S"
#endif
#else
#error "sha3/openssl-scalar: OpenSSL's Keccak assembly is x86-64 or aarch64"
#endif
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
