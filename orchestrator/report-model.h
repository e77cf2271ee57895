/*
 * The report's model: one run loaded from results.db (report-load.c, from
 * the queries of db-report.c, the only part that speaks SQL), its
 * statistics (report-stats.c), and the renderings that read it
 * (report-text.c, report-json.c, report-md.c, report-csv.c,
 * report-html.c, export.c).  Internal to the report.
 *
 * Every string and array in a struct rrun is owned by it and freed by
 * report_free_run; const pointers point into the same rrun.
 */
#ifndef SEQORCH_REPORT_MODEL_H
#define SEQORCH_REPORT_MODEL_H

#include "figures.h"
#include "report.h"
#include "stats.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A sample's clock moved when its estimates before and after differ by
 * more than this percentage of the larger: its cycles are less certain.
 */
#define CLOCK_MOVED_PCT 10
/* How a row's final digests compare with the rest of the run. */
enum {
	DIGEST_NONE,		/* no valid sample to compare */
	DIGEST_OK,		/* one digest per steps value, run-wide */
	DIGEST_MISMATCH,
};

struct rbuild {
	int64_t		 id;
	char		*host;
	char		*compiler;
	char		*compiler_version;
	char		*target;
	char		*cflags;
	char		*native;
	char		*status;
	char		*source_sha256;
	char		*binary_sha256;
	char		*openssl;
	char		*targeting;	/* default, native; NULL: not targeted */
	/*
	 * A failed build built again later in the run (a resume's: same
	 * host, compiler, cflags and targeting): that build's id, else 0.
	 * Its variants are not listed as not run, nor is it a twin in labels.
	 */
	int64_t		 retried_as;
};

/* Where a sample set's clock comes from. */
enum {
	CLOCK_NONE,		/* no estimate at all */
	CLOCK_SAMPLES,		/* the samples' own, before and after each */
	CLOCK_FACTS,		/* the host's, once before sampling */
	CLOCK_COUNTERS,		/* the samples' counted cycles / their ns */
};

/* One (variant, host, build) of the run: a row of the table. */
struct rrow {
	char		*variant;
	char		*host;
	int64_t		 build_id;
	const char	*compiler;	/* the build's, NULL if it has no row */
	char		*label;		/* compiler, made unique per host */
	/*
	 * Why the rate is not the variant's code's: built by another
	 * compiler than its `compiler` file names (arm-scalar by gcc, not
	 * clang), or NULL.
	 */
	char		*note;
	int64_t		 n;		/* valid samples */
	int64_t		 invalid;	/* samples with valid = 0 */
	double		 median, min, max;	/* over valid samples */
	struct stats_desc desc;		/* of rates, over valid samples */
	double		*rates;		/* the n valid rates, ascending */
	int64_t		*ns;		/* their ns, REPORT_LOAD_NS only */
	uint32_t	*slot;		/* loading only: positions' slots */
	size_t		 cap;		/* loading only: room in the arrays */
	int		 digest;
	/*
	 * One clock for the set (MHz): the median of its valid samples'
	 * estimates (each the mean of before and after), else the host's
	 * facts; cycles per step is clock / median rate, so the two always
	 * agree.  0 = unknown.
	 */
	double		 clock_mhz;
	int		 clock_source;	/* CLOCK_* */
	int64_t		 clock_n;	/* estimates it is the median of */
	int64_t		 moved;		/* valid samples whose clock moved */
	/*
	 * Counted cycles (docs/measurement.md): valid samples with them,
	 * medians of cycles per step and of instructions per cycle, and
	 * their source (pmu, test-seam).  With counters, cycles per step are
	 * theirs and the clock is what they imply: clock = cycles x rate.
	 */
	int64_t		 counted;
	double		 pcycles, ipc;
	char		*csrc;
	double		*pcs, *ipcs;	/* loading only: per counted sample */
	/* What a ratio must share: one of each over the valid samples. */
	int64_t		 steps;
	char		*seed;
	char		*final;		/* the final digest */
	int		 mixed;		/* several (steps, seed, digest) */
	/* Against the best row of its host (ratio 1 for the best). */
	struct stats_ratio vs_best;
};

