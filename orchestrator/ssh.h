/*
 * What the SSH transport can tell beyond struct conn: the host key it
 * verified, so that `seqorch hosts trust` can show what it recorded.
 */
#ifndef SEQORCH_SSH_H
#define SEQORCH_SSH_H

#include "conn.h"

/*
 * The OpenSSH-style fingerprint ("SHA256:...", base64 without padding) and
 * key type ("ssh-ed25519", ...) of the host key c verified.  *recorded is
 * set to 1 when conn_open added the key to known_hosts (CONN_TRUST_NEW and
 * an unknown key), 0 when it was already there.  Returns NULL fingerprint
 * when c is not an SSH connection.  The strings belong to c.
 */
const char *ssh_host_fingerprint(const struct conn *c, const char **type,
    int *recorded);

/*
 * The same for jump host i (0: the first one connected) on the way to c,
 * whose known_hosts is c->host->jumps[i].known_hosts; NULL when there is
 * no such jump host.
 */
const char *ssh_jump_fingerprint(const struct conn *c, size_t i,
    const char **type, int *recorded);

#endif
