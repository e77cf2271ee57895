/*
 * The report's text primitives: lines wrapped at spaces to a terminal's
 * width, and tables whose columns are as wide as their widest cell.
 */
#include "report-table.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Text fits a terminal this wide, unless $COLUMNS says otherwise when
 * the report goes to one: 80, as pagers, mail and diff views assume.
 */
#define REPORT_COLUMNS 80

/*
 * An event's message stops at this many characters with "..." (the
 * database and the JSON keep all of it).
 */
#define EVENT_TEXT_MAX 400

/* Characters in s: UTF-8 continuation bytes do not count. */
static size_t
width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

/* Control characters (newlines in host text) become spaces. */
static void
blank_controls(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
	}
}

/*
 * Cut s, in place, before the last word that would take it past max
 * characters, ending in "..." if it is wider (a word longer than that
 * is cut where it reaches max - 3).  s then has at least max + 1
 * characters, so at least 4 bytes follow the first max - 3: room for
 * "..." and its terminator.
 */
static void
cut_cols(char *s, size_t max)
{
	char *p = s, *space = NULL;
	size_t cols = 0;

	if (width(s) <= max)
		return;
	for (; cols < max - 3 || ((unsigned char)*p & 0xc0) == 0x80; p++) {
		if (*p == ' ' && p > s)
			space = p;
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	}
	if (*p != ' ' && space != NULL)
		p = space;
	memcpy(p, "...", 4);
}

int
report_utf8(void)
{
	const char *names[] = { "LC_ALL", "LC_CTYPE", "LANG" }, *v = NULL;
	size_t i;

	/* The first one set decides, as setlocale would read them. */
	for (i = 0; i < 3 && (v == NULL || *v == '\0'); i++)
		v = getenv(names[i]);
	return v != NULL && (strcasestr(v, "utf-8") != NULL ||
	    strcasestr(v, "utf8") != NULL);
}

const char *
report_dash(void)
{
	return report_utf8() ? "\u2013" : "-";
}

const char *
report_plusminus(void)
{
	return report_utf8() ? "\u00b1" : "+-";
}

size_t
report_columns(FILE *out)
{
	const char *env = getenv("COLUMNS");
	char *end;
	long n;

	if (env == NULL || !isatty(fileno(out)))
		return REPORT_COLUMNS;
	n = strtol(env, &end, 10);
	/* Narrower than a table's names and numbers is no use. */
	return *end == '\0' && n >= 40 && n <= 1000 ? (size_t)n :
	    REPORT_COLUMNS;
}

/*
 * text after prefix over as many lines as it takes, broken at spaces,
 * continuation lines indented by indent: never cut, so a word wider
 * than the room left stands whole on its line.
 */
static void
wrap(FILE *out, const char *prefix, size_t indent, const char *text)
{
	size_t cols = report_columns(out), room, n;
	const char *p = text, *q, *space;
	int first = 1;

	while (first || *p != '\0') {
		n = first ? width(prefix) : indent;
		room = cols > n + 20 ? cols - n : 20;
		space = NULL;
		n = 0;
		for (q = p; *q != '\0' && n < room; q++) {
			if (*q == ' ')
				space = q;
			n += ((unsigned char)*q & 0xc0) != 0x80;
		}
		while (((unsigned char)*q & 0xc0) == 0x80)
			q++;
		if (*q != '\0' && *q != ' ') {
			if (space != NULL)
				q = space;
			else	/* one long word: whole, to its end */
				q += strcspn(q, " ");
		}
		/* No blank at the end of a line ("at  Holm" broken). */
		while (q > p && q[-1] == ' ')
			q--;
		if (first)
			fprintf(out, "%s%.*s\n", prefix, (int)(q - p), p);
		else
			fprintf(out, "%*s%.*s\n", (int)indent, "", (int)(q - p),
			    p);
		for (p = q; *p == ' '; p++)
			;
		first = 0;
	}
}

