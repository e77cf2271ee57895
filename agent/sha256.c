/* SHA-256 (sha256.h), the plain FIPS 180-4 rounds. */
#include "sha256.h"
#include "emit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
};

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void
compress(uint32_t h[8], const uint8_t *b)
{
	uint32_t w[64], s[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
		    (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    w[i - 15] >> 3) + w[i - 7] + (ROR(w[i - 2], 17) ^
		    ROR(w[i - 2], 19) ^ w[i - 2] >> 10);
	memcpy(s, h, sizeof s);
	for (i = 0; i < 64; i++) {
		t1 = s[7] + (ROR(s[4], 6) ^ ROR(s[4], 11) ^ ROR(s[4], 25)) +
		    ((s[4] & s[5]) ^ (~s[4] & s[6])) + K[i] + w[i];
		t2 = (ROR(s[0], 2) ^ ROR(s[0], 13) ^ ROR(s[0], 22)) +
		    ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof s[0]);
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += s[i];
}

static void
sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
	    0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof iv);
	c->bytes = 0;
	c->used = 0;
}

static void
sha256_update(struct sha256 *c, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t k;

	c->bytes += n;
	while (n > 0) {
		k = 64 - c->used < n ? 64 - c->used : n;
		memcpy(c->block + c->used, b, k);
		c->used += k;
		b += k;
		n -= k;
		if (c->used == 64) {
			compress(c->h, c->block);
			c->used = 0;
		}
	}
}

static void
sha256_final(struct sha256 *c, uint8_t md[32])
{
	uint64_t bits = c->bytes * 8;
	uint8_t pad = 0x80, len[8];
	int i;

	sha256_update(c, &pad, 1);
	pad = 0;
	while (c->used != 56)
		sha256_update(c, &pad, 1);
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, len, 8);
	for (i = 0; i < 8; i++) {
		md[4 * i] = (uint8_t)(c->h[i] >> 24);
		md[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		md[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		md[4 * i + 3] = (uint8_t)c->h[i];
	}
}

int
sha256_file(const char *path, char sum[65])
{
	unsigned char buf[16384], md[32];
	struct sha256 c;
	FILE *f = fopen(path, "rb");
	size_t n;
	int rc = -1;

	if (f == NULL)
		return -1;
	sha256_init(&c);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sha256_update(&c, buf, n);
	if (!ferror(f)) {
		sha256_final(&c, md);
		emit_hex(md, 32, sum);
		rc = 0;
	}
	fclose(f);
	return rc;
}
