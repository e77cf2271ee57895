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
	struct jsonl *rec;

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
		jsonl_str(rec, PROTO_F_HOLDER, holder);
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
	struct jsonl *rec = emit_new(PROTO_T_WINDOW);

	jsonl_str(rec, PROTO_F_PHASE, phase);
	state_snapshot(rec, PROTO_F_STATE, cpu);
	emit(rec);
}

void
window_preflight(const struct opts *o, int cpu, const char *choice)
{
	struct jsonl *rec = emit_new(PROTO_T_PREFLIGHT);
	char reasons[1024];
	int quiet;

	if (cpu >= 0)
		jsonl_num(rec, PROTO_F_CPU, cpu);
	else
		jsonl_null(rec, PROTO_F_CPU);
	if (choice != NULL)
		jsonl_str(rec, PROTO_F_CPU_CHOICE, choice);
	else
		jsonl_null(rec, PROTO_F_CPU_CHOICE);
	quiet = preflight_run(rec, cpu, reasons, sizeof reasons);
	emit(rec);
	if (!quiet && o->require_quiet)
		fatal(AG_NOISY, "host is noisy, not measuring "
		    "(--require-quiet): %s", reasons);
}
