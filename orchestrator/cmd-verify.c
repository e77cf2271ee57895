/*
 * seqorch verify: check a signed result bundle without any database: the
 * signature, every file's hash, and every sample's digest recomputed with
 * its study's independent reference.  Nothing is rebuilt.
 */
#include "bundle.h"
#include "cmd.h"

#include <getopt.h>
#include <stdio.h>

static int
verify_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *pubkey = NULL;
	struct bundle b = { 0 };
	struct bundle_info info;
	struct so_err err = { 0 };
	size_t i;
	int c, done, rc;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'k': pubkey = optarg; break;
		}
	}
	if (done >= 0)
		return done;
	if ((rc = cmd_load_bundle(argv, pubkey, 0, &b)) != EXIT_OK)
		return rc;
	rc = bundle_verify(&b, pubkey, &info, stderr, &err);
	bundle_free(&b);
	if (rc != 0) {
		fprintf(stderr, "seqorch: verify: FAILED: %s\n", err.msg);
		return EXIT_FAIL;
	}
	printf("bundle %s: ok\n  signed by key %s\n  from %s, database "
	    "\"%s\"\n  run%s", argv[optind], info.key_fingerprint,
	    info.coordinator, info.db_path ? info.db_path : "?",
	    info.nruns > 1 ? "s" : "");
	for (i = 0; i < info.nruns; i++)
		printf("%s %lld", i > 0 ? "," : "", (long long)info.runs[i]);
	printf("; %llu sample digests recomputed, all agree\n",
	    (unsigned long long)info.samples_checked);
	bundle_info_free(&info);
	return EXIT_OK;
}

const struct cmd_entry cmd_verify_entry = {
	.name = "verify",
	.summary = "check a signed result bundle",
	.usage =
	    "usage: seqorch verify BUNDLE --pubkey PUB\n"
	    "\n"
	    "Checks a bundle written by `seqorch export --bundle` (a directory or\n"
	    "a .tar file, the directory's `tar -cf b.tar -C DIR .` too): the\n"
	    "Ed25519 signature of its manifest with the public key in PEM file\n"
	    "PUB, its format version, the SHA-256 and size of every file, that no\n"
	    "file is unlisted, that rows.json holds only the listed runs' own\n"
	    "rows, of the tables, columns, types and values `seqorch import`\n"
	    "writes (schema.sql's CHECKs and UNIQUE keys: no sample cell's index\n"
	    "twice, ...), and every sample's digest, recomputed here with its\n"
	    "study's independent reference (nothing is rebuilt; a sample's steps\n"
	    "are its run's, at most its study's limit of `seqorch studies`; a\n"
	    "long check shows its progress).\n"
	    "The first mismatch is named.  docs/provenance.md.\n",
	.notes =
	    "exit: 0 verified, 1 any mismatch or a bad bundle, 2 usage\n",
	.opts = (const struct cmd_opt[]){
		{ "pubkey", 'k', 0, "PUB", "the signer's Ed25519 public key, "
		    "a PEM file (required)", CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 16,
	.min_args = 1, .max_args = 1, .args = "BUNDLE",
	.exec = verify_exec,
};
