/* Host facts for the agent's "facts" record. */
#ifndef SEQORCH_AGENT_FACTS_H
#define SEQORCH_AGENT_FACTS_H

#include "jsonl.h"
#include <stddef.h>

/*
 * Add the host's facts to obj: arch, os, kernel, hostname, cpu_model,
 * cpu_flags, hwcaps (AArch64 Linux: the AT_HWCAP/AT_HWCAP2 bits by name,
 * else null), facts_warning (why /proc/cpuinfo was not believed, or null),
 * cores, compiler, openssl, openssl_ia32cap and openssl_armcap
 * (the environment's libcrypto capability masks, or null), governor (of
 * cpu, or null where unreadable).  Values that cannot be read are JSON null, never guessed.
 */
void facts_add(struct jsonl *obj, int cpu);

/*
 * The libcrypto this process loaded, into buf: its OpenSSL_version() and
 * the file the dynamic loader took it from ("OpenSSL 3.0.17 1 Jul 2025
 * (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)"), or "(linked statically)"
 * when no shared object holds it.  What builds.openssl records: not the
 * `openssl` command on PATH, which on macOS is LibreSSL's.
 */
void facts_libcrypto(char *buf, size_t len);

#endif
