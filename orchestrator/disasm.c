/*
 * Verify each variant's declared instructions in its built binary: those
 * it requires (insns) are there, those it forbids (a reassociated,
 * shortened or vectorized chain) are not.
 */
#include "disasm.h"

#include "artifact.h"
#include "protocol.h"
#include "remote-scripts.h"
#include "remote.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST (256 * 1024)
#define MAX_DISASM (8 * 1024 * 1024)
#define MAX_KERNELS 64
#define EXCERPT_LINES 3		/* per required instruction */
/* The extensions of every ARM variant's instructions (llvm-objdump). */
#define LLVM_MATTR "--mattr=+sha3,+sve2-bitperm,+aes"

struct want {
	const char *study, *variant, *symbol;	/* point into the list json */
	const cJSON *insns, *forbidden;
};

/* Symbols go into an awk pattern: allow C identifiers only. */
static int
identifier(const char *s)
{
	size_t i;

	if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return i < 128;
}

/*
 * Is the suffix after a mnemonic's dot an arrangement?  llvm-objdump on
 * Mach-O (Xcode's objdump) prints Apple's NEON syntax, the arrangement on
 * the mnemonic ("eor3.16b v0, v1, v2, v3", "mov.s w0, v1[1]"), where GNU
 * syntax puts it on the operands; "b.ne" keeps its condition.
 */
static int
arrangement(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	return i + 1 == n && strchr("bhsdq", s[i]) != NULL && s[i] != '\0';
}

/*
 * Does the instruction at mn (the mnemonic, len bytes, then its operands
 * to the end of the line) name mnemonic?  The mnemonic as printed, or
 * without an Apple arrangement suffix; "mov" of a vector element into a
 * general register is umov (both syntaxes print the alias).
 */
static int
same_insn(const char *mn, size_t len, const char *mnemonic)
{
	size_t n = strlen(mnemonic), base = len;
	const char *dot = memchr(mn, '.', len), *op = mn + len;
	const char *eol = strchr(op, '\n');

	if (len == n && strncmp(mn, mnemonic, n) == 0)
		return 1;
	if (dot != NULL && arrangement(dot + 1, len - (size_t)(dot - mn) - 1))
		base = (size_t)(dot - mn);
	if (base == n && strncmp(mn, mnemonic, n) == 0)
		return 1;
	if (strcmp(mnemonic, "umov") != 0 || base != 3 ||
	    strncmp(mn, "mov", 3) != 0)
		return 0;
	op += strspn(op, " \t");
	if (eol == NULL)
		eol = op + strlen(op);
	return (op[0] == 'w' || op[0] == 'x') &&
	    isdigit((unsigned char)op[1]) && memchr(op, '[',
	    (size_t)(eol - op)) != NULL;
}

