/*
 * The table of studies and kernel variants compiled into this agent.
 * Everything returned points into static tables; nothing is freed.
 */
#ifndef SEQORCH_AGENT_REGISTRY_H
#define SEQORCH_AGENT_REGISTRY_H

#include "kernel.h"

/* NULL-terminated tables, in presentation order. */
extern const struct study *const registry_studies[];
extern const struct kernel *const registry_kernels[];

/* The study called name, or NULL. */
const struct study *registry_study(const char *name);

#endif
