/*
 * User authentication for the SSH transport, as OpenSSH's sshconnect2.c
 * but public keys only: the keys of ssh-agent, then the configured
 * identity files (or OpenSSH's default ones).  Passwords are never sent.
 */
#include "ssh-int.h"
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The deadline passed while authenticating. */
static int
auth_timeout(struct conn *c, struct so_err *err)
{
	struct ssh *s = c->impl;

	return so_error(err, SO_ETIMEOUT, "host \"%s\": authentication at %s: "
	    "timed out after %d s", c->host->name, s->peer,
	    c->host->connect_timeout);
}

/*
 * Try the keys of ssh-agent.  Returns 1 when one was accepted, 0 when none
 * was, or a negative SO_E* code when the session failed meanwhile.
 */
static int
auth_agent(struct conn *c, const char *user, int64_t deadline, int *nkeys,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_AGENT *agent;
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	int rc = 0, r, w = 0;

	*nkeys = 0;
	if ((agent = libssh2_agent_init(s->session)) == NULL)
		return 0;
	if (libssh2_agent_connect(agent) != 0 ||
	    libssh2_agent_list_identities(agent) != 0)
		goto out;
	while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
		(*nkeys)++;
		do
			r = libssh2_agent_userauth(agent, user, id);
		while (ssh_again(s, r, deadline, &w));
		if (r == 0) {
			rc = 1;
			break;
		}
		if (r == LIBSSH2_ERROR_EAGAIN || ssh_session_lost(r)) {
			rc = r == LIBSSH2_ERROR_EAGAIN ? auth_timeout(c, err) :
			    ssh_fail(c, r, "authenticating", err);
			break;
		}
		prev = id;
	}
	libssh2_agent_disconnect(agent);
out:
	libssh2_agent_free(agent);
	return rc;
}

/*
 * Try one private key file.  Returns 1 when accepted, 0 when the server
 * refused it, or a negative SO_E* code (unusable file, failed session).
 */
static int
auth_file(struct conn *c, const char *user, const char *path,
    int64_t deadline, struct so_err *err)
{
	struct ssh *s = c->impl;
	char buf[128];
	int r, w = 0;

	if (access(path, R_OK) == -1)
		return so_error(err, SO_ESSH, "host \"%s\": cannot read "
		    "identity \"%s\": %s", c->host->name, path,
		    ssh_errtext(errno, buf, sizeof buf));
	do
		r = libssh2_userauth_publickey_fromfile_ex(s->session, user,
		    (unsigned int)strlen(user), NULL, path, NULL);
	while (ssh_again(s, r, deadline, &w));
	switch (r) {
	case 0:
		return 1;
	case LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
	case LIBSSH2_ERROR_AUTHENTICATION_FAILED:
		return 0;
	case LIBSSH2_ERROR_FILE:
		return so_error(err, SO_ESSH, "host \"%s\": cannot use "
		    "identity \"%s\": not a private key libssh2 can read, or "
		    "protected by a passphrase (load such keys into ssh-agent)",
		    c->host->name, path);
	case LIBSSH2_ERROR_EAGAIN:
		return auth_timeout(c, err);
	}
	return ssh_fail(c, r, "authenticating", err);
}

/*
 * Public key authentication only: ssh-agent, then the identity file (or,
 * without one, OpenSSH's default key files).  Passwords are never sent.
 */
int
ssh_authenticate(struct conn *c, int64_t deadline, struct so_err *err)
{
	static const char *const defaults[] = { "id_ed25519", "id_ecdsa",
	    "id_rsa" };
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	struct strbuf tried = STRBUF_INIT;
	char *user, *list = NULL, *path = NULL;
	const char *sock = getenv("SSH_AUTH_SOCK");
	char *home = user_home();
	size_t i, nfiles;
	int rc = 0, w = 0, nkeys = 0, ok = 0;

	/* Without a user, the local login name, as ssh has it. */
	if ((user = h->user != NULL ? xstrdup(h->user) : pw_login()) == NULL) {
		rc = so_error(err, SO_ESSH, "host \"%s\": no user given and "
		    "no name for uid %ld", h->name, (long)getuid());
		goto out;
	}
	do {
		list = libssh2_userauth_list(s->session, user,
		    (unsigned int)strlen(user));
		rc = list != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, deadline, &w));
	if (list == NULL && libssh2_userauth_authenticated(s->session))
		goto out;
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		rc = auth_timeout(c, err);
		goto out;
	}
	if (list == NULL) {
		rc = ssh_fail(c, rc, "asking for authentication methods", err);
		goto out;
	}
	if (!list_has(list, ',', "publickey")) {
		rc = so_error(err, SO_ESSH, "host \"%s\": %s offers only "
		    "\"%s\" authentication for \"%s\" and seqorch never sends "
		    "passwords: use a key (identity in hosts.toml, or "
		    "ssh-agent) and enable PubkeyAuthentication on the host",
		    h->name, s->peer, list, user);
		goto out;
	}
	/* IdentitiesOnly: only the configured files, as ssh does. */
	if (sock != NULL && *sock != '\0' && !h->identities_only) {
		if ((ok = auth_agent(c, user, deadline, &nkeys, err)) < 0) {
			rc = ok;
			goto out;
		}
		strbuf_addf(&tried, "ssh-agent (%d key%s)", nkeys,
		    nkeys == 1 ? "" : "s");
	}
	/*
	 * hosts.toml's identity must exist; ssh_config's IdentityFile list
	 * and the default files are skipped when missing, as ssh does.
	 */
	nfiles = h->identity != NULL ? 1 : h->nssh_identities > 0 ?
	    h->nssh_identities : 3;
	for (i = 0; !ok && i < nfiles; i++) {
		free(path);
		if (h->identity != NULL)
			path = xstrdup(h->identity);
		else if (h->nssh_identities > 0)
			path = xstrdup(h->ssh_identities[i]);
		else if (home != NULL)
			path = xasprintf("%s/.ssh/%s", home, defaults[i]);
		else
			break;
		if (h->identity == NULL && access(path, F_OK) == -1)
			continue;
		if ((ok = auth_file(c, user, path, deadline, err)) < 0) {
			rc = ok;
			goto out;
		}
		strbuf_addf(&tried, "%s\"%s\"", tried.len > 0 ? ", " : "",
		    path);
	}
	if (!ok && tried.len == 0)
		strbuf_addf(&tried, "no ssh-agent, no identity in hosts.toml, "
		    "no %s/.ssh/id_* key", home != NULL ? home : "~");
	if (!ok)
		rc = so_error(err, SO_ESSH, "host \"%s\": authentication as "
		    "\"%s\" at %s failed: no key was accepted (tried: %s)",
		    h->name, user, s->peer, tried.buf);
out:
	strbuf_release(&tried);
	free(path);
	free(user);
	free(home);
	return rc;
}

