/*
 * The coordinator's randomx reference: the same chain through a library
 * built apart from the measured ones, the coordinator's own librandomx
 * (Debian librandomx0), loaded with dlopen in light mode.  Light and full
 * mode compute the same hashes, so this checks every variant.
 */
#include "kernel.h"
#include "randomx/chain.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#if defined(__APPLE__)
#define RANDOMX_SONAME "librandomx.dylib"
#else
#define RANDOMX_SONAME "librandomx.so.0"
#endif

#define FLAG_JIT 8
#define FLAG_SECURE 16

struct rxlib {
	int (*get_flags)(void);
	void *(*alloc_cache)(int);
	void (*init_cache)(void *, const void *, size_t);
	void *(*create_vm)(int, void *, void *);
	void (*hash)(void *, const void *, size_t, void *);
	void (*destroy_vm)(void *);
	void (*release_cache)(void *);
};

static int
load(void *h, struct rxlib *l)
{
	*(void **)&l->get_flags = dlsym(h, "randomx_get_flags");
	*(void **)&l->alloc_cache = dlsym(h, "randomx_alloc_cache");
	*(void **)&l->init_cache = dlsym(h, "randomx_init_cache");
	*(void **)&l->create_vm = dlsym(h, "randomx_create_vm");
	*(void **)&l->hash = dlsym(h, "randomx_calculate_hash");
	*(void **)&l->destroy_vm = dlsym(h, "randomx_destroy_vm");
	*(void **)&l->release_cache = dlsym(h, "randomx_release_cache");
	return l->get_flags && l->alloc_cache && l->init_cache &&
	    l->create_vm && l->hash && l->destroy_vm && l->release_cache ?
	    0 : -1;
}

static int
randomx_reference_chain(uint8_t *x, uint64_t steps,
    volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	struct rxlib l;
	void *h, *cache = NULL, *vm = NULL;
	uint64_t i;
	int flags, rc = -1;

	if ((h = dlopen(RANDOMX_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(why, whylen, "cannot load %s (install librandomx0): "
		    "%s", RANDOMX_SONAME, dlerror());
		return -1;
	}
	if (load(h, &l) != 0) {
		snprintf(why, whylen, "%s lacks the RandomX API",
		    RANDOMX_SONAME);
		goto out;
	}
	flags = l.get_flags();
	if (flags & FLAG_JIT)
		flags |= FLAG_SECURE;
	if ((cache = l.alloc_cache(flags)) == NULL) {
		snprintf(why, whylen, "cannot allocate the RandomX cache");
		goto out;
	}
	l.init_cache(cache, RANDOMX_CHAIN_KEY, strlen(RANDOMX_CHAIN_KEY));
	if ((vm = l.create_vm(flags, cache, NULL)) == NULL) {
		snprintf(why, whylen, "cannot create a RandomX VM");
		goto out;
	}
	for (i = 0; i < steps; i++) {
		if (stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			goto out;
		}
		l.hash(vm, x, 32, x);
	}
	rc = 0;
out:
	if (vm != NULL)
		l.destroy_vm(vm);
	if (cache != NULL)
		l.release_cache(cache);
	dlclose(h);
	return rc;
}

const struct study_reference REFERENCE_THIS = {
	.method = "librandomx0 (" RANDOMX_SONAME "), light mode",
	.chain = randomx_reference_chain,
};
