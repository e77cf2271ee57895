/*
 * known_hosts for the SSH transport, as OpenSSH's hostfile.c: reading the
 * file (the name a host is looked up by, patterns, hashed names, lines
 * skipped), which host key algorithms to ask for, the strict check of the
 * key a host presents (unknown, changed, changed type, @revoked), and the
 * line `seqorch hosts trust` appends for a new host.
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

/*
 * The known_hosts name of the host: OpenSSH's "[addr]:port" unless 22,
 * lowercase as ssh makes it, which matters to hashed entries.
 */
static char *
known_name(const struct host *h)
{
	char *name, *p;

	if (h->port == 22)
		name = xstrdup(h->address);
	else
		name = xasprintf("[%s]:%d", h->address, h->port);
	for (p = name; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	return name;
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

/* A line of known_hosts longer than this is skipped as unreadable. */
#define KNOWN_LINE_MAX	16384

/* A key known_hosts holds for the host, and the line it is on. */
struct known_key {
	const struct keytype *t;
	unsigned char *blob;
	size_t len;
	unsigned long line;
	int exact;			/* named alone or hashed, not a pattern */
};

/*
 * What known_hosts says about the one name a host is looked up by, read
 * as OpenSSH reads it: lines it cannot read are skipped, and the first
 * of them that names the host is kept, to be named if the host turns out
 * unknown (the line may have been its entry).
 */
struct known {
	char *name;			/* "addr", or "[addr]:port" unless 22 */
	struct known_key *keys;
	size_t nkeys;
	unsigned long bad_line;		/* 0 for none */
	char bad_why[96];
};

/*
 * OpenSSH's match_pattern: '*' and '?' wildcards, case-insensitive.  On
 * a mismatch only the last '*' takes one more character (any earlier one
 * could take whatever it would), so a line of stars costs len(s) times
 * its length, where trying every split would never end.
 */
static int
glob_match(const char *s, const char *p, size_t plen)
{
	const char *end = p + plen, *star = NULL, *retry = NULL;

	while (*s != '\0') {
		if (p < end && *p == '*') {
			star = ++p;
			retry = s;
		} else if (p < end && (*p == '?' || tolower((unsigned char)*p) ==
		    tolower((unsigned char)*s))) {
			p++;
			s++;
		} else if (star != NULL) {
			p = star;
			s = ++retry;
		} else
			return 0;
	}
	while (p < end && *p == '*')
		p++;
	return p == end;
}

/* Decode base64 of length len into a new buffer; -1 if it is not base64. */
static int
b64_decode(const char *b64, size_t len, unsigned char **out, size_t *outlen)
{
	unsigned char *blob;
	int n;

	if (len == 0 || len % 4 != 0 || len > KNOWN_LINE_MAX)
		return -1;
	blob = xmalloc(len / 4 * 3 + 1);
	if ((n = EVP_DecodeBlock(blob, (const unsigned char *)b64,
	    (int)len)) < 0) {
		free(blob);
		return -1;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	if (b64[len - 1] == '=')
		n--;
	if (b64[len - 2] == '=')
		n--;
	*out = blob;
	*outlen = (size_t)n;
	return 0;
}

/*
 * Does a known_hosts host field name the host?  0 no, 1 through a
 * pattern or a list, 2 alone or hashed (a line ssh-keygen -R NAME may
 * delete without losing another host's entry).
 * As OpenSSH's match_hostname: a hashed field "|1|salt|hmac" is the
 * HMAC-SHA1 of the name, otherwise a comma list of patterns in which a
 * matching "!pattern" excludes the host whatever else matches.
 */
static int
host_matches(const char *field, const char *name)
{
	const char *p, *e;
	unsigned char *salt = NULL, *hash = NULL, md[EVP_MAX_MD_SIZE];
	size_t saltlen, hashlen, mdlen = 0, len;
	int hit = 0, neg;

	if (strncmp(field, "|1|", 3) == 0) {
		p = field + 3;
		if ((e = strchr(p, '|')) != NULL &&
		    b64_decode(p, (size_t)(e - p), &salt, &saltlen) == 0 &&
		    b64_decode(e + 1, strlen(e + 1), &hash, &hashlen) == 0 &&
		    EVP_Q_mac(NULL, "HMAC", NULL, "SHA1", NULL, salt, saltlen,
		    (const unsigned char *)name, strlen(name), md, sizeof md,
		    &mdlen) != NULL)
			hit = mdlen == hashlen && memcmp(md, hash, mdlen) == 0 ?
			    2 : 0;
		free(salt);
		free(hash);
		return hit;
	}
	for (p = field; *p != '\0'; p = *e == ',' ? e + 1 : e) {
		e = p + strcspn(p, ",");
		neg = *p == '!';
		len = (size_t)(e - p) - (neg ? 1 : 0);
		if (!glob_match(name, neg ? p + 1 : p, len))
			continue;
		if (neg)
			return 0;
		hit = strchr(field, ',') == NULL && strpbrk(field, "*?") == NULL ?
		    2 : 1;
	}
	return hit;
}

/* Remember the first line naming the host that could not be read. */
static void
known_bad(struct known *k, unsigned long line, const char *why)
{
	if (k->bad_line == 0) {
		k->bad_line = line;
		snprintf(k->bad_why, sizeof k->bad_why, "%s", why);
	}
}

/*
 * One line of known_hosts: a key for k->name is added to k.  Markers
 * are skipped: @revoked keys are refused by revoked(), and @cert-authority
 * keys sign host certificates, which libssh2 does not use.
 */
static void
known_line(struct known *k, char *line, unsigned long lineno, int toolong)
{
	char *f[3], *p = line, why[96];
	unsigned char *blob = NULL;
	size_t n = 0, len, i, tlen;
	const struct keytype *t = NULL;
	int hit;

	while (n < 3 && *(p += strspn(p, " \t\r\n")) != '\0') {
		f[n++] = p;
		p += strcspn(p, " \t\r\n");
		if (*p != '\0')
			*p++ = '\0';
	}
	if (n == 0 || f[0][0] == '#' || f[0][0] == '@')
		return;
	if ((hit = host_matches(f[0], k->name)) == 0)
		return;
	if (toolong) {
		known_bad(k, lineno, "it is too long");
		return;
	}
	if (n < 3) {
		known_bad(k, lineno, "it has no key");
		return;
	}
	for (i = 0; i < NKEYTYPES; i++)
		if (strcmp(f[1], keytypes[i].name) == 0)
			t = &keytypes[i];
	if (t == NULL) {
		/* ssh-dss, security keys, ...: OpenSSH's, but not ours. */
		snprintf(why, sizeof why, "its key type \"%.40s\" is one seqorch "
		    "does not know", f[1]);
		known_bad(k, lineno, why);
		return;
	}
	/* The blob starts with its type, as a string: OpenSSH checks that. */
	tlen = strlen(t->name);
	if (b64_decode(f[2], strlen(f[2]), &blob, &len) != 0 ||
	    len < 4 + tlen || blob[0] != 0 || blob[1] != 0 ||
	    (size_t)(blob[2] << 8 | blob[3]) != tlen ||
	    memcmp(blob + 4, t->name, tlen) != 0) {
		free(blob);
		snprintf(why, sizeof why, "its %s key is unreadable", t->name);
		known_bad(k, lineno, why);
		return;
	}
	ALLOC_GROW(k->keys, k->nkeys);
	k->keys[k->nkeys++] = (struct known_key){ t, blob, len, lineno,
	    hit == 2 };
}

void
ssh_known_free(struct known *k)
{
	size_t i;

	if (k == NULL)
		return;
	for (i = 0; i < k->nkeys; i++)
		free(k->keys[i].blob);
	free(k->keys);
	free(k->name);
	free(k);
}

/*
 * Read what known_hosts holds for the host (a missing file holds
 * nothing).  Lines are read as OpenSSH reads them, not by libssh2, whose
 * readfile gives up on the whole file at its first bad line and whose
 * check takes a plain "addr" entry for a host on any port: OpenSSH looks
 * a host on port 22 up as "addr" only, on another port as "[addr]:port"
 * only.
 */
static int
known_read(const struct host *h, struct known **out, struct so_err *err)
{
	struct known *k = xmalloc(sizeof *k);
	char line[KNOWN_LINE_MAX], buf[128];
	unsigned long lineno = 0;
	struct stat st;
	size_t len;
	int c, toolong, rc = 0;
	FILE *f;

	*k = (struct known){ .name = known_name(h) };
	if ((f = fopen(h->known_hosts, "re")) == NULL) {
		if (errno != ENOENT)
			rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot "
			    "read known_hosts \"%s\": %s", h->name,
			    h->known_hosts, ssh_errtext(errno, buf, sizeof buf));
		goto out;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": known_hosts "
		    "\"%s\" is a directory", h->name, h->known_hosts);
		goto out;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		lineno++;
		len = strlen(line);
		toolong = 0;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			/* Skip the rest; the start still names its host. */
			while ((c = getc(f)) != EOF && c != '\n')
				toolong = 1;
		}
		known_line(k, line, lineno, toolong);
	}
	if (ferror(f))
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot read "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    ssh_errtext(errno, buf, sizeof buf));
out:
	if (f != NULL)
		fclose(f);
	if (rc != 0) {
		ssh_known_free(k);
		k = NULL;
	}
	*out = k;
	return rc;
}

