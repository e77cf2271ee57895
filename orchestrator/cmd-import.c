/*
 * seqorch import: merge the runs of a verified bundle into results.db
 * under new ids, keeping where they came from.  A bundle that fails
 * verification, or whose rows this database refuses, is refused whole
 * (one transaction for all its runs); importing the same bundle twice
 * changes nothing.  Only each run's own rows are written (db_run_import).
 */
#include "artifact.h"
#include "bundle.h"
#include "cmd.h"
#include "db.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
import_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *pubkey = NULL, *path = "results.db";
	struct bundle b = { 0 };
	struct bundle_info info = { 0 };
	struct so_err err = { 0 };
	struct db *db = NULL;
	struct import_origin o = { 0 };
	struct import_file *files = NULL;
	int64_t *ids = NULL;
	int *earlier = NULL;
	size_t i, nfiles = 0;
	int c, done, rc, ret = EXIT_OK, is_unsigned = 0, lock = -1;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'k': pubkey = optarg; break;
		case 'd': path = optarg; break;
		case 'U': is_unsigned = 1; break;
		}
	}
	if (done >= 0)
		return done;
	if ((rc = cmd_load_bundle(argv, pubkey, is_unsigned, &b)) != EXIT_OK)
		return rc;
	/*
	 * A database it could not write is said before the verification,
	 * which may take minutes, and without creating it: a bundle refused
	 * leaves no empty database behind.
	 */
	if (db_can_open(path, &err) != 0) {
		cmd_error(err.msg);
		ret = EXIT_DB;
		goto out;
	}
	if (bundle_verify(&b, pubkey, &info, stderr, &err) != 0) {
		fprintf(stderr, "seqorch: import: refused, the bundle does not "
		    "verify: %s\n", err.msg);
		ret = EXIT_FAIL;
		goto out;
	}
	o.runs = info.runs;
	o.nruns = info.nruns;
	o.coordinator = info.coordinator;
	o.db_path = info.db_path;
	o.key_fingerprint = is_unsigned ? NULL : info.key_fingerprint;
	o.manifest_sha256 = info.manifest_sha256;
	if (db_open(path, &db, &err) != 0) {
		cmd_error(err.msg);
		ret = EXIT_DB;
		goto out;
	}
	/*
	 * Files first, unrecorded: a crash or a refusal below leaves only
	 * files no row records, which gc removes.  The store's lock, shared,
	 * from the first file to the commit that records them: a file that
	 * is there already could otherwise be gc's between the two.
	 */
	if (artifact_lock(db, 0, &lock, &err) != 0) {
		cmd_error(err.msg);
		ret = EXIT_DB;
		goto out;
	}
	files = xcalloc(b.n + 1, sizeof *files);
	for (i = 0; i < b.n; i++) {
		unsigned char *data = NULL;

		if (strncmp(b.files[i].path, "artifacts/", 10) != 0)
			continue;
		/*
		 * One at a time, read again: stored under the hash of the
		 * bytes read now, and refused unless that is its name.  One
		 * over ARTIFACT_MAX is not read: artifact_put refuses it by
		 * its size alone.
		 */
		if ((b.files[i].len <= ARTIFACT_MAX &&
		    bundle_file_read(&b.files[i], ARTIFACT_MAX, &data,
		    &err) != 0) || artifact_put(db, data, b.files[i].len,
		    files[nfiles].sha256, &err) != 0 ||
		    (strcmp(files[nfiles].sha256, b.files[i].path + 10) != 0 &&
		    so_error(&err, SO_EIO, "bundle: \"%s\" changed while "
		    "imported", b.files[i].path) != 0)) {
			free(data);
			cmd_error(err.msg);
			ret = EXIT_DB;
			goto out;
		}
		files[nfiles++].size = b.files[i].len;
		free(data);
	}
	ids = xcalloc(info.nruns, sizeof *ids);
	earlier = xcalloc(info.nruns, sizeof *earlier);
	rc = db_run_import(db, info.rows, &o, files, nfiles, ids, earlier,
	    &err);
	if (rc == SO_EPROTO) {
		fprintf(stderr, "seqorch: import: refused: %s\n", err.msg);
		ret = EXIT_FAIL;
		goto out;
	}
	if (rc != 0) {
		fprintf(stderr, "seqorch: import: %s\n", err.msg);
		ret = cmd_exit_code(rc);
		goto out;
	}
	for (i = 0; i < info.nruns; i++) {
		if (earlier[i])
			fprintf(stderr, "seqorch: run %lld of this bundle is "
			    "already here as run %lld: nothing to do\n",
			    (long long)info.runs[i], (long long)ids[i]);
		else
			printf("imported run %lld of %s as run %lld%s\n",
			    (long long)info.runs[i], info.coordinator,
			    (long long)ids[i], is_unsigned ? ", unsigned: its "
			    "origin is not checked" : "");
	}
out:
	free(earlier);
	free(ids);
	free(files);
	artifact_unlock(lock);
	db_close(db);
	bundle_info_free(&info);
	bundle_free(&b);
	return ret;
}

const struct cmd_entry cmd_import_entry = {
	.name = "import",
	.summary = "merge a verified bundle's runs into results.db",
	.usage =
	    "usage: seqorch import BUNDLE --pubkey PUB [--db results.db]\n"
	    "       seqorch import BUNDLE --unsigned [--db results.db]\n"
	    "\n"
	    "Verifies BUNDLE as `seqorch verify` does (a bundle that fails is\n"
	    "refused whole), then adds each of its runs to the database under\n"
	    "new ids, once, with their own rows and artifacts only (never\n"
	    "reference digests, leases, hosts or imports rows), and records where\n"
	    "each came from (table imports: coordinator, database, key\n"
	    "fingerprint), in one transaction: all of its runs or none.\n"
	    "Importing the same bundle again changes nothing.  An\n"
	    "imported run cannot be resumed here (`run --resume` refuses it).\n"
	    "With --unsigned, for a run to look at here, every check but the\n"
	    "signature is made; imports.signed is 0 and every report of the\n"
	    "run says it is unsigned.  A database it cannot open or create (a\n"
	    "directory, one in a directory it cannot write, another program's)\n"
	    "is said before the bundle is verified; none is created for a\n"
	    "bundle refused.\n",
	.notes =
	    "exit: 0 imported (or already there), 1 refused, 2 usage,\n"
	    "      3 database\n",
	.opts = (const struct cmd_opt[]){
		{ "pubkey", 'k', 0, "PUB", "the signer's Ed25519 public key, "
		    "a PEM file (required\nunless --unsigned)", CMD_VALUE_ANY,
		    NULL },
		{ "unsigned", 'U', 0, NULL, "import without checking a "
		    "signature (marked\nso)", CMD_VALUE_ANY, NULL },
		CMD_OPT_DB("FILE"),
		CMD_OPT_END,
	},
	.optcol = 16,
	.min_args = 1, .max_args = 1, .args = "BUNDLE",
	.exec = import_exec,
};
