// SPDX-License-Identifier: MIT
// An HTTP server through libmicrohttpd, for `jukebox web`. MHD_start_daemon is variadic, which
// Swift cannot call, and a request arrives in pieces (headers, then the body in chunks): this
// shim starts the daemon on a listening socket, gathers each request whole (the headers the web
// face reads, the body up to a limit, the peer's address) and hands it to one handler, which
// answers with a whole body or a stream (server-sent events) read on the connection's thread.
// libmicrohttpd ("libmicrohttpd.so.12") and libcrypt ("libcrypt.so.1") are loaded on first use
// (jb_web_start, the PIN's hash), not linked: the player is the same binary and never needs them.
#ifndef JUKEBOX_CWEB_H
#define JUKEBOX_CWEB_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>

typedef struct {
	const char *method;
	/// The path, percent-decoded by libmicrohttpd, without the query.
	const char *url;
	/// Header values, NULL when absent.
	const char *host;
	const char *origin;
	const char *content_type;
	const char *cookie;
	const char *csrf;
	/// The query argument `path` (percent-decoded by libmicrohttpd), or NULL.
	const char *query_path;
	/// The body, its first `body_limit` bytes (body_too_large set when more came).
	const char *body;
	size_t body_length;
	int body_too_large;
	/// The peer's address (sockaddr_in, sockaddr_in6 or sockaddr_un); a copy.
	struct sockaddr_storage peer;
	/// The connection's socket (-1 when unknown): only for jb_web_peer_closed.
	int fd;
	/// The query argument `q` (a search's text), and the If-None-Match header; NULL when absent.
	const char *query_text;
	const char *if_none_match;
	/// The query arguments `folder` and `name` (an upload's), and the Content-Length header; NULL when absent.
	const char *query_folder;
	const char *query_name;
	const char *content_length;
	/// The sink `jb_web_body_hooks.begin` gave for this request (its body went there, not to `body`), or NULL.
	void *sink;
	/// The query argument `from` (a page's first entry: /api/queue, /api/library), or NULL.
	const char *query_from;
} jb_web_request;

/// A request's body streamed instead of gathered (uploads: never a whole file in memory).
typedef struct {
	/// Called once a request's headers are in, before its body: a sink to take the body in chunks,
	/// or NULL to gather it as usual. Set `*answer_now` to answer at once without reading the body
	/// (the connection is closed after the answer).
	void *(*begin)(void *context, const jb_web_request *request, int *answer_now);
	/// The next bytes of the body: 0 to go on, -1 to answer at once (the rest is not read).
	int (*chunk)(void *sink, const char *data, size_t length);
	/// The request is over: `answered` 1 when the handler answered it and the answer went out
	/// whole, 0 when the client went away or the connection failed first. Frees the sink.
	void (*end)(void *sink, int answered);
} jb_web_body_hooks;

/// Reads the next bytes of a stream into `buffer` (at most `max`): their count, or -1 to end the
/// stream. Called on the connection's own thread, which it may block (bounded).
typedef long (*jb_web_stream_reader)(void *stream, char *buffer, size_t max);
typedef void (*jb_web_stream_free)(void *stream);

typedef struct jb_web_response jb_web_response;

/// The answer of the handler: fill `response` with the functions below before returning.
typedef void (*jb_web_handler)(void *context, const jb_web_request *request, jb_web_response *response);

void jb_web_response_status(jb_web_response *response, unsigned status);
/// Copies name and value; returns 0 when there is no room (32 headers).
int jb_web_response_header(jb_web_response *response, const char *name, const char *value);
/// Copies the body.
void jb_web_response_body(jb_web_response *response, const char *body, size_t length);
/// Makes the response a stream of unknown length (chunked): `reader` gives its bytes, `release`
/// frees `stream` when the connection ends.
void jb_web_response_stream(jb_web_response *response, void *stream, jb_web_stream_reader reader, jb_web_stream_free release);
/// Closes the connection after this response.
void jb_web_response_close(jb_web_response *response);

typedef struct jb_web_server jb_web_server;

/// A listening TCP socket on `host` (a numeric IPv4 or IPv6 address) and `port` (0: any free
/// port), SO_REUSEADDR, close-on-exec; -1 with `error` filled on failure.
int jb_web_listen(const char *host, unsigned port, char *error, size_t error_size);
/// The port a listening socket is bound to, 0 on error.
unsigned jb_web_bound_port(int fd);
/// The numeric address a listening socket is bound to (`0.0.0.0`, `::`, `127.0.0.1`…) into
/// `out`; 0 on success.
int jb_web_bound_host(int fd, char *out, size_t out_size);

/// Starts serving on the listening socket `fd` (it becomes the server's), a thread per connection,
/// at most `connection_limit` at once. NULL with `error` filled on failure ("libmicrohttpd.so.12
/// could not be loaded: …" without the library).
/// `hooks` (may be NULL; copied) stream the bodies the handler's `begin` asks for.
jb_web_server *jb_web_start(int fd, unsigned connection_limit, size_t body_limit, unsigned connection_timeout,
                            jb_web_handler handler, const jb_web_body_hooks *hooks, void *context, char *error, size_t error_size);
/// Stops accepting, waits for the connections' threads (their stream readers must return), frees.
void jb_web_stop(jb_web_server *server);


/// Whether the peer of the connection socket `fd` has closed it (a stream's reader asks while it
/// waits, so a page that went away frees its thread at once, not at the next write).
int jb_web_peer_closed(int fd);

/// NULL when libcrypt is loaded (it is, after this call, if it can be), else why it could not be.
const char *jb_web_crypt_problem(void);
/// Hashes `secret` with yescrypt (libcrypt's "$y$", a salt of 16 bytes from getrandom) into
/// `out` (a string like "$y$j9T$…"); 0 on success, -1 on failure (jb_web_crypt_problem says when it was libcrypt).
int jb_web_hash_secret(const char *secret, char *out, size_t out_size);
/// Whether `secret` hashes to `hash` (crypt_r with `hash` as its setting, compared in constant time).
int jb_web_check_secret(const char *secret, const char *hash);
/// Fills `buffer` with `length` random bytes from getrandom; 0 on success.
int jb_web_random(unsigned char *buffer, size_t length);

/// Moves `from` (in folder `from_dir`) to `to` (in `to_dir`) without ever replacing a file:
/// renameat2(RENAME_NOREPLACE), or link + unlink where the file system has no such rename.
/// 0, or -1 with errno (EEXIST when `to` is there).
int jb_web_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to);

#endif