/*
 * Read known_hosts and offer first the host key algorithms of the keys
 * it already has for this host, as OpenSSH does: otherwise a server with
 * an RSA and an Ed25519 key could present the one we do not know and be
 * refused as unknown.
 */
int
ssh_load_known(struct conn *c, struct known **out, struct so_err *err)
{
	struct ssh *s = c->impl;
	struct known *k;
	const char **algs = NULL;
	struct strbuf known = STRBUF_INIT, rest = STRBUF_INIT;
	size_t i, j;
	int rc, nalgs, has;

	if ((rc = known_read(c->host, &k, err)) != 0)
		return rc;
	*out = k;
	if ((nalgs = libssh2_session_supported_algs(s->session,
	    LIBSSH2_METHOD_HOSTKEY, &algs)) <= 0)
		return 0;
	for (i = 0; i < NKEYTYPES; i++) {
		for (has = 0, j = 0; j < k->nkeys; j++)
			has |= k->keys[j].t == &keytypes[i];
		add_methods(has ? &known : &rest, keytypes[i].methods, algs,
		    nalgs);
	}
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
	return 0;
}

/* Append the host's key to known_hosts as one OpenSSH line. */
static int
record_key(struct conn *c, const struct known *k, const struct keytype *t,
    const char *key, size_t keylen, struct so_err *err)
{
	const struct host *h = c->host;
	char *line, *b64, *dir = NULL, last = '\n';
	char buf[128];
	const char *slash;
	size_t len;
	ssize_t n;
	int fd = -1, rc = 0;

	b64 = xmalloc(4 * (keylen / 3 + 1) + 1);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)key,
	    (int)keylen);
	line = xasprintf("%s %s %s added by seqorch hosts trust\n", k->name,
	    t->name, b64);
	len = strlen(line);
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
	free(line);
	free(b64);
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
 * Strict host key check, as OpenSSH's check_key_in_hostkeys: a key of
 * known_hosts equal to the one presented lets the connection go on
 * wherever it is; otherwise a key of the same type, then one of another
 * type, means the key changed and is always refused, with both
 * fingerprints and the line (ssh_load_known() asked for a known type
 * first, so a host showing another has none any more): trusting the new
 * key would hide a replaced host.  An unknown key is refused with the
 * command that would trust it, unless flags has CONN_TRUST_NEW.
 */
