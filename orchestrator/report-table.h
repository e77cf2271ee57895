/*
 * The report's tables and text lines (report-table.c), internal to the
 * report's renderers.  A table owns its cells (table_cell takes a
 * malloc'd string); printing it frees them and leaves it empty.
 */
#ifndef SEQORCH_REPORT_TABLE_H
#define SEQORCH_REPORT_TABLE_H

#include "report-model.h"

#include <stdio.h>

/*
 * A table, whatever the rendering: heads, alignment and cells in row
 * order.  Text pads each column to its widest cell, counted in
 * characters (the range has an en dash); Markdown and HTML escape each
 * cell unless it was added as markup (table_raw).
 */
struct table {
	size_t		  ncols;
	const char	**heads;
	const char	 *align;	/* 'l' or 'r' per column */
	char		**cells;
	size_t		  ncells;
	unsigned char	 *raw;		/* per cell: markup, not text */
	void		 *mem;		/* heads and align when allocated */
};

/* Append a cell (owned, freed by the table) in row order. */
void table_cell(struct table *t, char *owned);
/* Append markup for the rendering at hand (owned); text prints it as is. */
void table_raw(struct table *t, char *owned);
/*
 * Print t under its heads and free its cells: as text with padded
 * columns (its width said above it when wider than report_columns()),
 * as a Markdown table (an empty cell is "| |"), or as an HTML table in
 * a scroll box (right-aligned cells of class "n").
 */
void table_print(struct table *t, FILE *out);
void table_markdown(struct table *t, FILE *out);
void table_html(struct table *t, FILE *out);

/*
 * Text for Markdown (| \ ` * _ < escaped) and for HTML and SVG (& < > "
 * as entities), control characters as spaces; NULL as "-".
 */
void report_md_text(FILE *out, const char *s);
void report_html_text(FILE *out, const char *s);
/*
 * A CSV field (RFC 4180: quoted when it holds , or "), its control
 * characters as '?' (strip_ctrl), so none is left to quote; NULL empty.
 */
void report_csv_text(FILE *out, const char *s);
struct strbuf;
void report_html_add(struct strbuf *sb, const char *s);

/*
 * The rows of the best table Markdown and HTML share, four columns: each
 * ranked host, its best as "variant (compiler)", its median rate and ns
 * a unit; then each host without a best, "no valid samples".
 */
void report_best_rows(const struct rrun *r, struct table *t);

/*
 * A column of the tables Markdown and HTML share: its head, alignment and
 * which fact of the host, build or cell it shows (REPORT_COL_*).
 */
struct report_col {
	const char	*head;
	char		 align;
	int		 what;
};

enum {
	/* hosts */
	COL_HOST, COL_HOST_STATUS, COL_CLOCK, COL_CPU, COL_ARCH, COL_KERNEL,
	COL_OPENSSL, COL_GOVERNOR, COL_PINNING, COL_COUNTERS, COL_NOISE,
	/* builds */
	COL_BUILD, COL_BUILD_HOST, COL_COMPILER, COL_VERSION, COL_CFLAGS,
	COL_NATIVE, COL_BUILD_STATUS, COL_BINARY_CODE,
	/* cells (rows) */
	COL_VARIANT, COL_LABEL, COL_ROW_HOST, COL_MEDIAN, COL_Q1, COL_Q3,
	COL_MIN, COL_MAX, COL_CV, COL_N, COL_NS, COL_NS_1, COL_CYCLES,
	COL_CLOCK_MHZ, COL_CLOCK_SOURCE, COL_DIGEST, COL_DIGEST_STRONG,
	COL_INVALID,
};

