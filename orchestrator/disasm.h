/*
 * The disassembly check of a build: every variant declares the
 * instructions its hot function must contain (struct kernel: insns,
 * symbol); after a build the coordinator asks the agent for that list
 * (--list), disassembles just those functions on the host with objdump and
 * stores, per variant, what was found and an excerpt (table disasm).
 */
#ifndef SEQORCH_DISASM_H
#define SEQORCH_DISASM_H

#include "conn.h"
#include "db.h"
#include "strbuf.h"

/*
 * Check the agent at path `agent` of build build_id.  Returns 0 or a
 * negative SO_E* code when the host or database failed (SO_EAGENT: the
 * agent's --list failed or listed too many kernels); a missing
 * instruction is not an error of this call: *bad counts those variants.
 */
int disasm_check(struct conn *c, const char *agent, int64_t build_id,
    struct db *db, unsigned *bad, struct so_err *err);

/*
 * Append to cmd the shell command that prints the disassembly of the
 * functions named by symbols ("a|b", C identifiers, with or without
 * Mach-O's leading underscore) in the binary at agent: exit 3 without
 * objdump, 4 when it was llvm-objdump (which needs the extensions named).
 */
void disasm_command(struct strbuf *cmd, const char *agent,
    const char *symbols);

/*
 * Pure part, for tests: does the disassembly text of one function contain
 * mnemonic as an instruction?  Returns the first such line (a pointer
 * into text) or NULL.
 */
const char *disasm_find(const char *text, const char *mnemonic);

/*
 * The body of function sym in objdump's output: every part the compiler
 * made of it ("<sym>:" and "<sym.suffix>:", such as sym.cold, which gcc
 * may place first), as a new string, or NULL if there is none.
 */
char *disasm_body(const char *dump, const char *sym);

#endif
