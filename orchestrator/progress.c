/* Live per-host progress lines (stderr). */
#include "progress.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_LEN 200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *const *hosts;
static char (*lines)[LINE_MAX_LEN];
static size_t nlines;
static int tty, drawn;

static void
redraw(void)
{
	size_t i;

	if (drawn)
		fprintf(stderr, "\033[%zuA", nlines);
	for (i = 0; i < nlines; i++)
		fprintf(stderr, "\033[2K%-12s %s\n", hosts[i], lines[i]);
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
	lines = calloc(n ? n : 1, sizeof *lines);
	tty = isatty(2) && getenv("TERM") != NULL &&
	    strcmp(getenv("TERM"), "dumb") != 0 && lines != NULL;
	drawn = 0;
	pthread_mutex_unlock(&mu);
}

void
progress_set(size_t i, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&mu);
	if (lines == NULL || i >= nlines) {
		pthread_mutex_unlock(&mu);
		return;
	}
	va_start(ap, fmt);
	if (tty) {
		/* A live line is cut to fit; runner prints failures whole. */
		vsnprintf(lines[i], LINE_MAX_LEN, fmt, ap);
		redraw();
	} else {
		fprintf(stderr, "seqorch: %s: ", hosts[i]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
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
	free(lines);
	lines = NULL;
	nlines = 0;
	drawn = 0;
	pthread_mutex_unlock(&mu);
}