struct rhost {
	char		*name;
	char		*status;	/* NULL: samples but no run_hosts row */
	char		*error;
	int		 has_pin_cpu;
	int64_t		 pin_cpu;
	int		 pinned;	/* 1, 0, or -1 when not recorded */
	char		*pin_error;
	char		*governor;
	char		*openssl;
	char		*cpu_model, *cpu_signature, *arch, *os, *kernel;	/* facts */
	int64_t		 cores;		/* 0 = unknown */
	double		 calib_mhz;	/* facts, before sampling; 0 = unknown */
	char		*cpu_choice;	/* cpu = "auto": why this cpu */
	char		*counters;	/* pmu, test-seam, none; NULL: older */
	char		*counters_error;
	int64_t		 windows, noisy;	/* windows; noisy preflights */
	/* A host measured on this machine at the same time, or NULL. */
	char		*shared_with;
	/* Windows whose clock or load drifted from begin to end. */
	int64_t		 drifted;
	/* The clock of all its valid samples, as for a row. */
	double		 clock_mhz;
	int		 clock_source;
	int64_t		 clock_n;	/* samples the clock is the median of */
	const struct rrow *best;	/* fastest valid row, NULL if none */
};

/*
 * A ratio of two rows' median rates (a / b), or why it was refused: the
 * rows do not share study, steps, seed and final digest.
 */
struct rratio {
	const struct rrow *a, *b;
	struct stats_ratio s;
	char		*refused;	/* NULL when computed */
};

/*
 * Position bias: each valid rate divided by its row's mean, pooled by
 * position in the alternating order; each position against all others.
 */
struct rposition {
	int64_t		 position;
	size_t		 n;
	/*
	 * This position / the others: the ratio and its bootstrap interval;
	 * the verdict is the family's, by p_holm.
	 */
	struct stats_ratio s;
	double		 p;		/* rank test against the others */
	double		 p_holm;	/* p, Holm-adjusted over the positions */
};

/*
 * Two builds a and b (b the older) of a host, for one variant: the
 * paired ratio of a's rates to b's, over the samples of the same index
 * (side by side in the host's alternating order), as report-load.c
 * loads them; baseline: b is the host's baseline build (its first
 * compiler, at the default targeting).
 */
struct rpaired {
	char		*host, *variant;
	int64_t		 a_id, b_id;
	char		*a_label, *b_label;	/* "clang", "gcc, native" */
	int		 baseline;
	size_t		 n;			/* pairs */
	struct stats_ratio s;
};

/*
 * Samples of build "later" (host, variant) left out of the pairs with
 * build "earlier": n of them, whose sample of the same index in earlier
 * was taken in an earlier window (another launch: a resume, --max-cv's
 * builds one after the other), not side by side.
 */
struct runpaired {
	char		*host, *variant;
	char		*later, *earlier;	/* labels, as rpaired's */
	size_t		 n;
};

/*
 * For runs whose builds state their targeting (kernels/<study>/
 * targetings): a build's rates for one variant, from the summary view.
 */
struct rrate {
	char		*host, *compiler, *targeting, *variant;
	int64_t		 build_id, n;
	double		 median, min, max;
};

/*
 * The native build's median over the default build's, per host, compiler
 * and variant; native is 1 when its min-max range lies above default's
 * (faster in every sample), -1 below, 0 when they overlap (noise).
 */
struct rtargeting {
	char		*host, *compiler, *variant;
	double		 ratio;
	double		 native_min, native_max, default_min, default_max;
	int		 native;
};

/*
 * The phases of one host, build and variant: ns[i] is phase
 * rrun.phase_names[i] summed over the valid samples that measured phases
 * (those with "phase_other", which the agent adds to any phase: the
 * phases add up to the samples' ns, total).
 */
