/*
 * results.db held by another writer (a sqlite3 shell inside a transaction,
 * seqorch gc, another tool): a run waits for it longer than other commands,
 * since what the agents finish meanwhile stays on their hosts.
 */
#include "db-int.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* How often a waiting statement tries the lock again. */
#define WAIT_POLL_US 50000
/*
 * The byte of DB-shm whose write lock a WAL writer holds (SQLite's
 * UNIX_SHM_BASE, lock WAL_WRITE_LOCK).
 */
#define SHM_WRITE_BYTE 120

/*
 * "comm, pid P" of the process holding the write lock on db's -shm file,
 * from /proc/locks (read, never opened: closing a descriptor of the file
 * would drop our own process's locks on it); "" when it cannot be told.
 */
static void
lock_holder(struct db *db, char *buf, size_t len)
{
	const char *path = sqlite3_db_filename(db->h, "main");
	char shm[4096], line[256], type[16], comm[64] = "", proc[64];
	unsigned maj, min;
	unsigned long ino;
	long pid, start;
	struct stat st;
	FILE *f;

	buf[0] = '\0';
	if (path == NULL || snprintf(shm, sizeof shm, "%s-shm", path) >=
	    (int)sizeof shm || stat(shm, &st) != 0 ||
	    (f = fopen("/proc/locks", "r")) == NULL)
		return;
	/* "1: POSIX ADVISORY WRITE 4242 08:01:1234 120 120"; "->": a waiter */
	while (fgets(line, sizeof line, f) != NULL) {
		if (strstr(line, "->") != NULL || sscanf(line, "%*d: %*s %*s "
		    "%15s %ld %x:%x:%lu %ld", type, &pid, &maj, &min, &ino,
		    &start) != 6)
			continue;
		if (strcmp(type, "WRITE") != 0 || pid <= 0 ||
		    pid == (long)getpid() || ino != (unsigned long)st.st_ino ||
		    maj != major(st.st_dev) || min != minor(st.st_dev) ||
		    start > SHM_WRITE_BYTE)
			continue;
		snprintf(proc, sizeof proc, "/proc/%ld/comm", pid);
		fclose(f);
		if ((f = fopen(proc, "r")) == NULL ||
		    fgets(comm, sizeof comm, f) == NULL)
			snprintf(comm, sizeof comm, "?");
		comm[strcspn(comm, "\n")] = '\0';
		strip_ctrl(comm);
		snprintf(buf, len, "%s, pid %ld", comm, pid);
		break;
	}
	if (f != NULL)
		fclose(f);
}

static int
wait_writer(void *arg, int count)
{
	struct db *db = arg;
	struct timespec now;
	char holder[128];
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (count == 0) {
		db->wait_from = now;
		db->warned = 0;
	}
	ms = (int64_t)(now.tv_sec - db->wait_from.tv_sec) * 1000 +
	    (now.tv_nsec - db->wait_from.tv_nsec) / 1000000;
	if (ms >= (int64_t)db->wait_s * 1000 ||
	    (ms >= DB_BUSY_MS && *db->stop))
		return 0;
	if (ms >= DB_BUSY_MS && !db->warned) {
		db->warned = 1;
		lock_holder(db, holder, sizeof holder);
		db->warn(sqlite3_db_filename(db->h, "main"), holder);
	}
	usleep(WAIT_POLL_US);
	return 1;
}

void
db_wait_writers(struct db *db, int wait_s, volatile sig_atomic_t *stop,
    void (*warn)(const char *path, const char *holder))
{
	if (wait_s <= 0) {
		sqlite3_busy_timeout(db->h, DB_BUSY_MS);
		return;
	}
	db->wait_s = wait_s;
	db->stop = stop;
	db->warn = warn;
	sqlite3_busy_handler(db->h, wait_writer, db);
}
