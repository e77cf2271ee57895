/*
 * The agent's output (docs/protocol.md): JSON records (jsonl.h), one a
 * line, each flushed as it is written (the coordinator streams them), to
 * stdout or to the file emit_open named.  fatal() is how the agent stops: the
 * message goes to stderr and, as an error record, to the output.
 *
 * Ownership: emit_new's record is the caller's until emit(), which prints
 * and frees it.  The output stream is this module's and stays open until
 * the agent exits; emit_stream lends it.  Strings passed in are copied.
 */
#ifndef SEQORCH_AGENT_EMIT_H
#define SEQORCH_AGENT_EMIT_H

#include "jsonl.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of the agent (docs/protocol.md). */
enum { AG_OK = 0, AG_FAIL = 1, AG_USAGE = 2, AG_IO = 3, AG_LOCKED = 4,
    AG_NOISY = 5 };

/* Write to path (appending) instead of stdout; -1 with errno if it fails. */
int emit_open(const char *path);
FILE *emit_stream(void);

/* A new record of type (PROTO_T_*); out of memory ends the agent. */
struct jsonl *emit_new(const char *type);

/*
 * Print rec as one line, flush it and free it; a failed write exits 3, a
 * record that could not be written (jsonl_finish) ends the agent.
 */
void emit(struct jsonl *rec);

/*
 * A conductor's output interleaves its build agents' records with its
 * own, each run of them after a build record naming whose they are.
 * After emit_conducting, emit() puts a build record with build_id ""
 * before the conductor's own first record after a build's; emit_relay
 * writes line, a record build k (its id build_id) wrote, after a build
 * record when the previous line was not build k's.
 */
void emit_conducting(void);
void emit_relay(int k, const char *build_id, const char *line);

void fatal(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* The n bytes at p as 2n lowercase hex digits and a NUL, into buf. */
void emit_hex(const uint8_t *p, size_t n, char *buf);

#endif
