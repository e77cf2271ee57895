/*
 * known_hosts for the SSH transport, as OpenSSH's hostfile.c: which host
 * key algorithms to ask for, the strict check of the key a host presents
 * (unknown, changed, changed type, @revoked), and the line `seqorch hosts
 * trust` appends for a new host.
 */
#include "ssh-int.h"
#include "strbuf.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

/* Host key types we accept, in the order we prefer them. */
static const struct keytype {
	int hostkey;			/* LIBSSH2_HOSTKEY_TYPE_* */
	int known;			/* LIBSSH2_KNOWNHOST_KEY_* */
	const char *name;		/* as in known_hosts */
	const char *methods;		/* host key algorithms using it */
} keytypes[] = {
	{ LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519,
	    "ssh-ed25519", "ssh-ed25519" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
	    "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
	    "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
	    "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521" },
	{ LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA,
	    "ssh-rsa", "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
};
#define NKEYTYPES (sizeof keytypes / sizeof keytypes[0])

/* "SHA256:" and the unpadded base64 of the SHA-256 of a key blob. */
static void
fingerprint(const unsigned char *blob, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[4 * EVP_MAX_MD_SIZE / 3 + 4];
	unsigned int mdlen = 0;
	int n;

	if (!EVP_Digest(blob, len, md, &mdlen, EVP_sha256(), NULL)) {
		snprintf(out, outlen, "SHA256:(unavailable)");
		return;
	}
	n = EVP_EncodeBlock(b64, md, (int)mdlen);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	snprintf(out, outlen, "SHA256:%.*s", n, (const char *)b64);
}

/* Fingerprint of a known_hosts entry, whose key is a base64 key blob. */
static void
known_fingerprint(const char *b64, char *out, size_t outlen)
{
	size_t len = strlen(b64);
	unsigned char *blob;
	int n;

	while (len > 0 && isspace((unsigned char)b64[len - 1]))
		len--;
	blob = xmalloc(len / 4 * 3 + 3);
	n = EVP_DecodeBlock(blob, (const unsigned char *)b64, (int)len);
	if (n < 0 || len % 4 != 0)
		snprintf(out, outlen, "(unreadable key)");
	else {
		/* EVP_DecodeBlock counts the padding as zero bytes. */
		if (len >= 1 && b64[len - 1] == '=')
			n--;
		if (len >= 2 && b64[len - 2] == '=')
			n--;
		fingerprint(blob, (size_t)n, out, outlen);
	}
	free(blob);
}

/* The known_hosts name of the host: OpenSSH's "[addr]:port" unless 22. */
static char *
known_name(const struct host *h)
{
	if (h->port == 22)
		return xstrdup(h->address);
	return xasprintf("[%s]:%d", h->address, h->port);
}

/*
 * Append to the comma list in sb those of the comma list methods that
 * this libssh2 supports.  libssh2 1.10 would drop the others itself, but
 * with an overlapping memcpy (undefined behaviour), so we never pass any.
 */
static void
add_methods(struct strbuf *sb, const char *methods, const char **supported,
    int nsupported)
{
	char *copy = xstrdup(methods), *p = copy, *m;
	int i;

	while ((m = strsep(&p, ",")) != NULL)
		for (i = 0; i < nsupported; i++)
			if (strcmp(m, supported[i]) == 0) {
				if (sb->len > 0)
					strbuf_addch(sb, ',');
				strbuf_addstr(sb, m);
			}
	free(copy);
}

/*
 * Does known_hosts hold a key of type t for host h?  A probe with a key
 * that cannot be right: MISMATCH means there is an entry of this type for
 * the host (hashed names included), NOTFOUND that there is none.  *entry
 * (entry may be NULL) gets the entry found.
 */
static int
knows_type(LIBSSH2_KNOWNHOSTS *kh, const struct host *h,
    const struct keytype *t, struct libssh2_knownhost **entry)
{
	return libssh2_knownhost_checkp(kh, h->address, h->port, "?", 1,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    t->known, entry) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH;
}

/*
 * Load known_hosts (a missing file is an empty one) and offer first the
 * host key algorithms of the keys it already has for this host, as OpenSSH
 * does: otherwise a server with an RSA and an Ed25519 key could present the
 * one we do not know and be refused as unknown.
 */
int
ssh_load_known(struct conn *c, LIBSSH2_KNOWNHOSTS **out, struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	LIBSSH2_KNOWNHOSTS *kh;
	const char **algs = NULL;
	struct strbuf known = STRBUF_INIT, rest = STRBUF_INIT;
	char buf[256];
	size_t i;
	int rc, nalgs;

	if ((kh = libssh2_knownhost_init(s->session)) == NULL)
		return so_error(err, SO_ENOMEM, "host \"%s\": cannot set up "
		    "known hosts", h->name);
	if (access(h->known_hosts, F_OK) == 0 &&
	    (rc = libssh2_knownhost_readfile(kh, h->known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH)) < 0) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot read "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    ssh_lasterr(s, buf, sizeof buf));
		libssh2_knownhost_free(kh);
		return rc;
	}
	if ((nalgs = libssh2_session_supported_algs(s->session,
	    LIBSSH2_METHOD_HOSTKEY, &algs)) <= 0) {
		*out = kh;
		return 0;
	}
	for (i = 0; i < NKEYTYPES; i++)
		add_methods(knows_type(kh, h, &keytypes[i], NULL) ? &known :
		    &rest, keytypes[i].methods, algs, nalgs);
	libssh2_free(s->session, algs);
	/* Known types first. */
	if (known.len > 0 && rest.len > 0)
		strbuf_addch(&known, ',');
	strbuf_add(&known, rest.buf, rest.len);
	if (known.len > 0)
		libssh2_session_method_pref(s->session, LIBSSH2_METHOD_HOSTKEY,
		    known.buf);
	strbuf_release(&rest);
	strbuf_release(&known);
	*out = kh;
	return 0;
}

