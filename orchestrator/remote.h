/*
 * Remote commands: every shell command line seqorch sends to a host is
 * built here, so that every value in it is quoted (strbuf.h's
 * strbuf_add_shquoted) and the programs themselves stay readable as
 * scripts (remote-scripts.c).  A command goes into a struct strbuf the
 * caller owns and releases (strbuf_release, or strbuf_detach and free).
 */
#ifndef SEQORCH_REMOTE_H
#define SEQORCH_REMOTE_H

#include "config.h"
#include "strbuf.h"

#include <stddef.h>

/* Append s as one quoted word, after a space unless cmd is empty. */
void rcmd_arg(struct strbuf *cmd, const char *s);
/* The same with a formatted word. */
void rcmd_argf(struct strbuf *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Append program text as it is (strbuf_addf): only seqorch's own words and
 * numbers, never a value from the user, hosts.toml or a host (those go
 * through rcmd_arg).
 */
#define rcmd_raw strbuf_addf

/*
 * Append script with each {{name}} replaced by the quoted value of name
 * and each {{&name}} by the value as it is (a command built with these
 * functions, or the host's build_wrapper, which hosts.toml gives as shell
 * text).  vars holds name, value pairs and ends with a NULL name.  A
 * placeholder without a value is a bug in seqorch: it aborts.
 */
void rcmd_script(struct strbuf *cmd, const char *script,
    const char *const *vars);

/*
 * Append the program the host's /bin/sh runs for command line cmd: cmd
 * after rscript_locale, so it runs in the C locale whatever the login
 * environment says.  Both transports send every command through it.
 */
void rcmd_sh(struct strbuf *out, const char *cmd);

/*
 * The agent's --cpu word for h (also shown by `hosts list`): the CPU
 * number, "auto" or "none", written into buf, which is returned.
 */
const char *rcmd_cpu(const struct host *h, char *buf, size_t len);

#endif
