/* Jobs per host in a bounded number of threads (pool.h). */
#include "pool.h"

#include "util.h"

#include <pthread.h>
#include <stdlib.h>

struct pool {
	pthread_mutex_t mu;
	size_t n, next;
	void (*fn)(void *arg, size_t i);
	void *arg;
};

/* Take the next job until none is left. */
static void *
worker(void *arg)
{
	struct pool *p = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i == p->n)
			return NULL;
		p->fn(p->arg, i);
	}
}

void
pool_run(size_t n, int parallel, void (*fn)(void *arg, size_t i), void *arg)
{
	struct pool p = { .mu = PTHREAD_MUTEX_INITIALIZER, .n = n, .fn = fn,
	    .arg = arg };
	size_t want = parallel > 0 ? (size_t)parallel : 1, started = 0, i;
	pthread_t *tid;

	if (want > n)
		want = n;
	tid = xcalloc(want ? want : 1, sizeof *tid);
	for (i = 0; i < want; i++)
		if (pthread_create(&tid[started], NULL, worker, &p) == 0)
			started++;
	if (started == 0)
		worker(&p);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
}
