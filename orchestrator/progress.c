/*
 * Live per-host progress lines (stderr), a whole-run line below them, and
 * warnings printed above them, where redrawing does not reach.
 */
#include "progress.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_LEN 200
#define BAR_WIDTH 24

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *const *hosts;
static char (*lines)[LINE_MAX_LEN];
static double *step_at;		/* per host: when a step was last printed */
static size_t nlines;
static int tty, drawn;
static unsigned drawn_rows;	/* rows the last redraw printed */
static uint64_t expected, done;	/* samples, all hosts */
static double first_at;		/* when the first sample was expected */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Terminal columns; a live line longer than that would wrap and break
 * the cursor arithmetic. */
static int
columns(void)
{
	struct winsize ws;

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/*
 * "[#######-----]  12/27 samples, 0:05 left", or "[############] 27/27
 * samples + 3 extra".
 */
static void
total_line(char *buf, size_t len)
{
	uint64_t d = done < expected ? done : expected;
	size_t fill = (size_t)(BAR_WIDTH * d / expected), i;
	char bar[BAR_WIDTH + 1];
	double spent = now() - first_at, left;
	int n;

	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[BAR_WIDTH] = '\0';
	n = snprintf(buf, len, "[%s] %llu/%llu samples", bar,
	    (unsigned long long)d, (unsigned long long)expected);
	/*
	 * --max-cv's extra rounds come after the planned samples, as many
	 * as the spread asks: counted as such, with no time left to guess.
	 */
	if (done > expected && n >= 0 && (size_t)n < len) {
		snprintf(buf + n, len - (size_t)n, " + %llu extra",
		    (unsigned long long)(done - expected));
		return;
	}
	if (d == 0 || n < 0 || (size_t)n >= len)
		return;
	left = spent / (double)d * (double)(expected - d);
	snprintf(buf + n, len - (size_t)n, ", %d:%02d left",
	    (int)(left / 60), (int)left % 60);
}

static void
redraw(void)
{
	char total[LINE_MAX_LEN];
	int w = columns() - 1;
	size_t i;

	if (drawn && drawn_rows > 0)
		fprintf(stderr, "\033[%uA", drawn_rows);
	drawn_rows = 0;
	for (i = 0; i < nlines; i++, drawn_rows++)
		fprintf(stderr, "\033[2K%-12.*s %.*s\n", w, hosts[i],
		    w > 13 ? w - 13 : 0, lines[i]);
	if (expected > 0) {
		total_line(total, sizeof total);
		fprintf(stderr, "\033[2K%-12s %.*s\n", "all",
		    w > 13 ? w - 13 : 0, total);
		drawn_rows++;
	}
	drawn = 1;
	fflush(stderr);
}

void
progress_start(const char *const *names, size_t n)
{
	pthread_mutex_lock(&mu);
	hosts = names;
	nlines = n;
	free(lines);
	free(step_at);
	lines = calloc(n ? n : 1, sizeof *lines);
	step_at = calloc(n ? n : 1, sizeof *step_at);
	if (step_at == NULL) {
		free(lines);
		lines = NULL;
	}
	tty = isatty(2) && getenv("TERM") != NULL &&
	    strcmp(getenv("TERM"), "dumb") != 0 && lines != NULL;
	drawn = 0;
	drawn_rows = 0;
	expected = done = 0;
	pthread_mutex_unlock(&mu);
}

/*
 * Take the lock for host i's line: 0 with the lock held, or -1 (and not
 * held) when there is no display or no such host.
 */
static int
lock_line(size_t i)
{
	pthread_mutex_lock(&mu);
	if (lines != NULL && i < nlines)
		return 0;
	pthread_mutex_unlock(&mu);
	return -1;
}

/* Host i's line (lock held): redrawn live, or printed as a line. */
static void
set_line(size_t i, const char *fmt, va_list ap)
{
	if (tty) {
		/* A live line is cut to fit; runner prints failures whole. */
		vsnprintf(lines[i], LINE_MAX_LEN, fmt, ap);
		redraw();
	} else {
		fprintf(stderr, "seqorch: %s: ", hosts[i]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
}

void
progress_set(size_t i, const char *fmt, ...)
{
	va_list ap;

	if (lock_line(i) != 0)
		return;
	va_start(ap, fmt);
	set_line(i, fmt, ap);
	va_end(ap);
	step_at[i] = 0;
	pthread_mutex_unlock(&mu);
}

void
progress_step(size_t i, const char *fmt, ...)
{
	va_list ap;
	double t = now();

	if (lock_line(i) != 0)
		return;
	if (tty || step_at[i] == 0 || t - step_at[i] >= STEP_EVERY_S) {
		va_start(ap, fmt);
		set_line(i, fmt, ap);
		va_end(ap);
		step_at[i] = t;
	}
	pthread_mutex_unlock(&mu);
}

/*
 * A message whole ("seqorch: ", host's warning head when host is not
 * NULL), with mu held.  On a terminal it takes the place of the live
 * lines, which are drawn again below it: it scrolls up with the output.
 */
static void
print_above(const char *host, const char *fmt, va_list ap)
{
	if (tty && drawn && drawn_rows > 0)
		fprintf(stderr, "\033[%uA\033[J", drawn_rows);
	fputs("seqorch: ", stderr);
	if (host != NULL)
		fprintf(stderr, "%s: warning: ", host);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (tty) {
		drawn = 0;
		redraw();
	}
}

void
progress_warn(size_t i, const char *fmt, ...)
{
	va_list ap;

	if (lock_line(i) != 0)
		return;
	va_start(ap, fmt);
	print_above(hosts[i], fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&mu);
}

void
progress_note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&mu);
	va_start(ap, fmt);
	print_above(NULL, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&mu);
}

void
progress_expect(uint64_t n)
{
	pthread_mutex_lock(&mu);
	if (expected == 0)
		first_at = now();
	expected += n;
	pthread_mutex_unlock(&mu);
}

void
progress_unexpect(uint64_t n)
{
	pthread_mutex_lock(&mu);
	expected -= n < expected ? n : expected;
	if (tty && lines != NULL && drawn)
		redraw();
	pthread_mutex_unlock(&mu);
}

void
progress_tick(void)
{
	pthread_mutex_lock(&mu);
	done++;
	pthread_mutex_unlock(&mu);
}

int
progress_live(void)
{
	int live;

	pthread_mutex_lock(&mu);
	live = tty;
	pthread_mutex_unlock(&mu);
	return live;
}

void
progress_end(void)
{
	pthread_mutex_lock(&mu);
	/*
	 * A count that did not end (Ctrl-C, a failure) would stay on screen
	 * claiming time left: the bar line, the last drawn, is cleared.
	 */
	if (tty && drawn && expected > 0 && done < expected)
		fputs("\033[1A\033[2K", stderr);
	free(lines);
	free(step_at);
	lines = NULL;
	step_at = NULL;
	nlines = 0;
	drawn = 0;
	drawn_rows = 0;
	expected = done = 0;
	pthread_mutex_unlock(&mu);
}
