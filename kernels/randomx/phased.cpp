/*
 * RandomX's own compiled VM classes, from the fetched upstream source, with
 * run() timed phase by phase.  run() below is upstream's
 * CompiledLightVm::run / CompiledVm::run (vm_compiled*.cpp, 1.1.10) with a
 * clock read between the steps, nothing else: the hash is computed by the
 * unmodified library (randomx_calculate_hash drives this VM through its
 * virtual run()).  Not covered by a phase, so counted in "other" by the
 * agent: blake2b between programs, the scratchpad fill and the final AES
 * hash of the scratchpad.  In light mode the dataset items computed on the
 * fly are part of execution.  The clock is the agent's (CLOCK_MONOTONIC_RAW
 * on Linux, CLOCK_UPTIME_RAW on macOS): 8 programs x 5 reads per hash,
 * about a microsecond against milliseconds of hashing.
 */
#include "phased.h"

#include "randomx.h"
#include "dataset.hpp"
#include "vm_compiled.hpp"
#include "vm_compiled_light.hpp"

#include <cstdio>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <time.h>
#include <vector>

namespace {

uint64_t
now_ns()
{
#if defined(__APPLE__)
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

struct Phases {
	uint64_t ns[RXP_NPHASES] = { 0, 0, 0, 0 };

	/* t[0..5]: before generation, writable, compiled, executable, done. */
	void add(const uint64_t *t, uint64_t end)
	{
		ns[RXP_PROGGEN] += t[1] - t[0];
		ns[RXP_MPROTECT] += (t[2] - t[1]) + (t[4] - t[3]);
		ns[RXP_COMPILE] += t[3] - t[2];
		ns[RXP_EXECUTE] += end - t[4];
	}
};

using Alloc = randomx::AlignedAllocator<randomx::CacheLineSize>;

template<bool softAes>
class PhasedLightVm : public randomx::CompiledLightVm<Alloc, softAes, true> {
	using Light = randomx::CompiledLightVm<Alloc, softAes, true>;
	using Compiled = randomx::CompiledVm<Alloc, softAes, true>;
public:
	Phases phases;

	void run(void *seed) override
	{
		uint64_t t[5];

		t[0] = now_ns();
		randomx::VmBase<Alloc, softAes>::generateProgram(seed);
		randomx_vm::initialize();
		t[1] = now_ns();
		this->compiler.enableWriting();
		t[2] = now_ns();
		this->compiler.generateProgramLight(this->program, this->config,
		    this->datasetOffset);
		t[3] = now_ns();
		this->compiler.enableExecution();
		t[4] = now_ns();
		Compiled::execute();
		phases.add(t, now_ns());
	}
};

template<bool softAes>
class PhasedVm : public randomx::CompiledVm<Alloc, softAes, true> {
	using Compiled = randomx::CompiledVm<Alloc, softAes, true>;
public:
	Phases phases;

	void run(void *seed) override
	{
		uint64_t t[5];

		t[0] = now_ns();
		randomx::VmBase<Alloc, softAes>::generateProgram(seed);
		randomx_vm::initialize();
		t[1] = now_ns();
		this->compiler.enableWriting();
		t[2] = now_ns();
		this->compiler.generateProgram(this->program, this->config);
		t[3] = now_ns();
		this->compiler.enableExecution();
		t[4] = now_ns();
		this->mem.memory = this->datasetPtr->memory +
		    this->datasetOffset;
		Compiled::execute();
		phases.add(t, now_ns());
	}
};

}	// namespace

struct rxp {
	randomx_flags flags;
	randomx_cache *cache;
	randomx_dataset *dataset;
	randomx_vm *vm;
	Phases *phases;		/* inside vm */
};

/*
 * The dataset, split across every online core (outside any timer).  The
 * agent has pinned itself, and threads inherit that: each worker widens
 * its own affinity to every CPU first (Linux; elsewhere there is no hard
 * pin), which leaves the measuring thread's pin as it is.
 */
static void
init_dataset(randomx_dataset *ds, randomx_cache *cache)
{
	unsigned long items = randomx_dataset_item_count();
	unsigned n = std::thread::hardware_concurrency();
	std::vector<std::thread> workers;

	if (n == 0)
		n = 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned long start = items * i / n;
		unsigned long count = items * (i + 1) / n - start;

		workers.emplace_back([=]() {
#if defined(__linux__)
			cpu_set_t all;

			CPU_ZERO(&all);
			for (unsigned c = 0; c < n && c < CPU_SETSIZE; c++)
				CPU_SET(c, &all);
			/* Best effort: a failure only makes setup slower. */
			(void)pthread_setaffinity_np(pthread_self(), sizeof all,
			    &all);
#endif
			randomx_init_dataset(ds, cache, start, count);
		});
	}
	for (auto &w : workers)
		w.join();
}