/* Append the host's key to known_hosts as one OpenSSH line. */
static int
record_key(struct conn *c, LIBSSH2_KNOWNHOSTS *kh, const char *key,
    size_t keylen, int known, struct so_err *err)
{
	const struct host *h = c->host;
	struct libssh2_knownhost *entry = NULL;
	static const char comment[] = "added by seqorch hosts trust";
	char *name = known_name(h), *dir = NULL, line[16384], last = '\n';
	char buf[128];
	const char *slash;
	size_t len = 0;
	ssize_t n;
	int fd = -1, rc = 0;

	if (libssh2_knownhost_addc(kh, name, NULL, key, keylen, comment,
	    sizeof comment - 1, LIBSSH2_KNOWNHOST_TYPE_PLAIN |
	    LIBSSH2_KNOWNHOST_KEYENC_RAW | known, &entry) != 0 ||
	    libssh2_knownhost_writeline(kh, entry, line, sizeof line, &len,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot format "
		    "a known_hosts line for %s", h->name, name);
		goto out;
	}
	fd = open(h->known_hosts, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600);
	/* Like ssh, make a missing ~/.ssh (one level, private) on first use. */
	if (fd == -1 && errno == ENOENT && (slash = strrchr(h->known_hosts,
	    '/')) != NULL && slash != h->known_hosts) {
		dir = xasprintf("%.*s", (int)(slash - h->known_hosts),
		    h->known_hosts);
		if (mkdir(dir, 0700) == 0)
			fd = open(h->known_hosts, O_RDWR | O_APPEND | O_CREAT |
			    O_CLOEXEC, 0600);
		else
			errno = ENOENT;
	}
	if (fd == -1) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot open "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    ssh_errtext(errno, buf, sizeof buf));
		goto out;
	}
	/* An existing last line without its newline must not be joined. */
	if (lseek(fd, -1, SEEK_END) != -1 && read(fd, &last, 1) != 1)
		last = '\n';
	if (last != '\n' && write(fd, "\n", 1) != 1)
		n = -1;
	else
		n = write(fd, line, len);
	if (n != (ssize_t)len || fsync(fd) == -1)
		rc = so_error(err, SO_EIO, "host \"%s\": cannot write "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    n >= 0 && n < (ssize_t)len ? "short write" :
		    ssh_errtext(errno, buf, sizeof buf));
out:
	if (fd != -1)
		close(fd);
	free(dir);
	free(name);
	return rc;
}

/*
 * True if known_hosts lists the key as "@revoked".  libssh2 1.10 does not
 * know the marker (it reads such a line as an entry for a host named
 * "@revoked"), so the check is ours.
 */
