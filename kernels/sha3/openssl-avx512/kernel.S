/*
 * sha3/openssl-avx512: OpenSSL's keccak1600-avx512.pl as the coordinator
 * generated it from the fetched release (kernels/sha3/generate.pl; found
 * through the -I that kernels/registry.sh gives a variant that needs
 * "openssl"), its symbols renamed so that every variant links its own.
 */
#define __KeccakF1600 openssl_avx512_permute
#define SHA3_absorb openssl_avx512_absorb
#define SHA3_squeeze openssl_avx512_squeeze
#include "keccak1600-avx512.elf.s"
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
