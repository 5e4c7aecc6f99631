// SPDX-License-Identifier: MIT
#include "CHTTP.h"

#include "CLibraryLoader.h"
#include <curl/curl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

// libcurl is loaded on first use, not linked: linked, it and what it pulls in (OpenSSL, Kerberos,
// LDAP, libssh2, nghttp2…) are mapped into every player, +6.4 MiB resident for a box that never
// plays a station (issue 33). curl.h stays for the types and constants.
#define JB_LIBCURL "libcurl.so.4"

// Typed by the header's own declarations, so a pointer cannot disagree with the function it holds.
static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_version) *version;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} curl;

/// Why libcurl could not be loaded, "" when it was.
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	const jb_library_symbol symbols[] = {
		{ "curl_global_init", (void **)&curl.global_init },
		{ "curl_version", (void **)&curl.version },
		{ "curl_easy_init", (void **)&curl.easy_init },
		{ "curl_easy_setopt", (void **)&curl.easy_setopt },
		{ "curl_easy_getinfo", (void **)&curl.easy_getinfo },
		{ "curl_easy_perform", (void **)&curl.easy_perform },
		{ "curl_easy_strerror", (void **)&curl.easy_strerror },
		{ "curl_easy_cleanup", (void **)&curl.easy_cleanup },
		{ "curl_slist_append", (void **)&curl.slist_append },
		{ "curl_slist_free_all", (void **)&curl.slist_free_all },
	};
	if (jb_library_load(JB_LIBCURL, symbols, sizeof symbols / sizeof symbols[0], load_error, sizeof load_error) == 0)
		curl.global_init(CURL_GLOBAL_DEFAULT);
}

const char *jb_http_global_init(void)
{
	pthread_once(&once, load);
	return load_error[0] ? load_error : NULL;
}

const char *jb_http_version(void)
{
	const char *problem = jb_http_global_init();
	return problem ? problem : curl.version();
}

typedef struct {
	const jb_http_options *options;
	const jb_http_callbacks *callbacks;
	jb_http_result *result;
	size_t header_bytes;
	/// CLOCK_MONOTONIC seconds: when the transfer began, when its last byte (header or body) came.
	double started, last_byte;
	/// The stall watchdog ended the transfer.
	int stalled;
	/// The header watchdog ended the transfer (connected, the headers not complete in time).
	int headers_slow;
	/// A response's headers are complete (its blank line came), or its body began.
	int headers_done;
	int body_started;
	CURL *curl;
} transfer;

