/*
 * kernels/randomx/chain.h: the randomx study's fixed key.  The chain is
 * x = RandomX(key, x) on 32-byte values; the key is the one of RandomX's
 * own test vectors, so that the known answer ("This is a test") checks the
 * very cache the chain uses.
 */
#ifndef SEQORCH_RANDOMX_CHAIN_H
#define SEQORCH_RANDOMX_CHAIN_H

#define RANDOMX_CHAIN_KEY "test key 000"

#endif
