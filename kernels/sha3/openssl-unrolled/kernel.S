/*
 * sha3/openssl-unrolled: kernels/sha3/generate.pl's unrolled chain around the round
 * body of OpenSSL's keccak1600-avx512vl.pl (openssl-unrolled-x86_64.S), and
 * that file itself for the known-answer hook, both generated on the
 * coordinator from the fetched release; symbols renamed per variant.
 */
#define __KeccakF1600 openssl_unrolled_permute
#define SHA3_absorb openssl_unrolled_absorb
#define SHA3_squeeze openssl_unrolled_squeeze
#include "keccak1600-avx512vl.elf.s"
#include "openssl-unrolled-x86_64.S"
#if !defined(__APPLE__)
	.section .note.GNU-stack,"",%progbits
#endif
