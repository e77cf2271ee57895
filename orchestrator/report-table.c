/*
 * The report's text primitives: lines cut to a terminal's width, wrapped
 * paragraphs and tables whose columns are as wide as their widest cell.
 */
#include "report-table.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Every text line fits a terminal this wide. */
#define REPORT_COLUMNS 100

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
 * Cut s, in place, to max characters ending in "..." if it is wider.  s
 * then has at least max + 1 characters, so at least 4 bytes follow the
 * first max - 3 characters: room for "..." and its terminator.
 */
static void
cut_cols(char *s, size_t max)
{
	size_t cols = 0;

	if (width(s) <= max)
		return;
	for (; cols < max - 3 || ((unsigned char)*s & 0xc0) == 0x80; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	memcpy(s, "...", 4);
}

/*
 * Print one line of text.  Free text from hosts (agent errors, build
 * logs) may hold newlines or run long: control characters become spaces
 * and a line wider than REPORT_COLUMNS is cut to end in "...".  The
 * database and the JSON keep the whole text.
 */
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

void
report_emit(FILE *out, const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	blank_controls(line.buf);
	cut_cols(line.buf, REPORT_COLUMNS);
	fprintf(out, "%s\n", line.buf);
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
	size_t indent = width(prefix), room = REPORT_COLUMNS - indent, cols;
	const char *p = text, *q, *space;
	int first = 1;

	while (first || *p != '\0') {
		space = NULL;
		cols = 0;
		for (q = p; *q != '\0' && cols < room; q++) {
			if (*q == ' ')
				space = q;
			cols += ((unsigned char)*q & 0xc0) != 0x80;
		}
		while (((unsigned char)*q & 0xc0) == 0x80)
			q++;
		if (*q != '\0' && *q != ' ' && space != NULL)
			q = space;
		if (first)
			report_emit(out, "%s%.*s", prefix, (int)(q - p), p);
		else
			report_emit(out, "%*s%.*s", (int)indent, "", (int)(q - p), p);
		for (p = q; *p == ' '; p++)
			;
		first = 0;
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
	report_emit(out, "%s", line);
	free(line);
}

void
table_print(struct table *t, FILE *out)
{
	size_t *w = xcalloc(t->ncols, sizeof *w);
	size_t i, c;

	for (c = 0; c < t->ncols; c++)
		w[c] = width(t->heads[c]);
	for (i = 0; i < t->ncells; i++) {
		c = i % t->ncols;
		if (width(t->cells[i]) > w[c])
			w[c] = width(t->cells[i]);
	}
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
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
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

