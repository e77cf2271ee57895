/* Building remote commands with every value quoted (remote.h). */
#include "remote.h"
#include "remote-scripts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rcmd_arg(struct strbuf *cmd, const char *s)
{
	if (cmd->len > 0)
		strbuf_addch(cmd, ' ');
	strbuf_add_shquoted(cmd, s);
}

void
rcmd_argf(struct strbuf *cmd, const char *fmt, ...)
{
	struct strbuf word = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&word, fmt, ap);
	va_end(ap);
	rcmd_arg(cmd, word.buf);
	strbuf_release(&word);
}

static const char *
var_value(const char *const *vars, const char *name, size_t len)
{
	size_t i;

	for (i = 0; vars[i] != NULL; i += 2)
		if (strlen(vars[i]) == len && strncmp(vars[i], name, len) == 0 &&
		    vars[i + 1] != NULL)
			return vars[i + 1];
	fprintf(stderr, "seqorch: BUG: remote script placeholder \"%.*s\" "
	    "has no value\n", (int)len, name);
	abort();
}

void
rcmd_script(struct strbuf *cmd, const char *script, const char *const *vars)
{
	const char *p = script, *open, *close, *name;
	int raw;

	while ((open = strstr(p, "{{")) != NULL &&
	    (close = strstr(open, "}}")) != NULL) {
		strbuf_add(cmd, p, (size_t)(open - p));
		name = open + 2;
		raw = *name == '&';
		name += raw;
		if (raw)
			strbuf_addstr(cmd, var_value(vars, name,
			    (size_t)(close - name)));
		else
			strbuf_add_shquoted(cmd, var_value(vars, name,
			    (size_t)(close - name)));
		p = close + 2;
	}
	strbuf_addstr(cmd, p);
}

void
rcmd_sh(struct strbuf *out, const char *cmd)
{
	strbuf_addstr(out, rscript_locale);
	strbuf_addstr(out, cmd);
}

const char *
rcmd_cpu(const struct host *h, char *buf, size_t len)
{
	if (h->cpu == HOST_CPU_AUTO)
		snprintf(buf, len, "auto");
	else if (h->cpu < 0)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%d", h->cpu);
	return buf;
}
