/* The wording of the macOS facts (macfacts.h); no Apple call here. */
#include "macfacts.h"

#include <stdio.h>
#include <string.h>

/*
 * Apple's hw.optional.arm.FEAT_* sysctls (sysctlbyname(3), "Determining
 * Instruction Set Characteristics"; macOS 12 and later), in the order
 * sysctl lists them (ASCII).
 * cpu.c selects variants by FEAT_AES, FEAT_SHA3 and FEAT_SHA512; the
 * rest say what else the chip has (SME on the M4, none of SVE).  A name
 * this macOS lacks is left out, not guessed.
 */
static const char *const feats[] = {
	"FEAT_AES", "FEAT_AFP", "FEAT_BF16", "FEAT_BTI", "FEAT_CSSC",
	"FEAT_CSV2", "FEAT_CSV3", "FEAT_DIT", "FEAT_DPB", "FEAT_DPB2",
	"FEAT_DotProd", "FEAT_EBF16", "FEAT_ECV", "FEAT_FCMA", "FEAT_FHM",
	"FEAT_FP16", "FEAT_FPAC", "FEAT_FPACCOMBINE", "FEAT_FRINTTS",
	"FEAT_FlagM", "FEAT_FlagM2", "FEAT_HBC", "FEAT_I8MM", "FEAT_JSCVT",
	"FEAT_LRCPC", "FEAT_LRCPC2", "FEAT_LSE", "FEAT_LSE2", "FEAT_PACIMP",
	"FEAT_PAuth", "FEAT_PAuth2", "FEAT_PMULL", "FEAT_RDM", "FEAT_RPRES",
	"FEAT_SB", "FEAT_SHA1", "FEAT_SHA256", "FEAT_SHA3", "FEAT_SHA512",
	"FEAT_SME", "FEAT_SME2", "FEAT_SME_F64F64", "FEAT_SME_I16I64",
	"FEAT_SPECRES", "FEAT_SSBS", "FEAT_SVE", "FEAT_SVE2", "FEAT_WFxT",
};

int
macfacts_feat_names(macfacts_sysctl_fn get, char *buf, size_t len)
{
	char name[64];
	size_t i, used = 0;
	int read = 0, v;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < sizeof feats / sizeof feats[0]; i++) {
		snprintf(name, sizeof name, "hw.optional.arm.%s", feats[i]);
		if (get(name, &v) != 0)
			continue;
		read++;
		if (v == 0 || used + strlen(feats[i]) + 2 > len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    used ? " " : "", feats[i]);
	}
	return read;
}

int
macfacts_power_describe(const struct macfacts_power *p, char *buf,
    size_t len)
{
	const char *state;
	size_t n;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	if (p->source == NULL)
		return -1;
	if (strcmp(p->source, "AC Power") == 0)
		snprintf(buf, len, "AC attached");
	else if (strcmp(p->source, "Battery Power") == 0)
		snprintf(buf, len, "on battery");
	else if (strcmp(p->source, "UPS Power") == 0)
		snprintf(buf, len, "on UPS");
	else
		snprintf(buf, len, "on \"%s\"", p->source);
	n = strlen(buf);
	if (!p->battery) {
		/* A desktop Mac: there is no charge to speak of. */
		if (strcmp(p->source, "AC Power") == 0)
			snprintf(buf + n, len - n, "; no battery");
		return 0;
	}
	/* On AC a battery is charging, full, or held (optimized charging);
	 * on battery it discharges, which "on battery" says. */
	state = p->charging == 1 ? "charging" : p->charged == 1 ? "charged" :
	    strcmp(p->source, "AC Power") == 0 && p->charging == 0 ?
	    "not charging" : NULL;
	if (state != NULL) {
		snprintf(buf + n, len - n, "; %s", state);
		n = strlen(buf);
	}
	if (p->percent >= 0)
		snprintf(buf + n, len - n, "; %d%%", p->percent);
	return 0;
}
