/*
 * The agent's options: each value checked as it is read, then the
 * options that only make sense together (docs/protocol.md).
 */
#include "opts.h"
#include "protocol.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* err gets the message; the result for the caller to return. */
static enum opts_result __attribute__((format(printf, 3, 4)))
bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return OPTS_ERROR;
}

void
opts_usage(FILE *f)
{
	fprintf(f,
	    "usage: seqorch-agent --study NAME [--variants a,b] [--steps N]\n"
	    "                     [--samples K] [--first-sample S]\n"
	    "                     [--max-cv X --max-samples M] [--warmup K]\n"
	    "                     [--stored-spread VARIANT:N:MEAN:M2 ...]\n"
	    "                     [--extra-from S:P]\n"
	    "                     [--cpu N|none|auto] [--order rotate|reverse]\n"
	    "                     [--seed HEX] [--build-id ID] [--token HEX]\n"
	    "                     [--out FILE]\n"
	    "                     [--lock FILE --holder TEXT [--no-wait]]\n"
	    "                     [--require-quiet] [--serve]\n"
	    "                     [--openssl-cap-clear NAME[,NAME]]\n"
	    "                     [--msg-len L]\n"
	    "       seqorch-agent --conduct --build ID:SHA256:PATH ...\n"
	    "                     [--selftest-digest HEX]\n"
	    "                     [the options above but --serve;\n"
	    "                     --stored-spread BUILD:VARIANT:N:MEAN:M2]\n"
	    "       seqorch-agent --preflight [--cpu N|none|auto]\n"
	    "       seqorch-agent --list\n"
	    "       seqorch-agent --openssl\n"
	    "Prints JSON lines (protocol %d, docs/protocol.md).\n",
	    SEQORCH_PROTO_VERSION);
}

static enum opts_result
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
    uint64_t *v, char *err, size_t len)
{
	char *end;
	unsigned long long n;

	errno = 0;
	if (*s == '-' || *s == '\0')
		goto fail;
	n = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max)
		goto fail;
	*v = n;
	return OPTS_OK;
fail:
	return bad(err, len, "invalid %s \"%s\": expected an integer from "
	    "%llu to %llu", opt, s, (unsigned long long)min,
	    (unsigned long long)max);
}

/* A coefficient of variation: a fraction above 0, at most 1 (100%). */
static enum opts_result
parse_fraction(const char *opt, const char *s, double *v, char *err,
    size_t len)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(*v > 0 && *v <= 1))
		return bad(err, len, "invalid %s \"%s\": expected a fraction "
		    "above 0 and at most 1 (0.01 is 1%%)", opt, s);
	return OPTS_OK;
}

/* The holder text is shown to other users on one line: keep it printable. */
static enum opts_result
parse_holder(const char *s, char *err, size_t len)
{
	const unsigned char *p;

	if (*s == '\0' || strlen(s) > MAX_HOLDER)
		return bad(err, len, "invalid --holder: expected 1 to %d bytes",
		    MAX_HOLDER);
	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return bad(err, len, "invalid --holder: control "
			    "character at byte %d", (int)((const char *)p - s));
	return OPTS_OK;
}

static enum opts_result
parse_seed(const char *s, struct opts *o, char *err, size_t len)
{
	size_t i;

	o->seed_len = strlen(s) / 2;
	if (strlen(s) % 2 != 0 || o->seed_len > KERNEL_MAX_STATE ||
	    strspn(s, "0123456789abcdefABCDEF") != strlen(s))
		return bad(err, len, "invalid --seed: expected at most %d "
		    "bytes of hex", KERNEL_MAX_STATE);
	o->have_seed = 1;
	for (i = 0; i < o->seed_len; i++) {
		unsigned v;

		sscanf(s + 2 * i, "%2x", &v);
		o->seed[i] = (uint8_t)v;
	}
	return OPTS_OK;
}

/*
 * The next ':'-separated field of *p into buf (size bytes), *p past it
 * and its ':'; -1 when it is empty or does not fit.
 */
static int
next_field(const char **p, char *buf, size_t size)
{
	size_t n = strcspn(*p, ":");

	if (n == 0 || n >= size)
		return -1;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	*p += n + ((*p)[n] == ':');
	return 0;
}