template<class Vm>
static randomx_vm *
make_vm(struct rxp *r)
{
	Vm *vm = new Vm();

	r->phases = &vm->phases;
	return vm;
}

extern "C" int
rxp_create(int full, const void *key, size_t keylen, struct rxp **out,
    char *why, size_t whylen)
{
	struct rxp *r = new (std::nothrow) rxp();
	bool soft;

	*out = nullptr;
	if (r == nullptr) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	r->flags = randomx_get_flags();
	if (!(r->flags & RANDOMX_FLAG_JIT)) {
		snprintf(why, whylen, "RandomX has no JIT compiler for this "
		    "CPU");
		goto fail;
	}
	r->flags |= RANDOMX_FLAG_SECURE;
	soft = !(r->flags & RANDOMX_FLAG_HARD_AES);
	if ((r->cache = randomx_alloc_cache(r->flags)) == nullptr) {
		snprintf(why, whylen, "cannot allocate the 256 MiB cache");
		goto fail;
	}
	randomx_init_cache(r->cache, key, keylen);
	try {
		if (full) {
			r->dataset = randomx_alloc_dataset(r->flags);
			if (r->dataset == nullptr) {
				snprintf(why, whylen, "cannot allocate the "
				    "2 GiB dataset");
				goto fail;
			}
			init_dataset(r->dataset, r->cache);
			r->vm = soft ? make_vm<PhasedVm<true>>(r) :
			    make_vm<PhasedVm<false>>(r);
			r->vm->setDataset(r->dataset);
		} else {
			r->vm = soft ? make_vm<PhasedLightVm<true>>(r) :
			    make_vm<PhasedLightVm<false>>(r);
			r->vm->setCache(r->cache);
			r->vm->cacheKey = r->cache->cacheKey;
		}
		r->vm->allocate();
	} catch (std::exception &e) {
		snprintf(why, whylen, "cannot create the VM: %s", e.what());
		goto fail;
	}
	*out = r;
	return 0;
fail:
	rxp_destroy(r);
	return -1;
}

extern "C" void
rxp_destroy(struct rxp *r)
{
	if (r == nullptr)
		return;
	if (r->vm != nullptr)
		randomx_destroy_vm(r->vm);
	if (r->dataset != nullptr)
		randomx_release_dataset(r->dataset);
	if (r->cache != nullptr)
		randomx_release_cache(r->cache);
	delete r;
}

extern "C" void
rxp_hash(struct rxp *r, const void *in, size_t len, void *out)
{
	randomx_calculate_hash(r->vm, in, len, out);
}

extern "C" void
rxp_phases(struct rxp *r, uint64_t ns[RXP_NPHASES])
{
	for (int i = 0; i < RXP_NPHASES; i++) {
		ns[i] = r->phases->ns[i];
		r->phases->ns[i] = 0;
	}
}

extern "C" int
rxp_hard_aes(const struct rxp *r)
{
	return (r->flags & RANDOMX_FLAG_HARD_AES) != 0;
}