struct rphases {
	char		*host, *targeting, *variant;
	int64_t		 build_id, n;
	double		*ns;
	double		 total;
};

/* Run-wide digest agreement for one steps value. */
struct rdigest {
	int64_t		 steps;
	int64_t		 n;		/* valid samples */
	int64_t		 distinct;	/* distinct final digests among them */
	char		*digest;	/* the smallest of them */
};

struct rinvalid {
	char		*host;
	char		*variant;
	int64_t		 build_id;
	char		*label;
	int64_t		 index;
	char		*reason;
};

/* A variant that did not run (table `variants`, status other than ok). */
struct rvariant {
	char		*host;
	char		*variant;
	int64_t		 build_id;
	char		*label;
	char		*status;
	char		*reason;
};

/*
 * A file of the upstream source a build's variants were generated from,
 * as the build recorded it (builds.extra: NAME.version,
 * NAME.tarball_sha256, NAME.file.PATH, kernels/sha3/generate.pl's): the
 * release tarball, then each file the generator read.
 */
struct rsource {
	int64_t		 build_id;
	char		*name;		/* the artifact: "openssl" */
	char		*version;
	char		*file;		/* "release tarball", or its path */
	char		*sha256;
};

struct revent {
	char		*host;
	char		*at;
	char		*level;
	char		*message;
};

struct rrun {
	int64_t		 id;
	char		*study;
	char		*status;
	char		*started_at;
	char		*finished_at;
	char		*command;
	char		*seed;
	char		*openssl_cap;	/* --openssl-cap of the run, or NULL */
	/*
	 * An imported run: the coordinator and run id of its bundle, and
	 * whether a signature was checked (import --unsigned: not).
	 */
	char		*imported_from;	/* NULL: measured here */
	int64_t		 origin_run;
	int		 imported_signed;
	int64_t		 steps;
	int64_t		 samples;
	/*
	 * --msg-len L: each step hashed an L-byte message (the previous
	 * digest, then zeros); 0: the study's own chain, the digest alone.
	 */
	int64_t		 msg_len;
	int		 exploratory;
	long		 gone_pid;	/* running, its coordinator here gone */
	int		 several_builds;	/* some host has > 1 build */
	int		 any_calib;
	int		 any_counted;	/* some row has counted cycles */
	int64_t		 moved;		/* valid samples whose clock moved */
	int64_t		 clocked;	/* valid samples with both estimates */

	struct rhost	*hosts;
	size_t		 nhosts;
	struct rbuild	*builds;
	size_t		 nbuilds;
	struct rrow	*rows;
	size_t		 nrows;
	struct rdigest	*digests;
	size_t		 ndigests;
	struct rinvalid	*invalid;
	size_t		 ninvalid;
	struct rvariant	*variants;
	size_t		 nvariants;
	struct revent	*events;
	size_t		 nevents;
	struct rsource	*sources;
	size_t		 nsources;

	const struct rhost **ranked;	/* hosts with a best row, fastest first */
	size_t		 nranked;
	/* Every pair of ranked hosts, faster first, as in ranked order. */
	struct rratio	*ratios;
	size_t		 nratios;
	struct rposition *positions;
	size_t		 npositions;
	/* Loading only: the position of each slot, in order of discovery. */
	int64_t		*slot_pos;
	size_t		 nslots;
	/*
	 * Loading only: each host's clock, the median of its valid samples'
	 * estimates (each a row's: the mean of before and after, or what
	 * counted cycles imply), as the rows are loaded.
	 */
	struct rclock {
		const char	*host;		/* a row's */
		double		 mhz;
		int64_t		 n;
	}		*clocks;
	size_t		 nclocks;
	int		 position_bias;	/* some position decided */
	struct rpaired	*paired;	/* between builds of a host */
	size_t		 npaired;
	struct runpaired *unpaired;	/* left out of them */
	size_t		 nunpaired;
	struct rrate	*rates;		/* targeted builds' rates */
	size_t		 nrates;
	struct rtargeting *targetings;	/* native / default */
	size_t		 ntargetings;
	/*
	 * The phase names of the run's sample_metrics without "phase_"
	 * ("proggen", ..., "other"), in the order the agent recorded them,
	 * "other" last; and the phases of each (host, build, variant).
	 */
	char		**phase_names;
	size_t		 nphase_names;
	struct rphases	*phases;
	size_t		 nphases;
	/* Why some phase shares do not compare across hosts, or NULL
	 * (static). */
	const char	*phase_note;
	/* --reference: the published figure for this study, or why not. */
	int		 has_ref;
	struct figure ref;
	char		*ref_note;
	/* A row whose cv is above this is unstable (--max-cv). */
	double		 max_cv;
};

