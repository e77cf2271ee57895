/*
 * seqorch windows: the measurement windows of a run (or of all runs), who
 * held them and for how long, drift between their before and after
 * snapshots, and who holds the measurement lease now.
 */
#include "cmd.h"
#include "db.h"
#include "db-report.h"
#include "strbuf.h"
#include "window.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
text(const char *s)
{
	return s != NULL ? s : "-";
}

/*
 * Print one line (fmt without its newline), every control character of
 * it, a newline included, shown as '?': its text comes from the
 * database, an imported bundle's or an agent's, and must neither drive
 * the terminal nor forge a line.
 */
static void __attribute__((format(printf, 1, 2)))
print_line(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strip_ctrl(sb.buf);
	puts(sb.buf);
	strbuf_release(&sb);
}

/*
 * The lease, and the run whose coordinator holds it and is alive (its
 * process runs on this machine, or its heartbeat is recent, or it is on
 * another machine, which only a run's two looks can take for gone) in
 * *live (0: none); *why says why a holder is taken for dead, *silent
 * whether one on another machine is past the expiry.  0, SO_ENOTFOUND
 * when no one holds it, or an error.
 */
static int
live_holder(struct db *db, struct lease_state *l, int64_t *live, char *why,
    size_t len, int *silent, struct so_err *err)
{
	int rc;

	*live = 0;
	*silent = 0;
	why[0] = '\0';
	if ((rc = db_lease_get(db, LEASE_NAME, l, err)) != 0)
		return rc;
	if (db_holder_dead(l->holder_host, l->pid))
		snprintf(why, len, "its process %ld no longer runs on %s",
		    l->pid, l->holder_host);
	else if (l->age > LEASE_EXPIRY_DEFAULT &&
	    db_holder_may_expire(l->holder_host, l->pid) &&
	    db_holder_here(l->holder_host))
		snprintf(why, len, "no heartbeat for %.0f s", l->age);
	else {
		/* Here a running holder is alive, however silent. */
		*silent = l->age > LEASE_EXPIRY_DEFAULT &&
		    !db_holder_here(l->holder_host);
		*live = l->run_id;
	}
	return 0;
}

struct list_state {
	int64_t live;
	int rows;
};

/*
 * A window without an end is open while its run's coordinator lives;
 * else it was cut and never closed.
 */
static int
print_window(void *arg, const struct window_row *w)
{
	struct list_state *ls = arg;
	char dur[32];

	if (ls->rows++ == 0)
		printf("%5s %5s %-8s %-12s %-24s %9s  %s\n", "id", "run",
		    "study", "host", "started", "duration", "holder");
	if (w->closed)
		snprintf(dur, sizeof dur, "%.1fs", w->duration);
	else
		snprintf(dur, sizeof dur, "%s", w->run_id == ls->live ?
		    "open" : "cut");
	print_line("%5lld %5lld %-8.8s %-12.12s %-24.24s %9s  %s",
	    (long long)w->id, (long long)w->run_id, text(w->study),
	    text(w->host), text(w->started_at), dur, text(w->holder));
	if (w->drift != NULL)
		print_line("      drift: %s", w->drift);
	else if (!w->closed && w->run_id != ls->live)
		printf("      never closed: its coordinator stopped before "
		    "the window's end\n");
	return 0;
}

static int
print_takeover(void *arg, const struct lease_takeover *t)
{
	(void)arg;
	print_line("takeover at %s: %s took the window from %s", text(t->at),
	    text(t->holder), text(t->previous));
	return 0;
}

static int
list_windows(struct db *db, int64_t run_id, struct so_err *err)
{
	struct list_state ls = { 0 };
	struct lease_state l;
	char why[512];
	int rc, silent;

	rc = live_holder(db, &l, &ls.live, why, sizeof why, &silent, err);
	if ((rc != 0 && rc != SO_ENOTFOUND) ||
	    (rc = db_window_list(db, run_id, print_window, &ls, err)) != 0)
		return rc;
	if (ls.rows == 0)
		printf("no measurement windows%s\n", run_id ? " in that run" :
		    "");
	return 0;
}

static int
show_lease(struct db *db, struct so_err *err)
{
	struct lease_state l;
	char why[512];
	int64_t live;
	int rc, silent;

	rc = live_holder(db, &l, &live, why, sizeof why, &silent, err);
	if (rc == 0)
		putchar('\n');
	if (rc == 0 && why[0] != '\0')
		print_line("no one holds the measurement window now: %s (run "
		    "%lld, study %s) took it at %s and is gone (%s); the next "
		    "run takes it over", l.holder,
		    (long long)l.run_id, l.study, l.acquired_at,
		    why);
	else if (rc == 0 && silent)
		print_line("window held now by %s (run %lld, study %s) since "
		    "%s, silent for %.0f s, over the expiry (%d s): it runs on "
		    "another machine, so the next run takes the window over "
		    "if it stays silent %d s more with results.db free",
		    l.holder, (long long)l.run_id, l.study, l.acquired_at,
		    l.age, LEASE_EXPIRY_DEFAULT,
		    lease_beat_s(LEASE_EXPIRY_DEFAULT));
	else if (rc == 0)
		print_line("window held now by %s (run %lld, study %s) since "
		    "%s, last heartbeat %.0f s ago", l.holder,
		    (long long)l.run_id, l.study, l.acquired_at,
		    l.age);
	else if (rc == SO_ENOTFOUND)
		printf("\nno one holds the measurement window now\n");
	if (rc != 0 && rc != SO_ENOTFOUND)
		return rc;
	return db_lease_takeovers(db, 5, print_takeover, NULL, err);
}

static int
windows_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *path = "results.db";
	struct db *db = NULL;
	struct so_err err = { 0 };
	int64_t run_id = 0;
	int c, done, rc = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'r':
			if (cmd_run_id_arg("--run", optarg,
			    &run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'd': path = optarg; break;
		}
	}
	if (done >= 0)
		return done;
	if (cmd_open_existing_db(path, &db) != EXIT_OK)
		return EXIT_DB;
	/* A run that is not there is a bad --run, as in report and export. */
	if (run_id > 0) {
		char *study = NULL;

		rc = db_report_run_study(db_handle(db), run_id, &study, &err);
		free(study);
		if (rc == SO_ENOTFOUND)
			db_report_no_run(db_handle(db), run_id, &err);
		if (rc != 0) {
			cmd_error(err.msg);
			db_close(db);
			return rc == SO_ENOTFOUND ? EXIT_USAGE : EXIT_DB;
		}
	}
	if (list_windows(db, run_id, &err) != 0 ||
	    show_lease(db, &err) != 0) {
		cmd_error(err.msg);
		rc = EXIT_DB;
	}
	db_close(db);
	return rc;
}

const struct cmd_entry cmd_windows_entry = {
	.name = "windows",
	.summary = "list measurement windows and who holds the window now",
	.usage =
	    "usage: seqorch windows [--run ID] [--db results.db]\n"
	    "\n"
	    "Lists each host's measurement window (start, duration, holder,\n"
	    "drift between its before and after host-state snapshots), the\n"
	    "coordinator that holds the window now and recent takeovers.\n",
	.opts = (const struct cmd_opt[]){
		{ "run", 'r', 0, "ID", "only the windows of run ID",
		    CMD_VALUE_RUN, NULL },
		CMD_OPT_DB("FILE"),
		CMD_OPT_END,
	},
	.optcol = 14,
	.exec = windows_exec,
};