/* A field of decimal digits, from min to max. */
static int
field_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long n;

	if (strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

/*
 * A field that is a finite decimal number (as printf's %g writes it: no
 * sign, no hex, no inf or nan), at least min.
 */
static int
field_double(const char *s, double min, double *v)
{
	char *end;

	if (*s < '0' || *s > '9' ||
	    strspn(s, "0123456789.eE+-") != strlen(s))
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(*v) || *v < min)
		return -1;
	return 0;
}

/*
 * --stored-spread VARIANT:N:MEAN:M2, once per variant: the count, mean
 * ns and sum of squared deviations of the samples the run stored (the
 * coordinator writes them with %.17g, so they come back exactly).  A
 * single sample has no deviation.  A conductor's name the build first,
 * BUILD:VARIANT:N:MEAN:M2 (five fields), once per build and variant.
 */
static enum opts_result
parse_stored(const char *s, struct opts *o, char *err, size_t len)
{
	struct stored_spread *st = &o->stored[o->nstored];
	const char *p = s, *c;
	char num[64];
	size_t i, colons = 0;

	if (o->nstored == MAX_STORED)
		return bad(err, len, "more than %d --stored-spread",
		    MAX_STORED);
	for (c = s; (c = strchr(c, ':')) != NULL; c++)
		colons++;
	st->build[0] = '\0';
	if ((colons == 4 && next_field(&p, st->build, sizeof st->build) !=
	    0) || next_field(&p, st->variant, sizeof st->variant) != 0 ||
	    strspn(st->variant, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
	    strlen(st->variant) ||
	    next_field(&p, num, sizeof num) != 0 ||
	    field_u64(num, 1, MAX_SAMPLES, &st->n) != 0 ||
	    next_field(&p, num, sizeof num) != 0 ||
	    field_double(num, 0, &st->mean) != 0 || !(st->mean > 0) ||
	    next_field(&p, num, sizeof num) != 0 || *p != '\0' ||
	    p[-1] == ':' || field_double(num, 0, &st->m2) != 0 ||
	    (st->n == 1 && st->m2 != 0))
		return bad(err, len, "invalid --stored-spread \"%.200s\": "
		    "expected [BUILD:]VARIANT:N:MEAN:M2 (N from 1 to %d "
		    "samples, their mean ns above 0, their sum of squared "
		    "deviations from it, 0 for one sample)", s, MAX_SAMPLES);
	for (i = 0; i < o->nstored; i++)
		if (strcmp(o->stored[i].build, st->build) == 0 &&
		    strcmp(o->stored[i].variant, st->variant) == 0)
			return bad(err, len, "--stored-spread of variant "
			    "\"%s\"%s%s given twice", st->variant,
			    st->build[0] ? " of build " : "", st->build);
	o->nstored++;
	return OPTS_OK;
}

/* --extra-from S:P: a sample index, then a place in the build's order. */
static enum opts_result
parse_extra_from(const char *s, struct opts *o, char *err, size_t len)
{
	const char *p = s;
	char num[32];

	if (next_field(&p, num, sizeof num) != 0 ||
	    field_u64(num, 0, 2000000000, &o->extra_first) != 0 ||
	    next_field(&p, num, sizeof num) != 0 || *p != '\0' ||
	    p[-1] == ':' ||
	    field_u64(num, 0, 1000000000000ULL, &o->extra_order) != 0)
		return bad(err, len, "invalid --extra-from \"%.200s\": "
		    "expected INDEX:ORDER (an index from 0 to 2000000000, a "
		    "place from 0 to 1000000000000)", s);
	o->extra_from = 1;
	return OPTS_OK;
}

/* One option c with its value optarg into o. */
static enum opts_result
parse_one(int c, struct opts *o, char *err, size_t len)
{
	uint64_t v = 0;
	enum opts_result rc = OPTS_OK;

	switch (c) {
	case 's': o->study = optarg; break;
	case 'v': o->variants = optarg; break;
	case 'n':
		rc = parse_u64("--steps", optarg, 1, 1000000000000ULL,
		    &o->steps, err, len);
		break;
	case 'k':
		rc = parse_u64("--samples", optarg, 0, MAX_SAMPLES,
		    &o->samples, err, len);
		break;
	case 'F':
		rc = parse_u64("--first-sample", optarg, 0, 1000000000,
		    &o->first_sample, err, len);
		break;
	case 'x':
		rc = parse_fraction("--max-cv", optarg, &o->max_cv, err, len);
		break;
	case 'w':
		rc = parse_u64("--warmup", optarg, 0, MAX_SAMPLES,
		    &o->warmup, err, len);
		break;
	case 'm':
		rc = parse_u64("--max-samples", optarg, 1, MAX_SAMPLES,
		    &o->max_samples, err, len);
		break;
	case 'L': o->lock = optarg; break;
	case 'H':
		if ((rc = parse_holder(optarg, err, len)) == OPTS_OK)
			o->holder = optarg;
		break;
	case 'W': o->no_wait = 1; break;
	case 'c':
		if (strcmp(optarg, "none") == 0)
			o->cpu = -1;
		else if (strcmp(optarg, "auto") == 0)
			o->cpu = CPU_AUTO;
		else if ((rc = parse_u64("--cpu", optarg, 0, 65535, &v, err,
		    len)) == OPTS_OK)
			o->cpu = (int)v;
		break;
	case 'o':
		if (strcmp(optarg, "rotate") == 0)
			o->reverse = 0;
		else if (strcmp(optarg, "reverse") == 0)
			o->reverse = 1;
		else
			rc = bad(err, len, "invalid --order \"%s\": expected "
			    "rotate or reverse", optarg);
		break;
	case 'S': rc = parse_seed(optarg, o, err, len); break;
	case 'b': o->build_id = optarg; break;
	case 't':
		if (*optarg == '\0' || strlen(optarg) > MAX_TOKEN ||
		    strspn(optarg, "0123456789abcdef") != strlen(optarg))
			rc = bad(err, len, "invalid --token: expected 1 to %d "
			    "lowercase hex digits", MAX_TOKEN);
		else
			o->token = optarg;
		break;
	case 'O': o->out = optarg; break;
	case 'l': o->list = 1; break;
	case 'Y': o->openssl = 1; break;
	case 'P': o->preflight = 1; break;
	case 'Q': o->require_quiet = 1; break;
	case 'V': o->serve = 1; break;
	case 'C': o->conduct = 1; break;
	case 'B':
		if (o->nbuilds == MAX_BUILDS)
			rc = bad(err, len, "more than %d --build", MAX_BUILDS);
		else
			o->builds[o->nbuilds++] = optarg;
		break;
	case 'D':
		if (*optarg == '\0' || strlen(optarg) > 2 * KERNEL_MAX_STATE ||
		    strspn(optarg, "0123456789abcdef") != strlen(optarg))
			rc = bad(err, len, "invalid --selftest-digest: expected "
			    "1 to %d lowercase hex digits",
			    2 * KERNEL_MAX_STATE);
		else
			o->selftest_digest = optarg;
		break;
	case 'X':
		if (*optarg == '\0' || strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789_,") != strlen(optarg))
			rc = bad(err, len, "invalid --openssl-cap-clear \"%s\": "
			    "expected capability names, comma separated",
			    optarg);
		else
			o->openssl_cap_clear = optarg;
		break;
	case 'R': rc = parse_stored(optarg, o, err, len); break;
	case 'E': rc = parse_extra_from(optarg, o, err, len); break;
	case 'M':
		rc = parse_u64("--msg-len", optarg, 1, KERNEL_MAX_MSG,
		    &o->msg_len, err, len);
		break;
	case 'h': rc = OPTS_HELP; break;
	default: rc = OPTS_USAGE; break;
	}
	return rc;
}

/* Options that only make sense together must come together. */
static enum opts_result
check_together(const struct opts *o, char *err, size_t len)
{
	if (!o->list && !o->openssl && !o->preflight && o->study == NULL)
		return bad(err, len, "--study is required");
	if ((o->max_cv > 0) != (o->max_samples > 0))
		return bad(err, len, "--max-cv and --max-samples go together");
	if (o->max_samples > 0 && o->max_samples < o->samples)
		return bad(err, len, "--max-samples %llu is below --samples "
		    "%llu", (unsigned long long)o->max_samples,
		    (unsigned long long)o->samples);
	if ((o->nstored > 0 || o->extra_from) && o->max_cv == 0)
		return bad(err, len, "--stored-spread and --extra-from need "
		    "--max-cv");
	/* A conductor's extra rounds alone start its agents so. */
	if (o->samples == 0 && !o->extra_from && !o->serve)
		return bad(err, len, "--samples 0 needs --extra-from (extra "
		    "rounds alone)");
	if (o->extra_from && o->extra_first < o->first_sample + o->samples)
		return bad(err, len, "--extra-from %llu is below --first-sample "
		    "+ --samples (%llu): extra rounds follow the planned ones",
		    (unsigned long long)o->extra_first,
		    (unsigned long long)(o->first_sample + o->samples));
	if (o->serve && o->conduct)
		return bad(err, len, "--serve and --conduct exclude each "
		    "other");
	if ((o->nbuilds > 0) != o->conduct)
		return bad(err, len, "--conduct and --build go together");
	if (o->selftest_digest != NULL && !o->conduct)
		return bad(err, len, "--selftest-digest needs --conduct");
	if (o->serve && o->max_cv > 0)
		return bad(err, len, "--serve takes no --max-cv: its conductor "
		    "decides the extra rounds");
	for (size_t i = 0; i < o->nstored; i++)
		if ((o->stored[i].build[0] != '\0') != o->conduct)
			return bad(err, len, "--stored-spread \"%s%s%s\": %s",
			    o->stored[i].build, o->stored[i].build[0] ? ":" :
			    "", o->stored[i].variant, o->conduct ? "a "
			    "conductor's name the build, BUILD:VARIANT:N:MEAN:M2"
			    : "only a conductor's name a build");
	if (o->serve && o->lock != NULL)
		return bad(err, len, "--serve takes no --lock: its conductor "
		    "does");
	if ((o->lock == NULL) != (o->holder == NULL))
		return bad(err, len, "--lock and --holder go together");
	if (o->no_wait && o->lock == NULL)
		return bad(err, len, "--no-wait needs --lock");
	return OPTS_OK;
}

enum opts_result
opts_parse(int argc, char **argv, struct opts *o, char *err, size_t len)
{
	static const struct option longopts[] = {
		{ "study", required_argument, NULL, 's' },
		{ "variants", required_argument, NULL, 'v' },
		{ "steps", required_argument, NULL, 'n' },
		{ "samples", required_argument, NULL, 'k' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "order", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'S' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "token", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'O' },
		{ "first-sample", required_argument, NULL, 'F' },
		{ "max-cv", required_argument, NULL, 'x' },
		{ "max-samples", required_argument, NULL, 'm' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "lock", required_argument, NULL, 'L' },
		{ "holder", required_argument, NULL, 'H' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "list", no_argument, NULL, 'l' },
		{ "openssl", no_argument, NULL, 'Y' },
		{ "preflight", no_argument, NULL, 'P' },
		{ "require-quiet", no_argument, NULL, 'Q' },
		{ "serve", no_argument, NULL, 'V' },
		{ "conduct", no_argument, NULL, 'C' },
		{ "build", required_argument, NULL, 'B' },
		{ "selftest-digest", required_argument, NULL, 'D' },
		{ "openssl-cap-clear", required_argument, NULL, 'X' },
		{ "msg-len", required_argument, NULL, 'M' },
		{ "stored-spread", required_argument, NULL, 'R' },
		{ "extra-from", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum opts_result rc;
	int c;

	memset(o, 0, sizeof *o);
	o->samples = 3;
	o->cpu = -1;
	o->build_id = "";
	o->token = "";
	if (len > 0)
		err[0] = '\0';
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if ((rc = parse_one(c, o, err, len)) != OPTS_OK)
			return rc;
	if (optind != argc)
		return bad(err, len, "unexpected argument \"%s\"",
		    argv[optind]);
	return check_together(o, err, len);
}