static double monotonic_seconds(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static size_t on_header(char *data, size_t size, size_t count, void *user)
{
	transfer *t = user;
	size_t length = size * count;
	t->last_byte = monotonic_seconds();
	// A status line starts a new response (a redirect's next hop): its headers count afresh.
	if (length >= 5 && (memcmp(data, "HTTP/", 5) == 0 || memcmp(data, "ICY ", 4) == 0)) {
		t->header_bytes = 0;
		t->headers_done = 0;
	}
	if (length <= 2 && (length == 0 || data[0] == '\r' || data[0] == '\n'))
		t->headers_done = 1;
	t->header_bytes += length;
	if (t->header_bytes > t->options->max_header_bytes) {
		t->result->header_overflow = 1;
		return 0;
	}
	size_t trimmed = length;
	while (trimmed > 0 && (data[trimmed - 1] == '\n' || data[trimmed - 1] == '\r'))
		trimmed--;
	if (t->callbacks->header)
		t->callbacks->header(t->callbacks->context, data, trimmed);
	return length;
}

static size_t on_body(char *data, size_t size, size_t count, void *user)
{
	transfer *t = user;
	size_t length = size * count;
	t->body_started = 1;
	t->headers_done = 1;
	size_t taken = t->callbacks->body(t->callbacks->context, data, length);
	// After the callback: it may wait for room in a full ring, which is no silence of the server's.
	if (length > 0)
		t->last_byte = monotonic_seconds();
	if (taken != length)
		t->result->aborted = 1;
	return taken;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	transfer *t = user;
	if (t->callbacks->should_stop && t->callbacks->should_stop(t->callbacks->context)) {
		t->result->aborted = 1;
		return 1;
	}
	// The stall watchdog, here rather than CURLOPT_LOW_SPEED_TIME: libcurl averages the speed over
	// the last 5 s, so after a burst a silent server was cut only 5 s past the stall time (a 4 s
	// silence with a 1 s stall time went unnoticed). Before the first byte, connecting may take its
	// own timeout on top.
	// The header watchdog: on_header sees only whole lines, so headers trickled a byte at a time
	// looked like silence ("no data") to the stall watchdog. Once connected, the headers get
	// header_seconds in all.
	long header_seconds = t->options->header_seconds > 0 ? t->options->header_seconds : t->options->stall_seconds;
	if (!t->headers_done && header_seconds > 0) {
		curl_off_t connected_us = 0;
		if (curl.easy_getinfo(t->curl, CURLINFO_CONNECT_TIME_T, &connected_us) == CURLE_OK && connected_us > 0) {
			double waited = monotonic_seconds() - t->started - (double)connected_us / 1e6;
			if (waited >= (double)header_seconds) {
				t->headers_slow = 1;
				return 1;
			}
			return 0;
		}
	}
	if (t->options->stall_seconds > 0) {
		double now = monotonic_seconds();
		double limit = (double)t->options->stall_seconds;
		double since = t->last_byte > 0 ? now - t->last_byte : now - t->started - (double)t->options->connect_timeout_ms / 1000.0;
		if (since >= limit) {
			t->stalled = 1;
			return 1;
		}
	}
	return 0;
}

void jb_http_fetch(const jb_http_options *options, const jb_http_callbacks *callbacks, jb_http_result *result)
{
	memset(result, 0, sizeof *result);
	const char *problem = jb_http_global_init();
	if (problem) {
		result->code = CURLE_FAILED_INIT;
		snprintf(result->error, sizeof result->error, "%s", problem);
		return;
	}
	CURL *handle = curl.easy_init();
	if (!handle) {
		result->code = CURLE_FAILED_INIT;
		snprintf(result->error, sizeof result->error, "cannot start libcurl");
		return;
	}
	transfer t = { options, callbacks, result, 0, monotonic_seconds(), 0, 0, 0, 0, 0, handle };
	struct curl_slist *headers = NULL;
	// Shoutcast v1 answers "ICY 200 OK": without the alias libcurl takes it for HTTP/0.9 and refuses it.
	struct curl_slist *aliases = curl.slist_append(NULL, "ICY 200");
	if (options->want_icy_metadata)
		headers = curl.slist_append(headers, "Icy-MetaData: 1");
	// An audio stream is not compressed: a server that gzips anyway is refused by its
	// Content-Encoding (HTTPStream), not decoded as garbage.
	headers = curl.slist_append(headers, "Accept-Encoding: identity");
	if (options->range_from > 0 && options->if_range && options->if_range[0]) {
		// Never a header split by what a server once said: no control character, bounded.
		char line[300];
		size_t n = strlen(options->if_range);
		int clean = n <= 255;
		for (size_t i = 0; clean && i < n; i++)
			clean = (unsigned char)options->if_range[i] >= 0x20 && options->if_range[i] != 0x7f;
		if (clean) {
			snprintf(line, sizeof line, "If-Range: %s", options->if_range);
			headers = curl.slist_append(headers, line);
		}
	}
	curl.easy_setopt(handle, CURLOPT_URL, options->url);
	// Threads: no signals (libcurl's SIGALRM name-lookup timeout is process-wide).
	curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
	curl.easy_setopt(handle, CURLOPT_MAXREDIRS, options->max_redirects);
	curl.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, options->connect_timeout_ms);
	// A 404 or 500 is an error with its status, not a body to decode.
	curl.easy_setopt(handle, CURLOPT_FAILONERROR, 1L);
	curl.easy_setopt(handle, CURLOPT_HTTP09_ALLOWED, 0L);
	if (aliases)
		curl.easy_setopt(handle, CURLOPT_HTTP200ALIASES, aliases);
	curl.easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
	if (options->user_agent)
		curl.easy_setopt(handle, CURLOPT_USERAGENT, options->user_agent);
	if (options->ca_file && options->ca_file[0]) {
		// CURLOPT_CAINFO replaces the bundle file; the system's folder is named too, so public
		// stations stay trusted whatever CA path this libcurl was built with (or without).
		curl.easy_setopt(handle, CURLOPT_CAINFO, options->ca_file);
		curl.easy_setopt(handle, CURLOPT_CAPATH, "/etc/ssl/certs");
	}
	if (headers)
		curl.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
	char range[32];
	if (options->range_from > 0) {
		snprintf(range, sizeof range, "%lld-", options->range_from);
		curl.easy_setopt(handle, CURLOPT_RANGE, range);
	}
	curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
	curl.easy_setopt(handle, CURLOPT_HEADERDATA, &t);
	curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(handle, CURLOPT_WRITEDATA, &t);
	curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl.easy_setopt(handle, CURLOPT_XFERINFODATA, &t);
	curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
	curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, result->error);
	result->error[0] = 0;

	CURLcode code = curl.easy_perform(handle);
	result->code = (int)code;
	long status = 0;
	curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
	result->status = status;
	if (t.headers_slow) {
		// Retried like a stall: a slow network may send the headers in time next time.
		result->code = CURLE_OPERATION_TIMEDOUT;
		long limit = options->header_seconds > 0 ? options->header_seconds : options->stall_seconds;
		snprintf(result->error, sizeof result->error, "timed out: the server's headers took longer than %ld s", limit);
	} else if (t.stalled) {
		// A network failure, retried like libcurl's own timeouts.
		result->code = CURLE_OPERATION_TIMEDOUT;
		snprintf(result->error, sizeof result->error, "timed out: no data for %ld s", options->stall_seconds);
	} else if (!t.body_started && (code == CURLE_OUT_OF_MEMORY || (int)code == 100 /* CURLE_TOO_LARGE, libcurl 8.6 */)) {
		// libcurl refuses one header line over CURL_MAX_HTTP_HEADER (100 KiB) before on_header
		// sees it: an endless line, said as the header cap rather than "Out of memory".
		result->header_overflow = 1;
	}
	if (code != CURLE_OK && result->error[0] == 0)
		snprintf(result->error, sizeof result->error, "%s", curl.easy_strerror(code));
	// The error buffer belongs to this call's result: libcurl must not write to it after the handle is gone.
	curl.easy_cleanup(handle);
	curl.slist_free_all(headers);
	curl.slist_free_all(aliases);
}

