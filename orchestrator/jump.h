/*
 * ProxyJump plumbing: a relay thread that carries the bytes of a libssh2
 * direct-tcpip channel (opened on a jump host's session towards the next
 * host) to and from one end of a local socketpair.  The next SSH session
 * runs over the other end as if it were a TCP socket, so every hop, and
 * the target, goes through the same ssh.c code.
 *
 * Once started, the relay thread is the only user of the jump session:
 * the caller must not touch it again until relay_stop() has returned.
 * When the jump host drops or closes the channel, the relay closes its
 * end, and the session over the other end sees a closed connection, just
 * as when a directly connected host drops.  The relay sends no keepalives
 * of its own: the target's keepalives cross every hop, so silence anywhere
 * on the path shows as silence of the target.
 */
#ifndef SEQORCH_JUMP_H
#define SEQORCH_JUMP_H

#include <libssh2.h>

struct so_err;
struct relay;

/*
 * Start relaying channel ch of session (non-blocking, over socket
 * session_fd).  Returns 0 with *fd set to the caller's end of the
 * socketpair (non-blocking, close-on-exec; the caller closes it) and *out
 * to the relay, or SO_EIO with err filled (name is the jump host, for the
 * message).  The channel stays owned by the session.
 */
int relay_start(LIBSSH2_SESSION *session, int session_fd,
    LIBSSH2_CHANNEL *ch, const char *name, int *fd, struct relay **out,
    struct so_err *err);

/*
 * Stop the relay and wait for its thread; frees r.  After this the
 * session is the caller's again (to disconnect and free).  NULL is
 * allowed.
 */
void relay_stop(struct relay *r);

#endif
