/*
 * The agent protocol (docs/protocol.md): JSON lines, of the version and
 * with the names that kernels/protocol.h gives the agent and this reader
 * alike.  A reader cuts a byte stream into bounded lines; proto_parse
 * validates one line strictly (known fields only, exact types, bounded
 * strings, lowercase hex digests) so nothing malformed is ever stored as
 * valid.
 */
#ifndef SEQORCH_PROTO_H
#define SEQORCH_PROTO_H

#include "kernel.h"
#include "protocol.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_MAX_LINE 65536	/* longer agent lines are an error */

enum rec_type {
	REC_HELLO, REC_FACTS, REC_VARIANT, REC_SELFTEST, REC_SAMPLE,
	REC_WINDOW, REC_WAIT, REC_DONE, REC_ERROR, REC_PREFLIGHT, REC_BUILD,
};

/*
 * A validated record.  json is owned by the record; every string pointer,
 * and state, points into it, so they live until proto_record_free.
 * reason is the variant's status reason or, for a sample, why it was taken
 * beyond the planned ones (NULL for planned samples).  state is the window
 * record's host-state object, already validated field by field.
 * A sample's cycles and instructions are set when counted is 1; then
 * cycles_source is "pmu" or "test-seam", otherwise "calibration".  A
 * preflight record's verdict is "quiet" or "noisy".
 */
struct record {
	enum rec_type type;
	cJSON *json;
	const char *study, *variant, *status, *reason, *digest, *seed;
	const char *build_id, *token, *message;
	const char *phase, *holder;
	const char *cycles_source, *verdict;
	const cJSON *state;
	const char *warning;	/* variant: the kernel's warning, or NULL */
	/* sample: its named metrics (kernel.h), names into json */
	size_t nmetrics;
	const char *metric_name[KERNEL_MAX_METRICS];
	double metric_value[KERNEL_MAX_METRICS];
	int64_t proto, sample, position, order, steps, ns, samples, cpu;
	int64_t msg_len;	/* sample: --msg-len, or 0 when absent */
	int warmup;		/* sample: a --warmup one, not timed */
	double calib_mhz, calib_after_mhz;
	int counted;
	int64_t cycles, instructions;
};

/* Parse and validate one line; on failure err says which field and why. */
int proto_parse(const char *line, size_t len, struct record *rec,
    struct so_err *err);
void proto_record_free(struct record *rec);
/*
 * The type of line (len bytes) without validating the rest, for a line
 * that is not read (a refused build's, relayed by a conductor): 0 with
 * *t when it is a JSON object whose "type" names a record type, else -1.
 */
int proto_peek_type(const char *line, size_t len, enum rec_type *t);

/* Type name ("sample") of a record type. */
const char *proto_type_name(enum rec_type t);

/* Splits a byte stream into lines of at most PROTO_MAX_LINE bytes. */
struct line_reader {
	char buf[PROTO_MAX_LINE + 1];
	size_t len;
	uint64_t lineno;	/* number of the last complete line */
	uint64_t offset;	/* bytes consumed through the last full line */
};

/*
 * Feed n bytes; on_line is called with each complete line (without the
 * newline, NUL terminated).  A line over the limit is SO_EPROTO.  A
 * non-zero return from on_line stops and is returned; on_line says why
 * in err (the one given here), with control characters made printable.
 * A fault in the line itself (SO_EPROTO, SO_EPARSE, SO_EINVAL) gets the
 * line's number in front ("agent output line 7: ..."); the coordinator's
 * own failures (database, memory) and SO_EAGENT, the agent's own error
 * record, are not about the output and stay as on_line left them.
 */
int line_feed(struct line_reader *r, const char *data, size_t n,
    int (*on_line)(void *arg, char *line, size_t len), void *arg,
    struct so_err *err);

#endif