/*
 * Load run id (its header, hosts, builds, rows with their valid rates,
 * digests, invalid samples, variants and events) into r and compute its
 * statistics; with REPORT_LOAD_NS in flags, each row's ns too (a million
 * samples are 8 MB that only the summary export reads).  0, or SO_EDB /
 * SO_ENOTFOUND with err filled and r empty.
 */
#define REPORT_LOAD_NS	0x1
int report_load_run(sqlite3 *db, int64_t id, unsigned flags, struct rrun *r,
    struct so_err *err);
void report_free_run(struct rrun *r);
/* The first run report_select picks, in *id; its codes. */
int report_select_first(sqlite3 *db, const struct report_opts *o,
    int64_t *id, struct so_err *err);
/*
 * Run id, selected as report_select does (its messages name db_path and
 * the latest ids when there is no such run), then loaded into r.
 */
int report_load_one(sqlite3 *db, int64_t id, const char *db_path,
    unsigned flags, struct rrun *r, struct so_err *err);

/*
 * The rows measured against their host's best, by ranked host (the best
 * row itself only with with_best), in *n; the caller frees the array.
 */
const struct rrow **report_vs_best(const struct rrun *r, int with_best,
    size_t *n);

/* Computed once the run is loaded: rows' statistics, ratios, bias. */
void report_stats(struct rrun *r);

/*
 * Why rows a (of run ra) and b (of rb) may not be compared: a new string
 * (caller frees) when they differ in study, steps, seed or final digest,
 * or one has no valid samples or mixes several; NULL when comparable.
 */
char *report_incomparable(const struct rrun *ra, const struct rrow *a,
    const struct rrun *rb, const struct rrow *b);
/*
 * The bootstrap draws of one pass's ratios, kept by the sizes they were
 * made for (stats_draws), the last REPORT_DRAWS_KEPT of them: cells of a
 * run mostly hold its samples per variant, so most ratios share a few.
 * Zeroed to start; report_draws_free releases them.
 */
#define REPORT_DRAWS_KEPT 8
struct report_draws {
	struct stats_draws	 d[REPORT_DRAWS_KEPT];
	size_t			 n, next;
};
void report_draws_free(struct report_draws *c);
/*
 * a / b with its interval, drawn from c, or refused (out->refused, freed
 * with r).
 */
void report_ratio(struct report_draws *c, const struct rrun *ra,
    const struct rrow *a, const struct rrun *rb, const struct rrow *b,
    struct rratio *out);

const struct rbuild *report_find_build(const struct rrun *r,
    int64_t build_id);

/* ns per step with four significant digits; "-" if rate is not > 0. */
void report_format_ns(double rate, char *buf, size_t len);

/*
 * "2100 MHz (samples, median of 3)", "3700 MHz (host facts)", "-"; n < 0
 * leaves the count out.  Caller frees.
 */
char *report_clock_str(double mhz, int source, int64_t n);
/* "[1.640, 1.740]", or "[no interval: n < 2]".  Caller frees. */
char *report_interval_str(const struct stats_ratio *s);
/* The verdict in words; static. */
const char *report_verdict_phrase(const struct stats_ratio *s);

