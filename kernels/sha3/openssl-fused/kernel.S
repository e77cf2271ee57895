/*
 * sha3/openssl-fused: kernels/sha3/generate.pl's fused chain around OpenSSL's
 * round body (keccak1600-avx512vl.pl on x86-64, keccak1600-armv8.pl's
 * SHA3-extension KeccakF1600_ce on aarch64), and OpenSSL's file itself
 * for the known-answer hook, all generated on the coordinator from the
 * fetched release; symbols renamed per variant (on Mach-O the C names
 * take the leading underscore).
 */
#if defined(__x86_64__)
#define __KeccakF1600 openssl_fused_permute
#define SHA3_absorb openssl_fused_absorb
#define SHA3_squeeze openssl_fused_squeeze
#include "keccak1600-avx512vl.elf.s"
#include "openssl-fused-x86_64.S"
#elif defined(__aarch64__)
#if defined(__APPLE__)
#define _SHA3_absorb _openssl_fused_absorb_int
#define _SHA3_squeeze _openssl_fused_squeeze_int
#define _SHA3_absorb_cext _openssl_fused_absorb
#define _SHA3_squeeze_cext _openssl_fused_squeeze
#else
#define SHA3_absorb openssl_fused_absorb_int
#define SHA3_squeeze openssl_fused_squeeze_int
#define SHA3_absorb_cext openssl_fused_absorb
#define SHA3_squeeze_cext openssl_fused_squeeze
#endif
#define KeccakF1600 openssl_fused_keccakf
#define KeccakF1600_int openssl_fused_keccakf_int
#define KeccakF1600_ce openssl_fused_keccakf_ce
#define KeccakF1600_cext openssl_fused_keccakf_cext
#if defined(__APPLE__)
#include "keccak1600-armv8.ios64.S"
#else
#include "keccak1600-armv8.linux64.S"
#endif
#include "openssl-fused-aarch64.S"
#else
#error "sha3/openssl-fused: OpenSSL's Keccak assembly is x86-64 or aarch64"
#endif
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
