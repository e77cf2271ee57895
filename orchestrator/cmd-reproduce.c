/*
 * seqorch reproduce NAME: one seed's protocol (repro.c) as the runs it
 * takes, recorded as one reproduction, then the published table beside
 * what was measured (repro-table.c).
 */
#include "cmd.h"
#include "cmd-run.h"
#include "config.h"
#include "db.h"
#include "db-repro.h"
#include "hostsel.h"
#include "remote.h"
#include "repro.h"
#include "strbuf.h"
#include "study.h"
#include "window.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct targets {
	const char *arch;
	struct host **all, **out;
	size_t nall, n;
};

static void
on_target(const char *host, const char *target, void *arg)
{
	struct targets *t = arg;
	char arch[32];
	size_t i, j;

	if (strcmp(study_arch(target, arch, sizeof arch), t->arch) != 0)
		return;
	for (i = 0; i < t->nall; i++) {
		if (strcmp(t->all[i]->name, host) != 0)
			continue;
		for (j = 0; j < t->n && t->out[j] != t->all[i]; j++)
			;
		if (j == t->n)
			t->out[t->n++] = t->all[i];
	}
}

static char *
host_names(struct host **hosts, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, hosts[i]->name);
	}
	return strbuf_detach(&sb);
}

/*
 * The runs of the plan, each recorded as part of reproduction id.  Each run
 * that could not start (its source not fetched, say) is named in missing,
 * since the published table shows only the runs stored.
 */
static int
run_plan(struct db *db, int64_t id, const struct repro_run *runs,
    size_t nruns, struct host **hosts, size_t n, struct run_opts *base,
    const char *command, struct strbuf *missing)
{
	struct targets t = { 0 };
	struct so_err err = { 0 };
	struct run_opts o;
	int64_t run_id;
	char *spec = NULL;
	size_t i;
	int rc = EXIT_OK, r;

	t.all = hosts;
	t.nall = n;
	t.out = xcalloc(n + 1, sizeof *t.out);
	for (i = 0; i < nruns && !cmd_run_stopped(); i++) {
		const struct repro_run *x = &runs[i];
		struct host **on = hosts;
		size_t non = n;

		o = *base;
		if (x->part->arch != NULL) {
			t.arch = x->part->arch;
			t.n = 0;
			if (db_repro_targets(db, id, on_target, &t, &err) != 0) {
				cmd_error(err.msg);
				rc = EXIT_DB;
				break;
			}
			if (t.n == 0) {
				fprintf(stderr, "seqorch: reproduce: %s (%s) not "
				    "run: no host's build targets %s\n",
				    x->study, x->part->label, x->part->arch);
				continue;
			}
			on = t.out;
			non = t.n;
			free(spec);
			o.sel.spec = spec = host_names(on, non);
		}
		o.studies = x->study;
		o.openssl_cap_clear = x->part->cap_clear;
		o.msg_len = (int64_t)x->part->msg_len;
		/*
		 * Every variant is none named (each host runs those of its
		 * architecture), their generated sources fetched too.
		 */
		o.variants = x->part->variants != NULL ||
		    (x->part->first_look_variants != NULL && x->shortened) ?
		    x->variants : NULL;
		o.fetch_generated = 1;
		o.steps = (int64_t)x->steps;
		o.samples = o.max_samples = (int64_t)x->samples;
		run_id = 0;
		r = cmd_run_study(db, x->study, on, non, &o, command, &run_id);
		if (run_id > 0 && db_repro_run(db, id, run_id, x->part->label,
		    &err) != 0) {
			cmd_error(err.msg);
			rc = EXIT_DB;
			break;
		}
		if (run_id == 0 && r != EXIT_OK)
			strbuf_addf(missing, "%s%s (%s)", missing->len ? ", " :
			    "", x->study, x->part->label);
		if (cmd_run_outcome(&rc, r))
			break;
	}
	free(spec);
	free(t.out);
	return rc;
}

