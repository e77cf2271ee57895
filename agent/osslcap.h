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
 * exec failing).  In the second start it returns 0 at once.
 */
int osslcap_clear(const char *names, char **argv, char *err, size_t len);

/*
 * The mask libcrypto runs with, as OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS)
 * says after the variable's name: "0x...:0x..." (x86-64), "0x..."
 * (aarch64), into buf; "" when it does not say.
 */
void osslcap_applied(char *buf, size_t len);

#endif
