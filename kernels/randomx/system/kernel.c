/*
 * randomx/system: the host's installed librandomx (Debian librandomx0),
 * loaded with dlopen so that the agent builds where it is absent (then
 * this variant is skipped); light mode, secure JIT, flags as the library
 * chooses them.  No phases: the installed library has no hook for them.
 * Its version is recorded with the build (prebuild.sh's meta).
 */
#include "kernel.h"
#include "randomx/chain.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#if defined(__APPLE__)
#define SONAME "librandomx.dylib"
#else
#define SONAME "librandomx.so.0"
#endif

#define FLAG_JIT 8
#define FLAG_SECURE 16

struct sys {
	void *dl, *cache, *vm;
	void (*hash)(void *, const void *, size_t, void *);
	void (*destroy_vm)(void *);
	void (*release_cache)(void *);
};

static void
sys_teardown(void *ctx)
{
	struct sys *s = ctx;

	if (s->vm != NULL)
		s->destroy_vm(s->vm);
	if (s->cache != NULL)
		s->release_cache(s->cache);
	if (s->dl != NULL)
		dlclose(s->dl);
	free(s);
}

static int
sys_setup(void **ctx)
{
	struct sys *s = calloc(1, sizeof *s);
	int (*get_flags)(void);
	void *(*alloc_cache)(int);
	void (*init_cache)(void *, const void *, size_t);
	void *(*create_vm)(int, void *, void *);
	int flags;

	if (s == NULL)
		return -1;
	if ((s->dl = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		goto fail;
	*(void **)&get_flags = dlsym(s->dl, "randomx_get_flags");
	*(void **)&alloc_cache = dlsym(s->dl, "randomx_alloc_cache");
	*(void **)&init_cache = dlsym(s->dl, "randomx_init_cache");
	*(void **)&create_vm = dlsym(s->dl, "randomx_create_vm");
	*(void **)&s->hash = dlsym(s->dl, "randomx_calculate_hash");
	*(void **)&s->destroy_vm = dlsym(s->dl, "randomx_destroy_vm");
	*(void **)&s->release_cache = dlsym(s->dl, "randomx_release_cache");
	if (!get_flags || !alloc_cache || !init_cache || !create_vm ||
	    !s->hash || !s->destroy_vm || !s->release_cache)
		goto fail;
	flags = get_flags();
	if (flags & FLAG_JIT)
		flags |= FLAG_SECURE;
	if ((s->cache = alloc_cache(flags)) == NULL)
		goto fail;
	init_cache(s->cache, RANDOMX_CHAIN_KEY, strlen(RANDOMX_CHAIN_KEY));
	if ((s->vm = create_vm(flags, s->cache, NULL)) == NULL)
		goto fail;
	*ctx = s;
	return 0;
fail:
	sys_teardown(s);
	return -1;
}

static int
sys_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	struct sys *s = ctx;

	s->hash(s->vm, msg, len, out);
	return 0;
}

static int
sys_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	struct sys *s = ctx;
	uint64_t i;

	for (i = 0; i < steps; i++)
		s->hash(s->vm, x, 32, x);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "the host's librandomx (" SONAME "), light mode, "
	    "secure JIT (control)",
	.symbol = "sys_chain",
	.setup = sys_setup,
	.teardown = sys_teardown,
	.hash = sys_hash,
	.chain = sys_chain,
};
