/* POST a bundle to a collector over HTTPS with libcurl (collector.h). */
#include "collector.h"

#include "strbuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REDIRECTS 5
#define BODY_MAX 4096

struct body {
	char buf[BODY_MAX + 1];
	size_t len;
};

/* Keep the start of the answer: its first line is what we show. */
static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t len = size * n, room = BODY_MAX - b->len;

	if (len > room)
		memcpy(b->buf + b->len, p, room), b->len = BODY_MAX;
	else
		memcpy(b->buf + b->len, p, len), b->len += len;
	return size * n;
}

/* scheme://host:port of url, lowercase, into out; -1 if not a URL. */
static int
origin_of(const char *url, char *out, size_t len)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = -1;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK) {
		snprintf(out, len, "%s://%s:%s", scheme, host, port);
		for (char *p = out; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		rc = 0;
	}
	curl_free(port);
	curl_free(host);
	curl_free(scheme);
	curl_url_cleanup(u);
	return rc;
}

double
collector_backoff(double first, int retry)
{
	double d = first;

	while (--retry > 0 && d < COLLECTOR_BACKOFF_MAX)
		d *= 2;
	return d < COLLECTOR_BACKOFF_MAX ? d : COLLECTOR_BACKOFF_MAX;
}

/* Replace every "word" of line (a NUL-terminated copy) by "[redacted]". */
static void
redact(struct strbuf *line, const char *word, int after)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = line->buf, *hit;
	size_t wlen = strlen(word);

	if (wlen == 0)
		return;
	while ((hit = after ? strcasestr(p, word) : strstr(p, word)) != NULL) {
		const char *end = hit + wlen;

		if (after) {
			/* Keep the word; hide the credential after it. */
			end += strspn(end, " \t");
			strbuf_add(&out, p, (size_t)(end - p));
			end += strcspn(end, after == 2 ? "" : " \t,;\"'");
		} else
			strbuf_add(&out, p, (size_t)(hit - p));
		strbuf_addstr(&out, "[redacted]");
		p = end;
	}
	strbuf_addstr(&out, p);
	strbuf_reset(line);
	strbuf_addstr(line, out.buf);
	strbuf_release(&out);
}

void
collector_shown(const char *body, size_t len, const char *token, char *out,
    size_t outlen)
{
	struct strbuf line = STRBUF_INIT;
	size_t n, i;

	for (n = 0; n < len && body[n] != '\n' && body[n] != '\r'; n++)
		;
	strbuf_add(&line, body, n);
	for (i = 0; i < line.len; i++)
		if ((unsigned char)line.buf[i] < 0x20 || line.buf[i] == 0x7f)
			line.buf[i] = '?';
	/* Before the cut, so no part of a token is left at the end. */
	if (token != NULL)
		redact(&line, token, 0);
	redact(&line, "authorization:", 2);
	redact(&line, "bearer", 1);
	if (line.len > COLLECTOR_SHOWN_MAX)
		snprintf(out, outlen, "%.*s...", COLLECTOR_SHOWN_MAX, line.buf);
	else
		snprintf(out, outlen, "%s", line.buf);
	strbuf_release(&line);
}

static void
pause_for(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* Connection-level failures worth another try. */
static int
transient(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
		return 1;
	default:
		return 0;
	}
}

/* The body, read from its file as curl asks: never all in memory. */
struct upload {
	int fd;
	uint64_t off, len;
};

static size_t
on_read(char *p, size_t size, size_t n, void *arg)
{
	struct upload *u = arg;
	size_t want = size * n;
	ssize_t r;

	if (u->off >= u->len)
		return 0;
	if (want > u->len - u->off)
		want = (size_t)(u->len - u->off);
	while ((r = pread(u->fd, p, want, (off_t)u->off)) < 0 && errno == EINTR)
		;
	if (r <= 0)
		return CURL_READFUNC_ABORT;
	u->off += (uint64_t)r;
	return (size_t)r;
}

static int
on_seek(void *arg, curl_off_t offset, int origin)
{
	struct upload *u = arg;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > u->len)
		return CURL_SEEKFUNC_CANTSEEK;
	u->off = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

