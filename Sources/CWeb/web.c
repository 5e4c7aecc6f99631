// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include "CWeb.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include <crypt.h>
#include <pthread.h>

#include "CLibraryLoader.h"

// Only API present in libmicrohttpd 0.9.75 (Debian 12) and 1.0 (Debian 13). MHD_create_response_
// from_buffer is deprecated in 1.0 (still there); its replacements are not in 0.9.75.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// libmicrohttpd and libcrypt are loaded on first use, not linked: linked, libmicrohttpd and its
// GnuTLS are mapped into every process of the one binary, the player's too (+2.9 MiB, issue 33).
// Their headers stay for the types and constants.
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

static struct {
	__typeof__(crypt_gensalt_rn) *gensalt_rn;
	__typeof__(crypt_r) *r;
} libcrypt;

/// Why each library could not be loaded, "" when it was.
static char mhd_error[512], crypt_error[512];
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT, crypt_once = PTHREAD_ONCE_INIT;

static void load_mhd(void) {
	const jb_library_symbol symbols[] = {
		{"MHD_start_daemon", (void **)&mhd.start_daemon},
		{"MHD_stop_daemon", (void **)&mhd.stop_daemon},
		{"MHD_lookup_connection_value", (void **)&mhd.lookup_connection_value},
		{"MHD_get_connection_info", (void **)&mhd.get_connection_info},
		{"MHD_create_response_from_callback", (void **)&mhd.create_response_from_callback},
		{"MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer},
		{"MHD_add_response_header", (void **)&mhd.add_response_header},
		{"MHD_queue_response", (void **)&mhd.queue_response},
		{"MHD_destroy_response", (void **)&mhd.destroy_response},
	};
	jb_library_load("libmicrohttpd.so.12", symbols, sizeof symbols / sizeof symbols[0], mhd_error, sizeof mhd_error);
}

static void load_crypt(void) {
	const jb_library_symbol symbols[] = {
		{"crypt_gensalt_rn", (void **)&libcrypt.gensalt_rn},
		{"crypt_r", (void **)&libcrypt.r},
	};
	jb_library_load("libcrypt.so.1", symbols, sizeof symbols / sizeof symbols[0], crypt_error, sizeof crypt_error);
}

const char *jb_web_crypt_problem(void) {
	pthread_once(&crypt_once, load_crypt);
	return crypt_error[0] ? crypt_error : NULL;
}

#define JB_WEB_MAX_HEADERS 32

struct jb_web_response {
	unsigned status;
	char *names[JB_WEB_MAX_HEADERS];
	char *values[JB_WEB_MAX_HEADERS];
	int header_count;
	char *body;
	size_t body_length;
	void *stream;
	jb_web_stream_reader reader;
	jb_web_stream_free release;
	int close;
};

struct jb_web_server {
	struct MHD_Daemon *daemon;
	jb_web_handler handler;
	void *context;
	size_t body_limit;
	jb_web_body_hooks hooks;
};

typedef struct {
	char *body;
	size_t length;
	int too_large;
	/// The body's sink (jb_web_body_hooks), NULL when the body is gathered.
	void *sink;
	/// The handler has answered (queued a response).
	int answered;
} pending_request;

void jb_web_response_status(jb_web_response *response, unsigned status) { response->status = status; }

int jb_web_response_header(jb_web_response *response, const char *name, const char *value) {
	if (response->header_count >= JB_WEB_MAX_HEADERS) return 0;
	response->names[response->header_count] = strdup(name);
	response->values[response->header_count] = strdup(value);
	response->header_count++;
	return 1;
}

void jb_web_response_body(jb_web_response *response, const char *body, size_t length) {
	free(response->body);
	response->body = malloc(length ? length : 1);
	if (response->body) {
		memcpy(response->body, body, length);
		response->body_length = length;
	}
}

void jb_web_response_stream(jb_web_response *response, void *stream, jb_web_stream_reader reader, jb_web_stream_free release) {
	response->stream = stream;
	response->reader = reader;
	response->release = release;
}

void jb_web_response_close(jb_web_response *response) { response->close = 1; }

int jb_web_listen(const char *host, unsigned port, char *error, size_t error_size) {
	struct sockaddr_storage address;
	memset(&address, 0, sizeof address);
	socklen_t length;
	int family;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		family = AF_INET;
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		length = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		family = AF_INET6;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		length = sizeof *v6;
	} else {
		snprintf(error, error_size, "not a numeric IPv4 or IPv6 address: %s", host);
		return -1;
	}
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(error, error_size, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&address, length) != 0 || listen(fd, 32) != 0) {
		snprintf(error, error_size, "cannot listen on %s port %u: %s", host, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

unsigned jb_web_bound_port(int fd) {
	struct sockaddr_storage address;
	socklen_t length = sizeof address;
	if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return 0;
	if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
	if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
	return 0;
}

int jb_web_bound_host(int fd, char *out, size_t out_size) {
	struct sockaddr_storage address;
	socklen_t length = sizeof address;
	if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
	if (address.ss_family == AF_INET)
		return inet_ntop(AF_INET, &((struct sockaddr_in *)&address)->sin_addr, out, (socklen_t)out_size) ? 0 : -1;
	if (address.ss_family == AF_INET6)
		return inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&address)->sin6_addr, out, (socklen_t)out_size) ? 0 : -1;
	return -1;
}

