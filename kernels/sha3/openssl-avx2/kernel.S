/*
 * sha3/openssl-avx2: OpenSSL's keccak1600-avx2.pl as the coordinator
 * generated it from the fetched release (kernels/sha3/generate.pl; found
 * through the -I that kernels/registry.sh gives a variant that needs
 * "openssl"), its symbols renamed so that every variant links its own.
 */
#define __KeccakF1600 openssl_avx2_permute
#define SHA3_absorb openssl_avx2_absorb
#define SHA3_squeeze openssl_avx2_squeeze
#include "keccak1600-avx2.elf.s"
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
