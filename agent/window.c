/*
 * The host lock, the preflight verdict and the window records around
 * the timed samples.
 */
#include "window.h"
#include "emit.h"
#include "lock.h"
#include "preflight.h"
#include "protocol.h"
#include "state.h"

#include <stdio.h>

void
window_lock(const struct opts *o)
{
	char why[256], holder[MAX_HOLDER + 2];
	int fd, rc;
	cJSON *rec;

	if ((fd = lock_open(o->lock, why, sizeof why)) < 0)
		fatal(AG_FAIL, "cannot open host lock \"%s\": %s", o->lock,
		    why);
	holder[0] = '\0';
	if ((rc = lock_try(fd, holder, sizeof holder, why, sizeof why)) < 0)
		fatal(AG_FAIL, "cannot take host lock \"%s\": %s", o->lock,
		    why);
	if (rc == 1) {
		if (o->no_wait)
			fatal(AG_LOCKED, "host lock \"%s\" is held by \"%s\"",
			    o->lock, holder);
		rec = emit_new(PROTO_T_WAIT);
		cJSON_AddStringToObject(rec, PROTO_F_HOLDER, holder);
		emit(rec);
		if (lock_wait(fd, why, sizeof why) != 0)
			fatal(AG_FAIL, "cannot take host lock \"%s\": %s",
			    o->lock, why);
	}
	if (lock_claim(fd, o->holder, why, sizeof why) != 0)
		fatal(AG_FAIL, "cannot write host lock \"%s\": %s", o->lock,
		    why);
}

void
window_record(const char *phase, int cpu)
{
	cJSON *rec = emit_new(PROTO_T_WINDOW), *state = state_snapshot(cpu);

	if (state == NULL)
		fatal(AG_FAIL, "out of memory");
	cJSON_AddStringToObject(rec, PROTO_F_PHASE, phase);
	cJSON_AddItemToObject(rec, PROTO_F_STATE, state);
	emit(rec);
}

void
window_preflight(const struct opts *o, int cpu, const char *choice)
{
	cJSON *rec = emit_new(PROTO_T_PREFLIGHT), *r;
	char reasons[1024] = "";
	size_t n = 0;
	int quiet;

	if (cpu >= 0)
		cJSON_AddNumberToObject(rec, PROTO_F_CPU, cpu);
	else
		cJSON_AddNullToObject(rec, PROTO_F_CPU);
	if (choice != NULL)
		cJSON_AddStringToObject(rec, PROTO_F_CPU_CHOICE, choice);
	else
		cJSON_AddNullToObject(rec, PROTO_F_CPU_CHOICE);
	quiet = preflight_run(rec, cpu);
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(rec, PROTO_F_REASONS))
		if (n < sizeof reasons)
			n += (size_t)snprintf(reasons + n, sizeof reasons - n,
			    "%s%s", n ? "; " : "", r->valuestring);
	emit(rec);
	if (!quiet && o->require_quiet)
		fatal(AG_NOISY, "host is noisy, not measuring "
		    "(--require-quiet): %s", reasons);
}