static void free_response(jb_web_response *r) {
	for (int i = 0; i < r->header_count; i++) {
		free(r->names[i]);
		free(r->values[i]);
	}
	free(r->body);
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max) {
	(void)pos;
	jb_web_response *r = cls;
	long n = r->reader(r->stream, buf, max);
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void free_stream(void *cls) {
	jb_web_response *r = cls;
	if (r->release) r->release(r->stream);
	free(r);
}

static const char *header(struct MHD_Connection *connection, const char *name) {
	return mhd.lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

static void fill_request(struct MHD_Connection *connection, const char *url, const char *method, jb_web_request *request) {
	memset(request, 0, sizeof *request);
	request->method = method;
	request->url = url;
	request->host = header(connection, "Host");
	request->origin = header(connection, "Origin");
	request->content_type = header(connection, "Content-Type");
	request->cookie = header(connection, "Cookie");
	request->csrf = header(connection, "X-CSRF-Token");
	request->content_length = header(connection, "Content-Length");
	request->query_path = mhd.lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "path");
	request->query_folder = mhd.lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "folder");
	request->query_name = mhd.lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "name");
	request->query_text = mhd.lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "q");
	request->if_none_match = header(connection, "If-None-Match");
	request->query_from = mhd.lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "from");
	request->body = "";
	const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (info && info->client_addr) {
		const struct sockaddr *peer = info->client_addr;
		size_t size = peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		            : peer->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr);
		memcpy(&request->peer, peer, size);
	} else {
		request->peer.ss_family = AF_UNSPEC;
	}
	const union MHD_ConnectionInfo *socket_info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
	request->fd = socket_info ? socket_info->connect_fd : -1;
}

/// Calls the handler on the request and queues its answer.
static enum MHD_Result answer(jb_web_server *server, struct MHD_Connection *connection, const char *url, const char *method,
                              pending_request *pending) {
	jb_web_request request;
	fill_request(connection, url, method, &request);
	request.body = pending->body ? pending->body : "";
	request.body_length = pending->length;
	request.body_too_large = pending->too_large;
	request.sink = pending->sink;
	pending->answered = 1;

	jb_web_response *r = calloc(1, sizeof *r);
	if (r == NULL) return MHD_NO;
	r->status = 500;
	server->handler(server->context, &request, r);

	struct MHD_Response *response;
	if (r->reader) {
		response = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, r, free_stream);
	} else {
		response = mhd.create_response_from_buffer(r->body_length, r->body ? r->body : "", MHD_RESPMEM_MUST_COPY);
	}
	if (response == NULL) {
		if (r->reader && r->release) r->release(r->stream);
		free_response(r);
		free(r);
		return MHD_NO;
	}
	for (int i = 0; i < r->header_count; i++) mhd.add_response_header(response, r->names[i], r->values[i]);
	if (r->close) mhd.add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
	unsigned status = r->status;
	// A stream's response owns `r` (free_stream); a whole one is done with it.
	free_response(r);
	memset(r->names, 0, sizeof r->names);
	r->header_count = 0;
	r->body = NULL;
	if (!r->reader) free(r);
	enum MHD_Result queued = mhd.queue_response(connection, status, response);
	mhd.destroy_response(response);
	return queued;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
	(void)version;
	jb_web_server *server = cls;
	pending_request *pending = *con_cls;
	if (pending == NULL) {
		pending = calloc(1, sizeof *pending);
		if (pending == NULL) return MHD_NO;
		*con_cls = pending;
		if (server->hooks.begin) {
			jb_web_request request;
			fill_request(connection, url, method, &request);
			int now = 0;
			pending->sink = server->hooks.begin(server->context, &request, &now);
			// Answered before the body is read: libmicrohttpd then closes the connection.
			if (now) return answer(server, connection, url, method, pending);
		}
		return MHD_YES;
	}
	if (pending->answered) {
		// Answered early: what still comes is dropped.
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (pending->sink) {
			int stop = server->hooks.chunk(pending->sink, upload_data, *upload_data_size);
			*upload_data_size = 0;
			if (stop != 0) return answer(server, connection, url, method, pending);
			return MHD_YES;
		}
		size_t room = server->body_limit > pending->length ? server->body_limit - pending->length : 0;
		size_t take = *upload_data_size < room ? *upload_data_size : room;
		if (take < *upload_data_size) pending->too_large = 1;
		if (take > 0) {
			char *grown = realloc(pending->body, pending->length + take + 1);
			if (grown == NULL) return MHD_NO;
			pending->body = grown;
			memcpy(pending->body + pending->length, upload_data, take);
			pending->length += take;
			pending->body[pending->length] = 0;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return answer(server, connection, url, method, pending);
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls, enum MHD_RequestTerminationCode code) {
	(void)connection;
	jb_web_server *server = cls;
	pending_request *pending = *con_cls;
	if (pending) {
		if (pending->sink && server->hooks.end)
			server->hooks.end(pending->sink, pending->answered && code == MHD_REQUEST_TERMINATED_COMPLETED_OK);
		free(pending->body);
		free(pending);
		*con_cls = NULL;
	}
}

jb_web_server *jb_web_start(int fd, unsigned connection_limit, size_t body_limit, unsigned connection_timeout,
                            jb_web_handler handler, const jb_web_body_hooks *hooks, void *context, char *error, size_t error_size) {
	pthread_once(&mhd_once, load_mhd);
	if (mhd_error[0]) {
		snprintf(error, error_size, "%s", mhd_error);
		return NULL;
	}
	jb_web_server *server = calloc(1, sizeof *server);
	if (server == NULL) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	server->handler = handler;
	server->context = context;
	server->body_limit = body_limit;
	if (hooks) server->hooks = *hooks;
	// A thread per connection: a stream's reader may block (bounded) waiting for the player's next
	// event, with no suspend/resume bookkeeping, and the connection limit bounds the threads.
	server->daemon = mhd.start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
	                                  0, NULL, NULL, access_handler, server,
	                                  MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
	                                  MHD_OPTION_CONNECTION_LIMIT, connection_limit,
	                                  MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
	                                  MHD_OPTION_NOTIFY_COMPLETED, completed, server,
	                                  MHD_OPTION_END);
	if (server->daemon == NULL) {
		snprintf(error, error_size, "libmicrohttpd could not start");
		free(server);
		return NULL;
	}
	return server;
}

