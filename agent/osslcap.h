/*
 * --openssl-cap-clear: libcrypto started with only the named capability
 * bits cleared from those it detects (kernels/openssl-caps.h), every other
 * bit as detected.  The mask is read with OPENSSL_info, and libcrypto
 * reads OPENSSL_ia32cap / OPENSSL_armcap once, when it initialises: so
 * the agent reads, sets the variable and runs itself again.
 */
#ifndef SEQORCH_AGENT_OSSLCAP_H
#define SEQORCH_AGENT_OSSLCAP_H

#include <stddef.h>

/* Set in the agent's second start: the masks it read and cleared. */
#define OSSLCAP_ENV_DETECTED "SEQORCH_OPENSSL_CAP_DETECTED"
#define OSSLCAP_ENV_CLEARED "SEQORCH_OPENSSL_CAP_CLEARED"

/*
 * names: a comma list of capability names of this architecture.  In the
 * first start, sets the capability variable to the detected mask without
 * them (and the two variables above) and executes argv again; it returns
 * only on an error (-1, err filled: an unknown name, an unreadable mask,
 * exec failing).  In the second start, and in an agent built without
 * libcrypto (nothing in it reads the bits), it returns 0 at once.
 */
int osslcap_clear(const char *names, char **argv, char *err, size_t len);

/*
 * The masks of names (a comma list of arch's capability names, as
 * kernels/openssl-caps.h names architectures) against detected, a mask
 * as OPENSSL_info prints it ("0x..:0x.."): the bits cleared into cleared
 * and the detected mask without them into applied (len bytes each; words
 * past those that hold names kept as they were).  0, or -1 with err
 * filled: an unknown name, an unreadable or too long mask.
 */
int osslcap_mask(const char *arch, const char *detected, const char *names,
    char *cleared, char *applied, size_t len, char *err, size_t errlen);

/*
 * The mask libcrypto runs with, as OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS)
 * says after the variable's name: "0x...:0x..." (x86-64), "0x..."
 * (aarch64), into buf; "" when it does not say.
 */
void osslcap_applied(char *buf, size_t len);

#endif