/* The columns under their usual heads, for the lists renderers make. */
#define C_HOST		{ "host", 'l', COL_HOST }
#define C_HOST_STATUS	{ "status", 'l', COL_HOST_STATUS }
#define C_ARCH		{ "arch", 'l', COL_ARCH }
#define C_KERNEL	{ "kernel", 'l', COL_KERNEL }
#define C_GOVERNOR	{ "governor", 'l', COL_GOVERNOR }
#define C_PINNING	{ "pinning", 'l', COL_PINNING }
#define C_COUNTERS	{ "counters", 'l', COL_COUNTERS }
#define C_NOISE		{ "noise", 'l', COL_NOISE }
#define C_BUILD		{ "build", 'r', COL_BUILD }
#define C_BUILD_HOST	{ "host", 'l', COL_BUILD_HOST }
#define C_COMPILER	{ "compiler", 'l', COL_COMPILER }
#define C_VERSION	{ "version", 'l', COL_VERSION }
#define C_NATIVE	{ "native", 'l', COL_NATIVE }
#define C_BUILD_STATUS	{ "status", 'l', COL_BUILD_STATUS }
/* A cell's names and rate statistics, the first columns of its row. */
#define C_CELL_STATS \
	{ "variant", 'l', COL_VARIANT }, { "compiler", 'l', COL_LABEL }, \
	{ "host", 'l', COL_ROW_HOST }, { "median", 'r', COL_MEDIAN }, \
	{ "q1", 'r', COL_Q1 }, { "q3", 'r', COL_Q3 }, \
	{ "min", 'r', COL_MIN }, { "max", 'r', COL_MAX }, \
	{ "cv", 'r', COL_CV }, { "n", 'r', COL_N }
#define C_INVALID	{ "invalid", 'r', COL_INVALID }

/*
 * Fill t (empty) with cols over r's hosts, builds or rows (cells with
 * n > 0 or not, all of them).  The table points into cols, which must
 * outlive it; its markup cells (COL_BINARY_CODE, COL_DIGEST_STRONG) are
 * HTML and Markdown.
 */
void report_host_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t);
void report_build_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t);
void report_row_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t);

/*
 * The run's variants built from its upstream sources as a new comma list
 * ("openssl-avx2, openssl-scalar"; "-" for none), or NULL when no build
 * recorded a source; and t (empty) filled with those sources (build,
 * source, file, sha256).
 */
char *report_source_variants(const struct rrun *r);
void report_source_table(const struct rrun *r, struct table *t);

/*
 * Print the run's warnings in words (invalid samples, moved clocks, hosts
 * that failed or were not pinned, variants that did not run, events),
 * each as open, a head naming what it is about (through head, or as is
 * when NULL), the host's text (through text; NULL shown as "-") and
 * close; none when there are none.
 */
/* How many items report_print_warnings prints. */
size_t report_warning_count(const struct rrun *r);
void report_print_warnings(const struct rrun *r, FILE *out, const char *open,
    void (*head)(FILE *, const char *), void (*text)(FILE *, const char *),
    const char *close, const char *none);

/*
 * Is the locale's character set UTF-8 (LC_ALL, else LC_CTYPE, else
 * LANG)?  Text is ASCII unless it is.  The dash of a range ("1.2M-1.3M"):
 * an en dash there, else "-"; plus-minus: "\u00b1", else "+-".  Static.
 */
int report_utf8(void);
const char *report_dash(void);
const char *report_plusminus(void);

/*
 * How wide the report's text may be on out: 80 columns, or $COLUMNS
 * (40 to 1000) when out is a terminal.
 */
size_t report_columns(FILE *out);

/*
 * One line of text: control characters (newlines in host text) become
 * spaces and a line wider than report_columns() is wrapped at spaces,
 * never cut.  A table wider than that is printed whole, its width said
 * once above its head.
 */
void report_emit(FILE *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Lines that are a table's rows (one per ratio or position), each whole,
 * their width said once above them as table_print says it; frees each.
 */
void report_emit_rows(FILE *out, char **lines, size_t n);
/* prefix and text over as many lines as it takes, broken at spaces. */
void report_emit_wrapped(FILE *out, const char *prefix, const char *text);
/* An event's message, indented, wrapped and cut at EVENT_TEXT_MAX. */
void report_emit_event(FILE *out, const char *message);

#endif
