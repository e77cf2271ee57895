/*
 * sha3/openssl-fused: seed 000's fused variant, OpenSSL's round body in a
 * chain generated on the coordinator (kernels/sha3/openssl-chain.h); the
 * 24 rounds run as OpenSSL's loop.
 */
#define OPENSSL_VARIANT fused
#define OPENSSL_ROUNDS "rounds in a loop"
#include "sha3/openssl-chain.h"
