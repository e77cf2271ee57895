/*
 * SHA-256 of a file, for the conductor's check that a build's agent is
 * the binary that was built (FIPS 180-4; the agent links no libcrypto
 * for it, so that a host with only a C compiler and libc conducts too).
 */
#ifndef SEQORCH_AGENT_SHA256_H
#define SEQORCH_AGENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *p, size_t n);
void sha256_final(struct sha256 *c, uint8_t md[32]);

/* The file at path's SHA-256 as 64 hex digits and a NUL; 0 or -1. */
int sha256_file(const char *path, char sum[65]);

#endif
