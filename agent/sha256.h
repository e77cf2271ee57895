/*
 * SHA-256 of a file, for the conductor's check that a build's agent is
 * the binary that was built (FIPS 180-4; the agent links no libcrypto
 * for it, so that a host with only a C compiler and libc conducts too).
 */
#ifndef SEQORCH_AGENT_SHA256_H
#define SEQORCH_AGENT_SHA256_H

/* The file at path's SHA-256 as 64 hex digits and a NUL; 0 or -1. */
int sha256_file(const char *path, char sum[65]);

#endif
