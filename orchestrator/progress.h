/*
 * Progress on stderr: on a terminal, one live line per host redrawn in
 * place with the whole run's progress and time left below them, and
 * warnings printed above them (they stay on screen); otherwise one plain
 * line per state change or warning.  Thread safe.
 */
#ifndef SEQORCH_PROGRESS_H
#define SEQORCH_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* Start a display for n hosts with these names (borrowed). */
void progress_start(const char *const *names, size_t n);
/* Set host i's status line. */
void progress_set(size_t i, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A step of something long on host i (a build's "compiling 3/41 ..."): on a
 * terminal as progress_set; otherwise a line for the first step after a
 * progress_set and then at most one every STEP_EVERY_S seconds, so that a
 * log shows what a long build is at without a line per file.
 */
#define STEP_EVERY_S 5
void progress_step(size_t i, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning about host i: printed whole, above the live lines. */
void progress_warn(size_t i, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A line about the whole run, "seqorch: " and the message: printed whole,
 * above the live lines while they are drawn.  Modules below the commands
 * (runner, window) say what a run meets through this, not stderr.
 */
void progress_note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/*
 * The whole run's count: n more samples are expected (a host announced its
 * variants), and one arrived; the live display shows done/expected with
 * the time left at the rate so far.
 */
void progress_expect(uint64_t n);
/* n samples expected will not come: the count shrinks. */
void progress_unexpect(uint64_t n);
void progress_tick(void);
/* Are the lines live (redrawn, so cut to fit)?  Valid until progress_end. */
int progress_live(void);
/* Stop redrawing; later output goes below the lines. */
void progress_end(void);

#endif