static int
reproduce_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct run_opts o = { .db = "results.db",
	    .sel = { "all", NULL, NULL, HOSTSEL_PARALLEL },
	    .max_cv = 0.01, .lease_expiry = LEASE_EXPIRY_DEFAULT };
	const struct repro *r;
	struct repro_run *runs = NULL;
	struct config *cfg = NULL;
	struct host **hosts = NULL;
	struct db *db = NULL;
	struct so_err err = { 0 };
	struct strbuf missing = STRBUF_INIT;
	char *command = NULL;
	int64_t cap = 0, id;
	size_t n = 0, nruns = 0, i;
	int c, done, taken, list = 0, dry = 0, rc = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		if ((taken = hostsel_opt(&o.sel, c, optarg)) != 0) {
			if (taken < 0)
				return EXIT_USAGE;
			continue;
		}
		if (fetch_choice_opt(&o.source, c, optarg))
			continue;
		switch (c) {
		case 'l': list = 1; break;
		case 'N': dry = 1; break;
		case 'd': o.db = optarg; break;
		case 'n':
			if (cmd_count_arg("--steps", optarg,
			    (int64_t)STUDY_MAX_STEPS, &cap) != 0)
				return EXIT_USAGE;
			break;
		}
	}
	if (done >= 0)
		return done;
	if (fetch_choice_check(&o.source, &err) != 0) {
		cmd_error(err.msg);
		return EXIT_USAGE;
	}
	if (list) {
		for (i = 0; repro_table[i].name != NULL; i++)
			printf("%-9s %s\n", repro_table[i].name,
			    repro_table[i].description);
		return EXIT_OK;
	}
	if (optind >= argc) {
		fprintf(stderr, "seqorch: reproduce: a protocol name is "
		    "required (see `seqorch reproduce --list`)\n");
		return EXIT_USAGE;
	}
	if ((r = repro_find(argv[optind])) == NULL) {
		struct strbuf sb = STRBUF_INIT;

		for (i = 0; repro_table[i].name != NULL; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "",
			    repro_table[i].name);
		fprintf(stderr, "seqorch: unknown protocol \"%s\" (valid: %s)\n",
		    argv[optind], sb.buf);
		strbuf_release(&sb);
		return EXIT_USAGE;
	}
	if (dry) {
		repro_print_plan(r, (uint64_t)cap, stdout);
		return EXIT_OK;
	}
	if ((rc = cmd_run_open(&o, &cfg, &hosts, &n, &db)) != EXIT_OK)
		goto out;
	command = cmd_command_line(argc, argv);
	if ((rc = db_repro_begin(db, r->name, cap, command, &id, &err)) != 0) {
		cmd_error(err.msg);
		rc = cmd_exit_code(rc);
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((rc = db_repro_host(db, id, hosts[i]->name,
		    hosts[i]->reference, &err)) != 0) {
			cmd_error(err.msg);
			rc = cmd_exit_code(rc);
			goto out;
		}
	nruns = repro_plan(r, (uint64_t)cap, &runs);
	fprintf(stderr, "seqorch: reproduce %s: reproduction %" PRId64 ", %zu "
	    "run%s on %zu host%s\n", r->name, id, nruns, nruns == 1 ? "" : "s",
	    n, n == 1 ? "" : "s");
	if (cap > 0)
		fprintf(stderr, "seqorch: a first look: every sample at most "
		    "%" PRId64 " steps, not the seed's lengths; its figures are "
		    "indicative only\n", cap);
	rc = run_plan(db, id, runs, nruns, hosts, n, &o, command, &missing);
	if (rc != EXIT_DB && rc != EXIT_INTERRUPTED) {
		int trc;

		fflush(stderr);
		if ((trc = repro_print_table(db, r->name, stdout, &err)) != 0) {
			cmd_error(err.msg);
			rc = cmd_exit_code(trc);
		}
		if (missing.len > 0)
			printf("\nnot run, so not in the table: %s (the "
			    "errors above say why)\n", missing.buf);
	}
out:
	strbuf_release(&missing);
	repro_plan_free(runs, nruns);
	free(o.cache);
	free(command);
	db_close(db);
	free(hosts);
	config_free(cfg);
	return rc;
}

const struct cmd_entry cmd_reproduce_entry = {
	.name = "reproduce",
	.summary = "run one seed's protocol and print its published table",
	.usage =
	    "usage: seqorch reproduce NAME [--hosts all|NAME,...|@GROUP]\n"
	    "                         [--config hosts.toml] [--db results.db]\n"
	    "                         [--steps N] [--dry-run]\n"
	    "                         [--openssl-version V [--sha256 HEX]]\n"
	    "       seqorch reproduce --list\n"
	    "\n"
	    "Runs the protocol of one of the seeds (sha3, sha512, umbrella,\n"
	    "ebash) on the selected hosts, each part a run of its own in the\n"
	    "seed's order with the seed's variants, steps and samples, records\n"
	    "them as one reproduction, and prints the published table: the\n"
	    "seed's figures and ratios, each host's figure beside the seed's\n"
	    "machine it stands for (hosts.toml `reference`), and the seed's\n"
	    "cross-machine ratios beside the hosts'.  `seqorch report\n"
	    "--reproduce NAME` prints it again.\n",
	.opts = (const struct cmd_opt[]){
		{ "list", 'l', 0, NULL,
		    "the protocols, one a line with its description",
		    CMD_VALUE_ANY, NULL },
		HOSTSEL_ROW_HOSTS,
		HOSTSEL_ROW_CONFIG,
		CMD_OPT_DB("FILE"),
		{ "steps", 'n', 0, "N",
		    "a shorter first look: every sample at most N\n"
		    "steps (5000, 5e3, 5k; RandomX in light mode),\n"
		    "said so in the output; the figures are then\n"
		    "indicative only",
		    CMD_VALUE_ANY, NULL },
		{ "dry-run", 'N', 0, NULL,
		    "print each run it would make (study, variants,\n"
		    "steps, samples, order, controls) and stop",
		    CMD_VALUE_ANY, NULL },
		FETCH_ROW_OPENSSL_VERSION,
		FETCH_ROW_SHA256,
		CMD_OPT_END,
	},
	.optcol = 17,
	.notes =
	    "exit: 0 ok, 1 a run failed/partial, 2 usage or config,\n"
	    "      3 database, 130 interrupted (samples so far are kept)\n",
	.min_args = 0,
	.max_args = 1,
	.args = "NAME",
	.exec = reproduce_exec,
};