int
ssh_check_hostkey(struct conn *c, struct known *k, int flags,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	const struct keytype *t = NULL;
	const struct known_key *same = NULL, *other = NULL, *e;
	const char *key;
	char known[64], how[512], bad[256] = "";
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
	if (revoked(h->known_hosts, key, len))
		return so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "(%s %s) is marked @revoked in known_hosts \"%s\"; "
		    "refusing to connect", h->name, k->name, t->name,
		    s->fingerprint, h->known_hosts);
	for (i = 0; i < k->nkeys; i++) {
		e = &k->keys[i];
		if (e->t != t) {
			if (other == NULL)
				other = e;
			continue;
		}
		if (e->len == len && memcmp(e->blob, key, len) == 0)
			return 0;
		if (same == NULL)
			same = e;
	}
	if ((e = same != NULL ? same : other) != NULL) {
		fingerprint(e->blob, e->len, known, sizeof known);
		/*
		 * -R deletes every line matching the name, patterns and
		 * lists that stand for other hosts too included.
		 */
		if (e->exact)
			snprintf(how, sizeof how, "remove that line, or run "
			    "ssh-keygen -R '%s' -f '%s'", k->name,
			    h->known_hosts);
		else
			snprintf(how, sizeof how, "remove that line");
	}
	if (same != NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "has changed: known_hosts \"%s\":%lu has %s %s, the server "
		    "presented %s %s; refusing to connect (if the host was "
		    "reinstalled, %s)", h->name, k->name, h->known_hosts,
		    same->line, t->name, known, t->name, s->fingerprint, how);
	if (other != NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "changed type: known_hosts \"%s\":%lu has %s %s, and the "
		    "server offers no %s key but %s %s; refusing to connect (if "
		    "the host's keys were replaced, %s first)", h->name,
		    k->name, h->known_hosts, other->line, other->t->name,
		    known, other->t->name, t->name, s->fingerprint, how);
	if (flags & CONN_TRUST_NEW) {
		rc = record_key(c, k, t, key, len, err);
		s->recorded = rc == 0;
		return rc;
	}
	if (k->bad_line != 0)
		snprintf(bad, sizeof bad, "; known_hosts \"%s\":%lu names it "
		    "but was skipped: %s", h->known_hosts, k->bad_line,
		    k->bad_why);
	return so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s is "
	    "not in known_hosts \"%s\" (%s %s)%s; if that fingerprint is "
	    "right, run \"seqorch hosts trust %s%s\"", h->name, k->name,
	    h->known_hosts, t->name, s->fingerprint, bad, s->trust_name,
	    h->hint != NULL ? h->hint : "");
}
