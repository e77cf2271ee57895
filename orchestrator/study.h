/*
 * The studies this coordinator knows: the table kernels/registry.sh
 * generates from kernels/<study>/ (study.c and reference.c are built into
 * the coordinator as well as, for study.c, into the agent).
 *
 * Everything returned points into static tables; nothing is freed.
 */
#ifndef SEQORCH_STUDY_H
#define SEQORCH_STUDY_H

#include "kernel.h"

/*
 * The most steps a sample of a study that states no max_steps may have
 * (1e11: under an hour of the fastest references, hours of the others).
 */
#define STUDY_MAX_STEPS 100000000000ULL

struct study_entry {
	const char *name;			/* "sha3": its folder */
	const struct study *study;
	const struct study_reference *ref;
	/*
	 * kernels/<study>/targetings: the targetings each compiler builds
	 * the agent with for this study, space separated ("default
	 * native"); NULL: one build, as configured.
	 */
	const char *targetings;
	int prebuild;			/* has kernels/<study>/prebuild.sh */
};

/*
 * An upstream file a study builds from (kernels/<study>/artifacts): the
 * coordinator fetches it into its cache (fetch.h) and uploads it to each
 * host with the agent's sources.
 */
struct artifact_entry {
	const char *study, *name;
	const char *sha256;		/* 64 lowercase hex digits */
	unsigned long long size;	/* bytes */
	const char *url;		/* default; see fetch.h for overrides */
	/*
	 * 1: "generate" in the artifacts file: never uploaded; the
	 * coordinator generates sources from it (generate.h) for the
	 * variants that need it, and a run goes on without it.
	 */
	int generate;
	/*
	 * The version pinned ("version=V"), which url names; NULL: the
	 * artifact has no other version to name (fetch.h).
	 */
	const char *version;
};

/* One variant folder of the embedded sources, for any architecture. */
struct variant_entry {
	const char *study, *variant;
	const char *arch;		/* "x86_64", or "any" */
	const char *flags;		/* its own compiler flags, or NULL */
	const char *libs;		/* libraries it links, or NULL */
	/*
	 * Its `needs` file: the generated sources it builds from (the
	 * name of a "generate" artifact), or NULL.
	 */
	const char *needs;
	/*
	 * Its `compiler` file: the compiler whose code its rate stands for
	 * ("clang"; another compiler measures that compiler's baseline, not
	 * the variant's), or NULL: any.
	 */
	const char *compiler;
};

/*
 * Another name of an architecture in `cc -dumpmachine` (Apple clang's
 * "arm64"), and the name kernels/ use ("aarch64"): kernels/registry.sh's
 * ARCH_ALIASES, the one place they are named.
 */
struct arch_alias {
	const char *other, *name;
};

/*
 * A study group (kernels/groups.txt): the seeds' word for several studies
 * ("div"), which a --study list expands to its studies in order.
 */
struct study_group {
	const char *name;
	const char *studies;		/* comma list: "div32,div64" */
};

/* Every group, in kernels/groups.txt order; ends with a NULL name. */
extern const struct study_group study_groups[];

/*
 * list (a --study comma list) with each group's name replaced by its
 * studies, as a new string the caller frees.  *twice is set to the first
 * study the expanded list names more than once (a new string the caller
 * frees), or NULL.  Names that are neither are kept for the caller to
 * refuse.
 */
char *study_expand(const char *list, char **twice);

/* The group called name, or NULL. */
const struct study_group *study_group_find(const char *name);

/* Every alias; ends with a NULL other. */
extern const struct arch_alias arch_aliases[];

/* Every study, in kernels/studies.txt order; ends with a NULL name. */
extern const struct study_entry study_table[];

/* Every variant, by study then name; ends with a NULL study. */
extern const struct variant_entry variant_table[];

/* Every artifact, by study; ends with a NULL study. */
extern const struct artifact_entry artifact_table[];

/* The study called name, or NULL. */
const struct study_entry *study_find(const char *name);

/* The most steps a sample of st may have (its max_steps, else the cap). */
uint64_t study_max_steps(const struct study *st);

/* The variant of study called name, or NULL. */
const struct variant_entry *study_variant(const char *study,
    const char *name);

/*
 * The architecture of a build's target (`cc -dumpmachine`, such as
 * "arm64-apple-darwin24.1.0") as kernels/ name it ("aarch64"), into buf;
 * NULL target gives "".  Returns buf.
 */
char *study_arch(const char *target, char *buf, size_t len);

/*
 * The unit of one step of study ("hash"), or of many ("hashes"); "step"
 * and "steps" for a study this coordinator does not know (a database
 * written by another version).  Static strings.
 */
const char *study_unit(const char *name);
const char *study_unit_plural(const char *name);

#endif
