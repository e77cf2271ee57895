/*
 * Progress on stderr: on a terminal, one live line per host redrawn in
 * place; otherwise one plain line per state change.  Thread safe.
 */
#ifndef SEQORCH_PROGRESS_H
#define SEQORCH_PROGRESS_H

#include <stddef.h>

/* Start a display for n hosts with these names (borrowed). */
void progress_start(const char *const *names, size_t n);
/* Set host i's status line. */
void progress_set(size_t i, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Are the lines live (redrawn, so cut to fit)?  Valid until progress_end. */
int progress_live(void);
/* Stop redrawing; later output goes below the lines. */
void progress_end(void);

#endif
