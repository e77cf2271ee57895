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
 * Text tables: cells are collected first so that each column is as wide
 * as its widest cell, counted in characters (the range has an en dash).
 */
struct table {
	size_t		  ncols;
	const char	**heads;
	const char	 *align;	/* 'l' or 'r' per column */
	char		**cells;
	size_t		  ncells;
};

/* Append a cell (owned, freed by the table) in row order. */
void table_cell(struct table *t, char *owned);
/* Print t under its heads as text, columns padded; frees the cells. */
void table_print(struct table *t, FILE *out);

/*
 * One line of text: control characters (newlines in host text) become
 * spaces and a line wider than the terminal is cut to end in "...".
 */
void report_emit(FILE *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* prefix and text over as many lines as it takes, broken at spaces. */
void report_emit_wrapped(FILE *out, const char *prefix, const char *text);
/* An event's message, indented, wrapped and cut at EVENT_TEXT_MAX. */
void report_emit_event(FILE *out, const char *message);

#endif