/*
 * Why an unpaired ratio whose interval leaves out 1 has no verdict ("the
 * t-test's p = 0.061 is over 5%"), or NULL when it has one or the
 * interval says why.  Caller frees.
 */
char *report_withheld_why(const struct stats_ratio *s);
/*
 * The ratios of a section withheld so: zero it, add each ratio; the
 * note says why they have no verdict, or is NULL for none.  Caller frees
 * the note.
 */
struct report_withheld {
	size_t	n, against;	/* against: the t-test the other way */
	double	p;		/* the least p of those over the level */
};
void report_withheld_add(struct report_withheld *f,
    const struct stats_ratio *s);
char *report_withheld_note(const struct report_withheld *f);
/* The note of r's ratios between hosts, of its variants against the best. */
char *report_ratios_withheld_note(const struct rrun *r);
char *report_vs_best_withheld_note(const struct rrun *r);

/*
 * {"ratio", "lo", "hi", "level_pct", "verdict", "verdict_text"}, NaN as
 * null.  Caller owns the object.
 */
struct cJSON;
struct cJSON *report_json_ratio(const struct stats_ratio *s);

/* One run as text (report-text.c): tables, then its reference. */
void report_text_run(const struct rrun *r, FILE *out);
void report_text_reference(const struct rrun *r, FILE *out);

/*
 * One run as a JSON object (report-json.c; caller owns it).  And the
 * helpers every JSON rendering uses: a string or null (s NULL), a number
 * or null (!known).
 */
struct cJSON *report_json_run(const struct rrun *r);
void report_json_str(struct cJSON *o, const char *key, const char *s);
void report_json_num(struct cJSON *o, const char *key, double v, int known);
/*
 * The JSON objects the report and export (summary.json) share, each a new
 * object or array the caller owns: the run's header members (added to
 * o); its digests per steps value; a host's facts and clock; every build
 * with its flags and hashes; a cell's statistics; the ratios between
 * hosts.  docs/report.md's "The JSON schema" lists their members.
 */
void report_json_header(struct cJSON *o, const struct rrun *r);
struct cJSON *report_json_digests(const struct rrun *r);
struct cJSON *report_json_host(const struct rhost *h);
struct cJSON *report_json_builds(const struct rrun *r);
struct cJSON *report_json_cell(const struct rrow *w);
struct cJSON *report_json_ratios(const struct rrun *r);
/*
 * What is said of host h's best (ranked), added to its object o: doubts,
 * control and runner_up, as the best table's notes say them.
 */
void report_json_best_notes(struct cJSON *o, const struct rrun *r,
    const struct rhost *h);
/*
 * "position_bias" added to o: whether some position in the alternating
 * order shifts results, null when there were not two positions to compare.
 */
void report_json_position_bias(struct cJSON *o, const struct rrun *r);

/* The other renderings: all of runs, to out. */
void report_markdown(const struct rrun *runs, size_t n, FILE *out);
void report_html(const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out);
/*
 * The shortest decimal that reads back as v ("383.02561", not %.17g's
 * "383.02560999999997"): no digit the double does not hold, and no value
 * changed; in plain notation from 1e-20 to 1e21 (never "5e+06"), with
 * an exponent beyond.  Into buf, len >= 48.
 */
void report_shortest(double v, char *buf, size_t len);
/* CSV streams the samples from db.  0 or SO_EDB. */
int report_csv(sqlite3 *db, const struct rrun *runs, size_t n, FILE *out,
    struct so_err *err);
/*
 * CSV with one row per cell (--per cell): its statistics with units in
 * the column names, each number to the precision its interval supports
 * (docs/report.md).
 */
void report_csv_cells(const struct rrun *runs, size_t n, FILE *out);

/*
 * The local best of host h against r's published reference: a new
 * sentence (caller frees), e.g. "genoa avx512-fused 4.453M hashes/s is
 * 1.10x seed:genoa (4.056M, ...)".
 */