const char *
disasm_find(const char *text, const char *mnemonic)
{
	const char *line = text;

	/* objdump lines: "  addr:\tmnemonic operands" (no raw bytes). */
	while (line != NULL && *line) {
		const char *tab = strchr(line, '\t');
		const char *eol = strchr(line, '\n');

		if (tab != NULL && (eol == NULL || tab < eol) &&
		    same_insn(tab + 1, strcspn(tab + 1, " \t\n"), mnemonic))
			return line;
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/* disasm_body with the symbol as the object file spells it, after prefix. */
static char *
body_of(const char *dump, const char *prefix, const char *sym)
{
	struct strbuf body = STRBUF_INIT;
	char *head = xasprintf(" <%s%s", prefix, sym);
	const char *p = dump, *start, *end;
	size_t n = strlen(head);
	int found = 0;

	for (; (p = strstr(p, head)) != NULL; p += n) {
		if ((p[n] != '>' && p[n] != '.') ||
		    (start = strchr(p, '\n')) == NULL)
			continue;
		start++;
		end = strstr(start, "\n\n");
		strbuf_add(&body, start, end ? (size_t)(end - start + 1) :
		    strlen(start));
		found = 1;
	}
	free(head);
	if (!found) {
		strbuf_release(&body);
		return NULL;
	}
	return strbuf_detach(&body);
}

char *
disasm_body(const char *dump, const char *sym)
{
	char *body = body_of(dump, "", sym);

	/* Mach-O names a C function with a leading underscore: "<_sym>". */
	return body != NULL ? body : body_of(dump, "_", sym);
}

/* Append up to EXCERPT_LINES lines with mnemonic from body to ex. */
static void
excerpt_add(struct strbuf *ex, const char *body, const char *mnemonic)
{
	const char *line = body;
	int k;

	for (k = 0; k < EXCERPT_LINES &&
	    (line = disasm_find(line, mnemonic)) != NULL; k++) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		strbuf_add(ex, line, len);
		strbuf_addch(ex, '\n');
		line = eol ? eol + 1 : line + len;
	}
}

/* Append word to a space-separated list. */
static void
add_word(struct strbuf *list, const char *word)
{
	if (list->len > 0)
		strbuf_addch(list, ' ');
	strbuf_addstr(list, word);
}

/*
 * Add the mnemonics of arr (NULL: none) to words, those found in body
 * (with want_found) or not found (without) to hit, and the lines of those
 * found to ex.  Without a body only words grows.
 */
static void
scan_list(const cJSON *arr, const char *body, int want_found,
    struct strbuf *words, struct strbuf *hit, struct strbuf *ex)
{
	const cJSON *m;
	int found;

	cJSON_ArrayForEach(m, arr) {
		if (!cJSON_IsString(m))
			continue;
		add_word(words, m->valuestring);
		if (body == NULL)
			continue;
		found = disasm_find(body, m->valuestring) != NULL;
		if (found == want_found)
			add_word(hit, m->valuestring);
		if (found)
			excerpt_add(ex, body, m->valuestring);
	}
}

static int
check_one(struct db *db, int64_t build_id, const struct want *w,
    const char *dump, const char *tool, unsigned *bad, struct so_err *err)
{
	struct disasm_row row = { .build_id = build_id, .study = w->study,
	    .variant = w->variant, .symbol = w->symbol, .tool = tool };
	struct strbuf required = STRBUF_INIT, missing = STRBUF_INIT;
	struct strbuf forbidden = STRBUF_INIT, present = STRBUF_INIT;
	struct strbuf ex = STRBUF_INIT;
	char *body = dump ? disasm_body(dump, w->symbol) : NULL;
	int rc;

	scan_list(w->insns, body, 0, &required, &missing, &ex);
	scan_list(w->forbidden, body, 1, &forbidden, &present, &ex);
	row.required = required.buf;
	row.forbidden = forbidden.len ? forbidden.buf : NULL;
	/* A forbidden instruction says the chain is not the one defined. */
	if (dump == NULL)
		row.status = "no-tool";
	else if (body == NULL)
		row.status = "no-symbol";
	else if (present.len)
		row.status = "forbidden";
	else
		row.status = missing.len ? "missing" : "ok";
	row.missing = missing.len ? missing.buf : NULL;
	row.present = present.len ? present.buf : NULL;
	row.excerpt = ex.len ? ex.buf : NULL;
	/* counted here: lacking; forbidden ones are read back by the caller */
	if (dump != NULL && (body == NULL || missing.len))
		(*bad)++;
	rc = db_disasm_put(db, &row, err);
	free(body);
	strbuf_release(&ex);
	strbuf_release(&present);
	strbuf_release(&forbidden);
	strbuf_release(&missing);
	strbuf_release(&required);
	return rc;
}

void
disasm_command(struct strbuf *cmd, const char *agent, const char *symbols)
{
	char *awk = xasprintf("/^[0-9a-f]+ <_?(%s)(\\.[^>]*)?>:$/ "
	    "{ p = 1 } /^$/ { if (p) print; p = 0 } p", symbols);

	rcmd_script(cmd, rscript_objdump, (const char *const[]){ "agent",
	    agent, "awk", awk, "mattr", LLVM_MATTR, NULL });
	free(awk);
}

int
disasm_check(struct conn *c, const char *agent, int64_t build_id,
    struct db *db, unsigned *bad, struct so_err *err)
{
	struct strbuf cmd = STRBUF_INIT, pattern = STRBUF_INIT;
	char *list = NULL, *dump = NULL, *line, *next;
	struct want wants[MAX_KERNELS];
	cJSON *recs[MAX_KERNELS];
	size_t n = 0, nrec = 0, i;
	const char *tool = NULL;
	int status, rc;

	*bad = 0;
	rcmd_arg(&cmd, agent);
	rcmd_raw(&cmd, " --list");
	rc = conn_capture(c, cmd.buf, MAX_LIST, &list, &status, err);
	if (rc == 0 && status != 0)
		rc = so_error(err, SO_EAGENT, "host \"%s\": \"%s --list\" "
		    "exited with status %d", c->host->name, agent, status);
	if (rc != 0)
		goto out;
	for (line = list; line != NULL; line = next) {
		cJSON *r;

		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((r = cJSON_Parse(line)) == NULL)
			continue;
		if (nrec == MAX_KERNELS) {
			cJSON_Delete(r);
			rc = so_error(err, SO_EAGENT, "host \"%s\": \"%s "
			    "--list\" names more than %d kernels", c->host->name,
			    agent, MAX_KERNELS);
			goto out;
		}
		recs[nrec++] = r;
		const cJSON *insns = cJSON_GetObjectItemCaseSensitive(r,
		    PROTO_F_INSNS);
		const cJSON *forb = cJSON_GetObjectItemCaseSensitive(r,
		    PROTO_F_FORBIDDEN);
		const char *sym = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r,
		    PROTO_F_SYMBOL));
		if (!cJSON_IsArray(insns))
			insns = NULL;
		if (!cJSON_IsArray(forb))
			forb = NULL;
		if ((cJSON_GetArraySize(insns) == 0 &&
		    cJSON_GetArraySize(forb) == 0) || !identifier(sym))
			continue;
		wants[n].study = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(r, PROTO_F_STUDY));
		wants[n].variant = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(r, PROTO_F_VARIANT));
		wants[n].symbol = sym;
		wants[n].insns = insns;
		wants[n].forbidden = forb;
		if (wants[n].study == NULL || wants[n].variant == NULL)
			continue;
		if (pattern.len > 0)
			strbuf_addch(&pattern, '|');
		strbuf_addstr(&pattern, sym);
		n++;
	}
	if (n == 0)
		goto out;
	strbuf_reset(&cmd);
	disasm_command(&cmd, agent, pattern.buf);
	rc = conn_capture_ex(c, cmd.buf, MAX_DISASM, 120000, NULL, 0, &dump,
	    &status, err);
	if (rc != 0)
		goto out;
	if (status == 3) {
		free(dump);
		dump = NULL;
	} else {
		tool = status == 4 ? "objdump -d --no-show-raw-insn "
		    LLVM_MATTR : "objdump -d --no-show-raw-insn";
		/* The functions' disassembly, as the host's objdump gave it. */
		if ((rc = artifact_keep(db, build_id, "disasm", "objdump",
		    dump, strlen(dump), NULL, err)) != 0)
			goto out;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = check_one(db, build_id, &wants[i], dump, tool, bad, err);
out:
	for (i = 0; i < nrec; i++)
		cJSON_Delete(recs[i]);
	free(dump);
	strbuf_release(&pattern);
	free(list);
	strbuf_release(&cmd);
	return rc;
}