/*
 * Print one line of text.  Free text from hosts (agent errors, build
 * logs) may hold newlines or run long: control characters become spaces
 * and a line wider than the terminal is wrapped at spaces, continuation
 * lines indented two more than it.  The database and the JSON keep the
 * whole text.
 */
void
report_emit(FILE *out, const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	size_t lead;
	va_list ap;
	char *prefix;

	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	blank_controls(line.buf);
	if (width(line.buf) <= report_columns(out)) {
		fprintf(out, "%s\n", line.buf);
	} else {
		lead = strspn(line.buf, " ");
		prefix = xasprintf("%.*s", (int)lead, line.buf);
		wrap(out, prefix, lead + 2, line.buf + lead);
		free(prefix);
	}
	strbuf_release(&line);
}

/*
 * Print prefix and text over as many lines as it takes, breaking at
 * spaces, continuation lines indented under the text: the command line
 * is worth showing whole.
 */
void
report_emit_wrapped(FILE *out, const char *prefix, const char *text)
{
	char *copy = xstrdup(text), *pre = xstrdup(prefix);

	blank_controls(copy);
	blank_controls(pre);
	wrap(out, pre, width(pre), copy);
	free(pre);
	free(copy);
}

void
report_emit_rows(FILE *out, char **lines, size_t n)
{
	size_t i, wide = 0;

	for (i = 0; i < n; i++) {
		blank_controls(lines[i]);
		if (width(lines[i]) > wide)
			wide = width(lines[i]);
	}
	if (wide > report_columns(out))
		fprintf(out, "  (table is %zu columns wide)\n", wide);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s\n", lines[i]);
		free(lines[i]);
	}
}

/*
 * An event's message under its heading, wrapped: the numbers in a drift
 * warning come last.  Host text in it (build output) may be long or hold
 * newlines: newlines become spaces and the text stops at EVENT_TEXT_MAX
 * characters with "..."; the database and the JSON keep all of it.
 */
void
report_emit_event(FILE *out, const char *message)
{
	char *text = xstrdup(message);

	blank_controls(text);
	cut_cols(text, EVENT_TEXT_MAX);
	report_emit_wrapped(out, "    ", text);
	free(text);
}


static void
add(struct table *t, char *owned, int raw)
{
	ALLOC_GROW(t->cells, t->ncells);
	ALLOC_GROW(t->raw, t->ncells);
	t->raw[t->ncells] = (unsigned char)raw;
	t->cells[t->ncells++] = owned;
}

void
table_cell(struct table *t, char *owned)
{
	add(t, owned, 0);
}

void
table_raw(struct table *t, char *owned)
{
	add(t, owned, 1);
}

static void
table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->raw);
	free(t->mem);
	t->cells = NULL;
	t->raw = NULL;
	t->mem = NULL;
	t->ncells = 0;
}

static void
table_row(const struct table *t, const size_t *w, const char *const *cells,
    FILE *out)
{
	size_t c, n = 1, len, pad;
	char *line, *p;

	for (c = 0; c < t->ncols; c++)
		n += 2 + strlen(cells[c]) + w[c] - width(cells[c]);
	p = line = xmalloc(n);
	for (c = 0; c < t->ncols; c++) {
		len = strlen(cells[c]);
		pad = w[c] - width(cells[c]);
		/* No trailing blanks after a left-aligned last column. */
		if (c + 1 == t->ncols && t->align[c] == 'l')
			pad = 0;
		memset(p, ' ', 2);
		p += 2;
		if (t->align[c] == 'r') {
			memset(p, ' ', pad);
			p += pad;
		}
		memcpy(p, cells[c], len);
		p += len;
		if (t->align[c] == 'l') {
			memset(p, ' ', pad);
			p += pad;
		}
	}
	*p = '\0';
	blank_controls(line);
	fprintf(out, "%s\n", line);
	free(line);
}

