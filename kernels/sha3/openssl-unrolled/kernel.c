/*
 * sha3/openssl-unrolled: seed 000's unrolled variant, OpenSSL's round body
 * in a chain generated on the coordinator (kernels/sha3/openssl-chain.h);
 * all 24 rounds are written out, each with its round constant.
 */
#define OPENSSL_VARIANT unrolled
#define OPENSSL_ROUNDS "24 rounds unrolled"
#include "sha3/openssl-chain.h"