int
collector_post(const struct collector_opts *o, int fd, uint64_t len,
    struct collector_result *res, struct so_err *err)
{
	struct upload up = { fd, 0, len };
	char origin[512], target_origin[512], *url = xstrdup(o->url), *auth;
	char curlerr[CURL_ERROR_SIZE];
	struct curl_slist *hdr = NULL;
	double delay;
	struct body body;
	CURLcode cc;
	CURL *c = NULL;
	int redirects = 0, rc = 0;

	memset(res, 0, sizeof *res);
	if (strncmp(o->url, "https://", 8) != 0 ||
	    origin_of(o->url, origin, sizeof origin) != 0) {
		rc = so_error(err, SO_EINVAL, "publish: \"%s\": expected an "
		    "https:// URL (TLS is always verified)", o->url);
		goto out;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((c = curl_easy_init()) == NULL) {
		rc = so_error(err, SO_ENOMEM, "publish: no curl handle");
		goto out;
	}
	hdr = curl_slist_append(hdr, "Content-Type: application/x-tar");
	/* The body follows the headers, as it did when curl held it. */
	hdr = curl_slist_append(hdr, "Expect:");
	if (o->token != NULL) {
		auth = xasprintf("Authorization: Bearer %s", o->token);
		hdr = curl_slist_append(hdr, auth);
		free(auth);
	}
	for (;;) {
		memset(&body, 0, sizeof body);
		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
		if (o->cacert != NULL)
			curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		up.off = 0;
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &up);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, &up);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)len);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 300L);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
		curlerr[0] = '\0';
		res->attempts++;
		cc = curl_easy_perform(c);
		/* The status line may have come before the connection broke. */
		res->status = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->status);
		collector_shown(body.buf, body.len, o->token, res->body,
		    sizeof res->body);
		if (res->status >= 200 && res->status < 300) {
			/* Delivered: sending again would upload it twice. */
			if (cc != CURLE_OK) {
				res->cut = 1;
				if (o->log != NULL)
					fprintf(o->log, "seqorch: publish: %s "
					    "answered %ld, then the connection "
					    "ended early (%s): not sent again\n",
					    url, res->status,
					    curl_easy_strerror(cc));
			}
			break;
		}
		if (cc != CURLE_OK)
			res->status = 0;
		if (cc == CURLE_OK && res->status >= 300 &&
		    res->status < 400) {
			char *loc = NULL;

			curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
			if (loc == NULL || origin_of(loc, target_origin,
			    sizeof target_origin) != 0 ||
			    strcmp(target_origin, origin) != 0) {
				rc = so_error(err, SO_EINVAL, "publish: %s "
				    "answered %ld, a redirect to \"%s\": "
				    "refused, it is not %s", url, res->status,
				    loc ? loc : "?", origin);
				break;
			}
			if (++redirects > MAX_REDIRECTS) {
				rc = so_error(err, SO_EINVAL, "publish: %s: "
				    "more than %d redirects", o->url,
				    MAX_REDIRECTS);
				break;
			}
			free(url);
			url = xstrdup(loc);
			continue;
		}
		if (cc == CURLE_OK && res->status >= 400 && res->status < 500) {
			rc = so_error(err, SO_EINVAL, "publish: %s answered %ld: "
			    "%s", url, res->status, res->body);
			break;
		}
		if (cc != CURLE_OK && !transient(cc)) {
			rc = so_error(err, SO_EIO, "publish: %s: %s", url,
			    curlerr[0] ? curlerr : curl_easy_strerror(cc));
			break;
		}
		if (res->attempts >= o->attempts) {
			rc = cc == CURLE_OK ? so_error(err, SO_EIO, "publish: "
			    "%s answered %ld after %d tries: %s", url,
			    res->status, res->attempts, res->body) :
			    so_error(err, SO_EIO, "publish: %s: %s after %d "
			    "tries", url, curlerr[0] ? curlerr :
			    curl_easy_strerror(cc), res->attempts);
			break;
		}
		delay = collector_backoff(o->backoff, res->attempts);
		if (o->log != NULL)
			fprintf(o->log, "seqorch: publish: %s: %s; trying again "
			    "in %.1f s\n", url, cc == CURLE_OK ? res->body :
			    curl_easy_strerror(cc), delay);
		pause_for(delay);
	}
out:
	curl_slist_free_all(hdr);
	if (c != NULL)
		curl_easy_cleanup(c);
	free(url);
	return rc;
}