void
table_print(struct table *t, FILE *out)
{
	size_t *w = xcalloc(t->ncols, sizeof *w);
	size_t i, c, total = 0;

	for (c = 0; c < t->ncols; c++)
		w[c] = width(t->heads[c]);
	for (i = 0; i < t->ncells; i++) {
		c = i % t->ncols;
		if (width(t->cells[i]) > w[c])
			w[c] = width(t->cells[i]);
	}
	for (c = 0; c < t->ncols; c++)
		total += 2 + w[c];
	/* Whole rather than cut, and said once, above its head. */
	if (total > report_columns(out))
		fprintf(out, "  (table is %zu columns wide)\n", total);
	table_row(t, w, t->heads, out);
	for (i = 0; i + t->ncols <= t->ncells; i += t->ncols)
		table_row(t, w, (const char *const *)&t->cells[i], out);
	table_free(t);
	free(w);
}

void
report_md_text(FILE *out, const char *s)
{
	if (s == NULL) {
		fputs("-", out);
		return;
	}
	for (; *s != '\0'; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' ||
		    *s == '_' || *s == '<')
			fputc('\\', out);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
	}
}

void
report_html_add(struct strbuf *sb, const char *s)
{
	if (s == NULL) {
		strbuf_addstr(sb, "-");
		return;
	}
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&':	strbuf_addstr(sb, "&amp;"); break;
		case '<':	strbuf_addstr(sb, "&lt;"); break;
		case '>':	strbuf_addstr(sb, "&gt;"); break;
		case '"':	strbuf_addstr(sb, "&quot;"); break;
		default:
			strbuf_addch(sb, (unsigned char)*s < 0x20 ? ' ' : *s);
		}
	}
}

void
report_csv_text(FILE *out, const char *s)
{
	const char *p;
	char *copy = NULL;

	if (s == NULL)
		return;
	/* The per-sample CSV streams text from the database, not the model. */
	for (p = s; *p != '\0' && (unsigned char)*p >= 0x20 && *p != 0x7f; p++)
		;
	if (*p != '\0') {
		copy = xstrdup(s);
		strip_ctrl(copy);
		s = copy;
	}
	if (strpbrk(s, ",\"") == NULL) {
		fputs(s, out);
	} else {
		fputc('"', out);
		for (p = s; *p != '\0'; p++) {
			if (*p == '"')
				fputc('"', out);
			fputc(*p, out);
		}
		fputc('"', out);
	}
	free(copy);
}

void
report_html_text(FILE *out, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	report_html_add(&sb, s);
	fputs(sb.buf, out);
	strbuf_release(&sb);
}

void
table_markdown(struct table *t, FILE *out)
{
	size_t i, c;

	fputc('|', out);
	for (c = 0; c < t->ncols; c++)
		fprintf(out, " %s |", t->heads[c]);
	fputs("\n|", out);
	for (c = 0; c < t->ncols; c++)
		fputs(t->align[c] == 'r' ? " ---: |" : " --- |", out);
	fputc('\n', out);
	for (i = 0; i < t->ncells; i++) {
		if (i % t->ncols == 0)
			fputc('|', out);
		fputc(' ', out);
		if (t->raw[i])
			fputs(t->cells[i], out);
		else if (*t->cells[i] != '\0') {
			report_md_text(out, t->cells[i]);
			fputc(' ', out);
		}
		fputs(t->raw[i] ? " |" : "|", out);
		if (i % t->ncols == t->ncols - 1)
			fputc('\n', out);
	}
	table_free(t);
}

void
table_html(struct table *t, FILE *out)
{
	size_t i, c;

	fputs("<div class=\"scroll\"><table><tr>", out);
	for (c = 0; c < t->ncols; c++)
		fprintf(out, "<th>%s</th>", t->heads[c]);
	fputs("</tr>\n", out);
	for (i = 0; i < t->ncells; i++) {
		c = i % t->ncols;
		if (c == 0)
			fputs("<tr>", out);
		fputs(t->align[c] == 'r' ? "<td class=\"n\">" : "<td>", out);
		if (t->raw[i])
			fputs(t->cells[i], out);
		else
			report_html_text(out, t->cells[i]);
		fputs("</td>", out);
		if (c == t->ncols - 1)
			fputs("</tr>\n", out);
	}
	fputs("</table></div>\n", out);
	table_free(t);
}

