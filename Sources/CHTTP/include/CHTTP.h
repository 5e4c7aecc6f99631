// SPDX-License-Identifier: MIT
// One HTTP(S) transfer through libcurl, for the radio streams. libcurl's curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: this shim sets the options and runs the
// transfer, and hands headers and body to the caller's callbacks. libcurl itself ("libcurl.so.4")
// is loaded on the first transfer, not linked, so a player that plays no station never maps it.
#ifndef JUKEBOX_CHTTP_H
#define JUKEBOX_CHTTP_H

#include <stddef.h>

typedef struct {
	const char *url;
	/// Connecting (name lookup, TCP, TLS) may take this long.
	long connect_timeout_ms;
	/// No byte for this long ends the transfer (code CURLE_OPERATION_TIMEDOUT, "timed out: no data
	/// for N s"); before the first byte, connect_timeout_ms more.
	long stall_seconds;
	/// Once connected, a response's header lines must all have come within this long (else code
	/// CURLE_OPERATION_TIMEDOUT, "timed out: the server's headers took longer than N s"): a server
	/// that sends its headers a byte at a time is told from one that sends nothing. 0: stall_seconds.
	long header_seconds;
	/// Redirects followed, at most.
	long max_redirects;
	/// Bytes of header lines one response may send (counted from its status line); more ends the
	/// transfer with header_overflow set, so an endless header costs bounded memory and time. A
	/// single line libcurl itself refuses to hold (100 KiB, "Out of memory") sets it too.
	size_t max_header_bytes;
	/// Sent as `Icy-MetaData: 1` when nonzero. `Accept-Encoding: identity` is always sent.
	int want_icy_metadata;
	const char *user_agent;
	/// A PEM file of certificates to trust (CURLOPT_CAINFO), or NULL for libcurl's own bundle. It
	/// replaces only the bundle file; with it, CURLOPT_CAPATH is set to /etc/ssl/certs explicitly,
	/// so the system's certificates stay trusted whatever libcurl's build defaults are.
	const char *ca_file;
	/// Nonzero: asks for the body from this byte on (`Range: bytes=N-`, CURLOPT_RANGE). The server
	/// may answer 206 from there or ignore it and send the whole body with 200: the caller reads
	/// the status line and Content-Range (CURLOPT_RESUME_FROM would fail the transfer instead).
	long long range_from;
	/// With range_from: the validator (an ETag or a Last-Modified date) the range must still match
	/// (`If-Range: V`), so a changed file comes whole with 200 instead of a range of another file.
	/// NULL or empty: none. A value over 255 bytes or holding a control character is not sent.
	const char *if_range;
} jb_http_options;

typedef struct {
	void *context;
	/// A header line (without CR LF), status lines included (one per response of a redirect chain).
	void (*header)(void *context, const char *line, size_t length);
	/// Body bytes. Return `length` to go on, anything else to end the transfer (aborted = 1).
	size_t (*body)(void *context, const char *data, size_t length);
	/// Polled by libcurl about once a second and more often while data flows: nonzero ends the transfer.
	int (*should_stop)(void *context);
} jb_http_callbacks;

typedef struct {
	/// CURLcode of the transfer (0: the server ended it cleanly).
	int code;
	/// The last response's status (0 when none came).
	long status;
	/// The header cap was reached.
	int header_overflow;
	/// The body callback or should_stop ended the transfer.
	int aborted;
	/// libcurl's words for what went wrong ("" when nothing did).
	char error[256];
} jb_http_result;

/// Loads libcurl and runs curl_global_init, once per process (thread-safe; jb_http_fetch does it
/// first): NULL when libcurl is ready, else why not ("libcurl.so.4 could not be loaded: …").
const char *jb_http_global_init(void);

/// Runs one transfer on the calling thread until the server ends it, an error, a stop or an abort.
/// Without libcurl: code CURLE_FAILED_INIT (2) and error the reason it could not be loaded.
void jb_http_fetch(const jb_http_options *options, const jb_http_callbacks *callbacks, jb_http_result *result);

/// The version text of the libcurl in use ("libcurl/7.88.1 OpenSSL/3.0..."), or why it could not be loaded.
const char *jb_http_version(void);

/// Decrypts `length` bytes of AES-128-CBC with PKCS#7 padding (HLS `EXT-X-KEY:METHOD=AES-128`)
/// into `out` (room for `length` + 16 bytes) with OpenSSL's libcrypto ("libcrypto.so.3", the
/// TLS library libcurl already uses), loaded on the first call, not linked. Returns the
/// plaintext's length, or -1 with `error` filled (the library missing, a length that is not whole
/// blocks, padding that does not check out: a wrong key).
long jb_aes128_cbc_decrypt(const unsigned char key[16], const unsigned char iv[16], const unsigned char *in, size_t length,
                           unsigned char *out, char *error, size_t error_size);

#endif
