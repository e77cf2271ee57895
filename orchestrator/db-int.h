/*
 * Inside the storage layer only (db*.c): the connection and the helpers
 * every table's file shares.  Nothing outside orchestrator/db*.c includes
 * this.
 */
#ifndef SEQORCH_DB_INT_H
#define SEQORCH_DB_INT_H

#include "db.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

/* The busy timeout of every connection, and when db_wait_writers warns. */
#define DB_BUSY_MS 10000

struct db {
	sqlite3 *h;
	/* Hosts run in threads; a write and its last_insert_rowid pair up. */
	pthread_mutex_t mu;
	/* db_wait_writers: the longer wait's bound, stop flag and warning. */
	int wait_s;
	volatile sig_atomic_t *stop;
	void (*warn)(const char *path, const char *holder);
	struct timespec wait_from;	/* this wait's first busy call */
	int warned;			/* warn was called for this wait */
};

/* SO_EDB with "database: WHAT: <sqlite's message>" in err. */
int db_err(struct db *db, struct so_err *err, const char *what);

/* Filled by db_sql when asked: the statement's rowid and changes. */
struct run_out {
	int64_t rowid;
	int changes;
};

/*
 * Prepare sql, bind the arguments described by fmt and step once, under
 * the connection's mutex.  fmt letters: s = const char * (NULL binds
 * NULL), i = int64_t, d = double, n = an int64_t that is bound as NULL,
 * t = the time now as iso_now writes it (no argument).
 * Returns the sqlite step result code or -1; o may be NULL.
 */
int db_sql(struct db *db, struct run_out *o, const char *sql,
    const char *fmt, ...);

/*
 * Prepare sql, bind fmt's arguments as db_sql does, and call row for each
 * result row, under the connection's mutex, until it returns non-zero.
 * Returns that value, 0 when the rows ran out, or SO_EDB with "database:
 * WHAT: ..." in err.
 */
int db_each(struct db *db, struct so_err *err, const char *what,
    int (*row)(sqlite3_stmt *st, void *ctx), void *ctx, const char *sql,
    const char *fmt, ...);

/* db_sql for a statement that returns no row: 0, or db_err(WHAT). */
int db_exec(struct db *db, struct so_err *err, const char *what,
    struct run_out *o, const char *sql, const char *fmt, ...);

/* A column's text as a new string (caller frees), NULL for NULL. */
char *db_col_dup(sqlite3_stmt *st, int col);

#endif