char *report_reference_line(const struct rrun *r, const struct rhost *h);
/* That line for each ranked host, in *n lines (caller frees each and all). */
char **report_reference_lines(const struct rrun *r, size_t *n);

/*
 * Cycles per step of a row: its counted cycles, else its one clock / its
 * median rate; 0 when unknown.  And where they come from: the counters'
 * source (pmu, test-seam), "calib", or NULL.
 */
double report_row_cycles(const struct rrow *w);
const char *report_row_cycles_source(const struct rrow *w);

/*
 * Is row w unstable (cv above r->max_cv, n >= 2)?  And what it says,
 * "unstable: c-wrapped on "local" (cc): cv 9.49% is above --max-cv 1%,
 * the result may be unstable" (caller frees); the advice follows them.
 */
#define REPORT_UNSTABLE_ADVICE "what to do about unstable cells: take more " \
	"samples (run --samples K), let the run add samples while the cv is " \
	"above --max-cv (--max-samples M), or measure only on quiet hosts " \
	"(--require-quiet)"
int report_row_unstable(const struct rrun *r, const struct rrow *w);
char *report_unstable_text(const struct rrun *r, const struct rrow *w);

/*
 * What makes host h's best figure, and every ratio of it, doubtful, said
 * where the figure is printed and not only among the warnings: "unstable
 * (cv 13.68% > --max-cv 1%), clock moved (over 10% in 1 of 3 samples),
 * not pinned (cpu 1), noisy (1 of 1 windows)"; NULL when nothing does.
 * Caller frees.
 */
char *report_best_doubts(const struct rrun *r, const struct rhost *h);
/*
 * The host of ratio x whose best figure has doubts ("slow"), "both", or
 * NULL when neither has.  Caller frees.
 */
char *report_ratio_doubted(const struct rrun *r, const struct rratio *x);
/*
 * Is variant the study's control (sha3's openssl-evp, the host's
 * libcrypto through EVP), the variant the others are measured against?
 */
int report_is_control(const struct rrun *r, const char *variant);
/*
 * The host of ratio x whose best row is the study's control, "both", or
 * NULL when neither is: the ratio then sets the control against a
 * variant, or compares the control on each host.  Caller frees.
 */
char *report_ratio_control(const struct rrun *r, const struct rratio *x);
/*
 * The row of host h closest to its best that the interval cannot tell
 * from it (vs_best undecided), with in *ties how many such rows h has;
 * NULL (and 0) when every other row is slower.  Then noise chose the
 * best among them, and its median leans high (docs/report.md).
 */
const struct rrow *report_best_runner_up(const struct rrun *r,
    const struct rhost *h, size_t *ties);
/*
 * What is said of each ranked host's best under the best table, in the
 * order every format prints it: its doubts, the study's control as its
 * best, a row it cannot be told from (named with its compiler when
 * labels is set).  One wording for text, Markdown and HTML: fn(arg, i,
 * host, text) is called for the i-th note from 0; text is freed after it
 * returns.  Returns how many there were.
 */
size_t report_best_notes(const struct rrun *r, int labels,
    void (*fn)(void *arg, size_t i, const char *host, const char *text),
    void *arg);
/*
 * Does host h have valid samples, all in rows whose digest disagrees
 * with the run's?  It then has no best: "no valid samples whose digest
 * agrees with the run's", not "no valid samples".
 */
int report_host_mismatched(const struct rrun *r, const struct rhost *h);
/* The ranked host whose best row is w, or NULL. */
const struct rhost *report_best_host(const struct rrun *r,
    const struct rrow *w);

/*
 * The line for the variant that did not run at r->variants[*i] and those
 * after it with the same host, build, status and reason: 'variants a, b
 * on "local" (cc) skipped: why'.  *i moves past them; caller frees.
 */
char *report_not_run(const struct rrun *r, size_t *i);

/* "samples (median of N)", "host facts", "none": a clock's source. */
const char *report_clock_source(int source);

#endif
