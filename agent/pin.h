/* Pin the calling thread to one CPU, where the OS offers a hard pin. */
#ifndef SEQORCH_AGENT_PIN_H
#define SEQORCH_AGENT_PIN_H

#include <stddef.h>

/*
 * Pin to cpu (>= 0).  Returns 0 on success, or -1 with a reason in why
 * (for example "no hard affinity on this os" or the errno text); the
 * caller records the failure rather than hiding it.
 */
int pin_to_cpu(int cpu, char *why, size_t whylen);

/* CPU the thread runs on now, or -1 when the OS cannot say. */
int pin_current_cpu(void);

#endif