void jb_web_stop(jb_web_server *server) {
	if (server == NULL) return;
	mhd.stop_daemon(server->daemon);
	free(server);
}

#include <poll.h>

int jb_web_peer_closed(int fd) {
	if (fd < 0) return 0;
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	if (poll(&p, 1, 0) <= 0) return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) return 1;
	char byte;
	ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

#include <sys/random.h>

int jb_web_random(unsigned char *buffer, size_t length) {
	size_t got = 0;
	while (got < length) {
		ssize_t n = getrandom(buffer + got, length - got, 0);
		if (n < 0) {
			if (errno == EINTR) continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

int jb_web_hash_secret(const char *secret, char *out, size_t out_size) {
	if (jb_web_crypt_problem()) return -1;
	unsigned char salt[16];
	if (jb_web_random(salt, sizeof salt) != 0) return -1;
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	if (libcrypt.gensalt_rn("$y$", 0, (const char *)salt, sizeof salt, setting, sizeof setting) == NULL) return -1;
	struct crypt_data *data = calloc(1, sizeof *data);
	if (data == NULL) return -1;
	const char *hash = libcrypt.r(secret, setting, data);
	int rc = -1;
	if (hash && hash[0] == '$' && strlen(hash) < out_size) {
		strcpy(out, hash);
		rc = 0;
	}
	explicit_bzero(data, sizeof *data);
	free(data);
	return rc;
}

int jb_web_check_secret(const char *secret, const char *hash) {
	if (hash == NULL || hash[0] != '$' || jb_web_crypt_problem()) return 0;
	struct crypt_data *data = calloc(1, sizeof *data);
	if (data == NULL) return 0;
	const char *computed = libcrypt.r(secret, hash, data);
	int same = 0;
	if (computed && computed[0] == '$') {
		size_t a = strlen(computed), b = strlen(hash);
		unsigned char diff = a != b;
		for (size_t i = 0; i < a && i < b; i++) diff |= (unsigned char)(computed[i] ^ hash[i]);
		same = diff == 0;
	}
	explicit_bzero(data, sizeof *data);
	free(data);
	return same;
}

#include <stdio.h>
#include <fcntl.h>

int jb_web_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to) {
	if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0) return 0;
	if (errno != EINVAL && errno != ENOSYS) return -1;
	// No RENAME_NOREPLACE here (some file systems): a hard link fails with EEXIST just the same.
	if (linkat(from_dir, from, to_dir, to, 0) != 0) return -1;
	unlinkat(from_dir, from, 0);
	return 0;
}