// AES-128 for HLS segments, through libcrypto, loaded on first use like libcurl (which has loaded
// it already on a box that plays a station over https). Declared here rather than from
// <openssl/evp.h>: five functions of OpenSSL 3's stable ABI, and no -dev package to build.
#define JB_LIBCRYPTO "libcrypto.so.3"

typedef struct evp_cipher_ctx_st jb_evp_cipher_ctx;
typedef struct evp_cipher_st jb_evp_cipher;

static struct {
	jb_evp_cipher_ctx *(*ctx_new)(void);
	void (*ctx_free)(jb_evp_cipher_ctx *);
	const jb_evp_cipher *(*aes_128_cbc)(void);
	int (*decrypt_init)(jb_evp_cipher_ctx *, const jb_evp_cipher *, void *, const unsigned char *, const unsigned char *);
	int (*decrypt_update)(jb_evp_cipher_ctx *, unsigned char *, int *, const unsigned char *, int);
	int (*decrypt_final)(jb_evp_cipher_ctx *, unsigned char *, int *);
} crypto;

static char crypto_error[512];
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void load_crypto(void)
{
	const jb_library_symbol symbols[] = {
		{ "EVP_CIPHER_CTX_new", (void **)&crypto.ctx_new },
		{ "EVP_CIPHER_CTX_free", (void **)&crypto.ctx_free },
		{ "EVP_aes_128_cbc", (void **)&crypto.aes_128_cbc },
		{ "EVP_DecryptInit_ex", (void **)&crypto.decrypt_init },
		{ "EVP_DecryptUpdate", (void **)&crypto.decrypt_update },
		{ "EVP_DecryptFinal_ex", (void **)&crypto.decrypt_final },
	};
	jb_library_load(JB_LIBCRYPTO, symbols, sizeof symbols / sizeof symbols[0], crypto_error, sizeof crypto_error);
}

long jb_aes128_cbc_decrypt(const unsigned char key[16], const unsigned char iv[16], const unsigned char *in, size_t length,
                           unsigned char *out, char *error, size_t error_size)
{
	pthread_once(&crypto_once, load_crypto);
	if (crypto_error[0]) {
		snprintf(error, error_size, "%s", crypto_error);
		return -1;
	}
	if (length == 0 || length % 16 != 0 || length > INT_MAX - 16) {
		snprintf(error, error_size, "%zu bytes are not whole AES-128 blocks", length);
		return -1;
	}
	jb_evp_cipher_ctx *ctx = crypto.ctx_new();
	if (ctx == NULL) {
		snprintf(error, error_size, "libcrypto could not start a cipher");
		return -1;
	}
	int part = 0, last = 0;
	int ok = crypto.decrypt_init(ctx, crypto.aes_128_cbc(), NULL, key, iv) == 1
		&& crypto.decrypt_update(ctx, out, &part, in, (int)length) == 1
		&& crypto.decrypt_final(ctx, out + part, &last) == 1;
	crypto.ctx_free(ctx);
	if (!ok) {
		snprintf(error, error_size, "the decrypted segment's padding is wrong (not its key?)");
		return -1;
	}
	return (long)part + last;
}
