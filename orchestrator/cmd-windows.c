/*
 * seqorch windows: the measurement windows of a run (or of all runs), who
 * held them and for how long, drift between their before and after
 * snapshots, and who holds the measurement lease now.
 */
#include "cmd.h"
#include "db.h"
#include "window.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *
text(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s != NULL ? s : "-";
}

/*
 * The run whose coordinator holds the lease and is alive (its process
 * runs on this machine, or its heartbeat is recent), in *live (0: none);
 * *why says why a holder is taken for dead.
 */
static int
live_holder(sqlite3 *h, int64_t *live, char *why, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*live = 0;
	why[0] = '\0';
	if (sqlite3_prepare_v2(h, "SELECT run_id, holder_host, holder_pid, "
	    "strftime('%s', 'now') - heartbeat_unix FROM leases WHERE "
	    "name = ?", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, LEASE_NAME, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *hh = text(st, 1);
		long pid = (long)sqlite3_column_int64(st, 2);
		double age = sqlite3_column_double(st, 3);

		if (db_holder_dead(hh, pid))
			snprintf(why, len, "its process %ld no longer runs on "
			    "%s", pid, hh);
		else if (age > LEASE_EXPIRY_DEFAULT)
			snprintf(why, len, "no heartbeat for %.0f s", age);
		else
			*live = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int
list_windows(sqlite3 *h, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	char why[256];
	int64_t live;
	int rc, rows = 0;

	if (live_holder(h, &live, why, sizeof why) != 0)
		return -1;
	/*
	 * A window without an end (NULL duration) is open while its run's
	 * coordinator lives; else it was cut and never closed.
	 */
	rc = sqlite3_prepare_v2(h, "SELECT id, run_id, study, host, holder, "
	    "started_at, (julianday(finished_at) - julianday(started_at)) * "
	    "86400.0, drift FROM windows WHERE (?1 = 0 OR run_id = ?1) "
	    "ORDER BY started_at, id", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char dur[32];

		if (rows++ == 0)
			printf("%5s %5s %-8s %-12s %-24s %9s  %s\n", "id",
			    "run", "study", "host", "started", "duration",
			    "holder");
		if (sqlite3_column_type(st, 6) != SQLITE_NULL)
			snprintf(dur, sizeof dur, "%.1fs",
			    sqlite3_column_double(st, 6));
		else
			snprintf(dur, sizeof dur, "%s",
			    sqlite3_column_int64(st, 1) == live ? "open" :
			    "cut");
		printf("%5lld %5lld %-8.8s %-12.12s %-24.24s %9s  %s\n",
		    (long long)sqlite3_column_int64(st, 0),
		    (long long)sqlite3_column_int64(st, 1), text(st, 2),
		    text(st, 3), text(st, 5), dur, text(st, 4));
		if (sqlite3_column_type(st, 7) != SQLITE_NULL)
			printf("      drift: %s\n", text(st, 7));
		else if (sqlite3_column_type(st, 6) == SQLITE_NULL &&
		    sqlite3_column_int64(st, 1) != live)
			printf("      never closed: its coordinator stopped "
			    "before the window's end\n");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (rows == 0)
		printf("no measurement windows%s\n", run_id ? " in that run" :
		    "");
	return 0;
}

static int
show_lease(sqlite3 *h)
{
	sqlite3_stmt *st = NULL;
	char why[256];
	int64_t live;
	int rc;

	if (live_holder(h, &live, why, sizeof why) != 0)
		return -1;
	if (sqlite3_prepare_v2(h, "SELECT holder, run_id, study, acquired_at, "
	    "strftime('%s', 'now') - heartbeat_unix FROM leases WHERE "
	    "name = ?", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, LEASE_NAME, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && why[0] != '\0')
		printf("\nno one holds the measurement window now: %s (run "
		    "%lld, study %s) took it at %s and is gone (%s); the next "
		    "run takes it over\n", text(st, 0),
		    (long long)sqlite3_column_int64(st, 1), text(st, 2),
		    text(st, 3), why);
	else if (rc == SQLITE_ROW)
		printf("\nwindow held now by %s (run %lld, study %s) since %s, "
		    "last heartbeat %.0f s ago\n", text(st, 0),
		    (long long)sqlite3_column_int64(st, 1), text(st, 2),
		    text(st, 3), sqlite3_column_double(st, 4));
	else if (rc == SQLITE_DONE)
		printf("\nno one holds the measurement window now\n");
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -1;
	if (sqlite3_prepare_v2(h, "SELECT at, holder, previous FROM "
	    "lease_events WHERE event = 'takeover' ORDER BY id DESC LIMIT 5",
	    -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		printf("takeover at %s: %s took the window from %s\n",
		    text(st, 0), text(st, 1), text(st, 2));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
windows_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "results.db";
	struct db *db = NULL;
	struct so_err err;
	int64_t run_id = 0;
	int c, rc = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (cmd_run_id_arg("--run", optarg,
			    &run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'd': path = optarg; break;
		case 'h':
			cmd_print_usage(cmd_find("windows"));
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (cmd_extra_args(argc, argv) != 0)
		return EXIT_USAGE;
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "seqorch: cannot open \"%s\": no such file\n",
		    path);
		return EXIT_DB;
	}
	if (db_open(path, &db, &err) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return EXIT_DB;
	}
	if (list_windows(db_handle(db), run_id) != 0 ||
	    show_lease(db_handle(db)) != 0) {
		fprintf(stderr, "seqorch: database: %s\n",
		    sqlite3_errmsg(db_handle(db)));
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
	.exec = windows_exec,
};