static int
revoked(const char *path, const char *key, size_t keylen)
{
	char *b64, line[16384];
	const char *p;
	size_t n;
	FILE *f;
	int hit = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	b64 = xmalloc(4 * (keylen / 3 + 1) + 1);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)key,
	    (int)keylen);
	n = strlen(b64);
	while (!hit && fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "@revoked", 8) != 0 ||
		    !isspace((unsigned char)line[8]))
			continue;
		for (p = line; !hit && (p = strstr(p, b64)) != NULL; p += n)
			hit = isspace((unsigned char)p[-1]) &&
			    (p[n] == '\0' || isspace((unsigned char)p[n]));
	}
	fclose(f);
	free(b64);
	return hit;
}

/*
 * A key of another type that known_hosts holds for the host, if any:
 * the host known by one key type that now presents only another.  Returns
 * the type and sets *entry, or NULL.
 */
static const struct keytype *
other_known_type(struct conn *c, LIBSSH2_KNOWNHOSTS *kh,
    const struct keytype *t, struct libssh2_knownhost **entry)
{
	size_t i;

	for (i = 0; i < NKEYTYPES; i++) {
		if (&keytypes[i] == t)
			continue;
		if (knows_type(kh, c->host, &keytypes[i], entry))
			return &keytypes[i];
	}
	return NULL;
}

/*
 * Strict host key check.  An unknown key is refused with the command that
 * would trust it, unless flags has CONN_TRUST_NEW; a changed key is always
 * refused, with both fingerprints, and so is a host known by a key of
 * another type (ssh_load_known() asked for that type first, so the host has
 * none any more): trusting the new key would hide a replaced host.
 */
int
ssh_check_hostkey(struct conn *c, LIBSSH2_KNOWNHOSTS *kh, int flags,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	struct libssh2_knownhost *k = NULL;
	const struct keytype *t = NULL, *other;
	const char *key;
	char known[64], *name;
	size_t len, i;
	int type, rc;

	if ((key = libssh2_session_hostkey(s->session, &len, &type)) == NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": %s presented "
		    "no host key", h->name, s->peer);
	for (i = 0; i < NKEYTYPES; i++)
		if (keytypes[i].hostkey == type)
			t = &keytypes[i];
	if (t == NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": %s presented "
		    "a host key of an unsupported type", h->name, s->peer);
	s->keytype = t->name;
	fingerprint((const unsigned char *)key, len, s->fingerprint,
	    sizeof s->fingerprint);
	name = known_name(h);
	if (revoked(h->known_hosts, key, len)) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "(%s %s) is marked @revoked in known_hosts \"%s\"; "
		    "refusing to connect", h->name, name, t->name,
		    s->fingerprint, h->known_hosts);
		goto out;
	}
	rc = libssh2_knownhost_checkp(kh, h->address, h->port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    t->known, &k);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		rc = 0;
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		known_fingerprint(k->key, known, sizeof known);
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "has changed: known_hosts \"%s\" has %s %s, the server "
		    "presented %s %s; refusing to connect (if the host was "
		    "reinstalled, remove its old line from known_hosts)",
		    h->name, name, h->known_hosts, t->name, known, t->name,
		    s->fingerprint);
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		if ((other = other_known_type(c, kh, t, &k)) != NULL) {
			known_fingerprint(k->key, known, sizeof known);
			rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key "
			    "for %s changed type: known_hosts \"%s\" has %s %s,"
			    " and the server offers no %s key but %s %s; "
			    "refusing to connect (if the host's keys were "
			    "replaced, remove the old one first: ssh-keygen -R "
			    "'%s' -f '%s')", h->name, name, h->known_hosts,
			    other->name, known, other->name, t->name,
			    s->fingerprint, name, h->known_hosts);
			break;
		}
		if (flags & CONN_TRUST_NEW) {
			rc = record_key(c, kh, key, len, t->known, err);
			s->recorded = rc == 0;
			break;
		}
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "is not in known_hosts \"%s\" (%s %s); if that fingerprint "
		    "is right, run \"seqorch hosts trust %s%s\"", h->name,
		    name, h->known_hosts, t->name, s->fingerprint,
		    s->trust_name, h->hint != NULL ? h->hint : "");
		break;
	default:
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot check the "
		    "host key for %s against \"%s\"", h->name, name,
		    h->known_hosts);
		break;
	}
out:
	free(name);
	return rc;
}

