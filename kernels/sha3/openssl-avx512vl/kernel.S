/*
 * sha3/openssl-avx512vl: OpenSSL's keccak1600-avx512vl.pl as the coordinator
 * generated it from the fetched release (kernels/sha3/generate.pl; found
 * through the -I that kernels/registry.sh gives a variant that needs
 * "openssl"), its symbols renamed so that every variant links its own.
 */
#define __KeccakF1600 openssl_avx512vl_permute
#define SHA3_absorb openssl_avx512vl_absorb
#define SHA3_squeeze openssl_avx512vl_squeeze
#include "keccak1600-avx512vl.elf.s"
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
