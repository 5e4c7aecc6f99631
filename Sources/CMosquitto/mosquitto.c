// SPDX-License-Identifier: MIT
#include "CMosquitto.h"

#include "CLibraryLoader.h"
#include <pthread.h>
#include <stddef.h>

#define JB_LIBMOSQUITTO "libmosquitto.so.1"

typedef void (*status_callback)(struct mosquitto *, void *, int);
typedef void (*message_callback)(struct mosquitto *, void *, const struct mosquitto_message *);
typedef void (*subscribe_callback)(struct mosquitto *, void *, int, int, const int *);
typedef int (*password_callback)(char *buf, int size, int rwflag, void *userdata);

// Typed by the header's own declarations, so a pointer cannot disagree with the function it holds.
static struct {
	__typeof__(mosquitto_lib_init) *lib_init;
	__typeof__(mosquitto_new) *new_;
	__typeof__(mosquitto_strerror) *strerror;
	__typeof__(mosquitto_connack_string) *connack_string;
	__typeof__(mosquitto_destroy) *destroy;
	__typeof__(mosquitto_threaded_set) *threaded_set;
	__typeof__(mosquitto_will_set) *will_set;
	__typeof__(mosquitto_username_pw_set) *username_pw_set;
	__typeof__(mosquitto_tls_set) *tls_set;
	__typeof__(mosquitto_connect_async) *connect_async;
	__typeof__(mosquitto_reconnect_async) *reconnect_async;
	__typeof__(mosquitto_disconnect) *disconnect;
	__typeof__(mosquitto_loop) *loop;
	__typeof__(mosquitto_socket) *socket;
	__typeof__(mosquitto_publish) *publish;
	__typeof__(mosquitto_subscribe) *subscribe;
	__typeof__(mosquitto_connect_callback_set) *connect_callback_set;
	__typeof__(mosquitto_disconnect_callback_set) *disconnect_callback_set;
	__typeof__(mosquitto_publish_callback_set) *publish_callback_set;
	__typeof__(mosquitto_message_callback_set) *message_callback_set;
	__typeof__(mosquitto_subscribe_callback_set) *subscribe_callback_set;
} mosq;

/// Why libmosquitto could not be loaded, "" when it was.
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	const jb_library_symbol symbols[] = {
		{ "mosquitto_lib_init", (void **)&mosq.lib_init },
		{ "mosquitto_new", (void **)&mosq.new_ },
		{ "mosquitto_strerror", (void **)&mosq.strerror },
		{ "mosquitto_connack_string", (void **)&mosq.connack_string },
		{ "mosquitto_destroy", (void **)&mosq.destroy },
		{ "mosquitto_threaded_set", (void **)&mosq.threaded_set },
		{ "mosquitto_will_set", (void **)&mosq.will_set },
		{ "mosquitto_username_pw_set", (void **)&mosq.username_pw_set },
		{ "mosquitto_tls_set", (void **)&mosq.tls_set },
		{ "mosquitto_connect_async", (void **)&mosq.connect_async },
		{ "mosquitto_reconnect_async", (void **)&mosq.reconnect_async },
		{ "mosquitto_disconnect", (void **)&mosq.disconnect },
		{ "mosquitto_loop", (void **)&mosq.loop },
		{ "mosquitto_socket", (void **)&mosq.socket },
		{ "mosquitto_publish", (void **)&mosq.publish },
		{ "mosquitto_subscribe", (void **)&mosq.subscribe },
		{ "mosquitto_connect_callback_set", (void **)&mosq.connect_callback_set },
		{ "mosquitto_disconnect_callback_set", (void **)&mosq.disconnect_callback_set },
		{ "mosquitto_publish_callback_set", (void **)&mosq.publish_callback_set },
		{ "mosquitto_message_callback_set", (void **)&mosq.message_callback_set },
		{ "mosquitto_subscribe_callback_set", (void **)&mosq.subscribe_callback_set },
	};
	if (jb_library_load(JB_LIBMOSQUITTO, symbols, sizeof symbols / sizeof symbols[0], load_error, sizeof load_error) == 0)
		mosq.lib_init();
}

const char *jb_mosquitto_load(void)
{
	pthread_once(&once, load);
	return load_error[0] ? load_error : NULL;
}

struct mosquitto *jb_mosquitto_new(const char *id, bool clean_session, void *obj)
{
	return jb_mosquitto_load() ? NULL : mosq.new_(id, clean_session, obj);
}

const char *jb_mosquitto_strerror(int mosq_errno)
{
	const char *problem = jb_mosquitto_load();
	return problem ? problem : mosq.strerror(mosq_errno);
}

const char *jb_mosquitto_connack_string(int connack_code)
{
	const char *problem = jb_mosquitto_load();
	return problem ? problem : mosq.connack_string(connack_code);
}

void jb_mosquitto_destroy(struct mosquitto *m) { mosq.destroy(m); }
int jb_mosquitto_threaded_set(struct mosquitto *m, bool threaded) { return mosq.threaded_set(m, threaded); }

int jb_mosquitto_will_set(struct mosquitto *m, const char *topic, int payloadlen, const void *payload, int qos, bool retain)
{
	return mosq.will_set(m, topic, payloadlen, payload, qos, retain);
}

int jb_mosquitto_username_pw_set(struct mosquitto *m, const char *username, const char *password)
{
	return mosq.username_pw_set(m, username, password);
}

int jb_mosquitto_tls_set(struct mosquitto *m, const char *cafile, const char *capath, const char *certfile,
                         const char *keyfile, password_callback pw_callback)
{
	return mosq.tls_set(m, cafile, capath, certfile, keyfile, pw_callback);
}

int jb_mosquitto_connect_async(struct mosquitto *m, const char *host, int port, int keepalive)
{
	return mosq.connect_async(m, host, port, keepalive);
}

int jb_mosquitto_reconnect_async(struct mosquitto *m) { return mosq.reconnect_async(m); }
int jb_mosquitto_disconnect(struct mosquitto *m) { return mosq.disconnect(m); }
int jb_mosquitto_loop(struct mosquitto *m, int timeout, int max_packets) { return mosq.loop(m, timeout, max_packets); }
int jb_mosquitto_socket(struct mosquitto *m) { return mosq.socket(m); }

int jb_mosquitto_publish(struct mosquitto *m, int *mid, const char *topic, int payloadlen, const void *payload, int qos,
                         bool retain)
{
	return mosq.publish(m, mid, topic, payloadlen, payload, qos, retain);
}

int jb_mosquitto_subscribe(struct mosquitto *m, int *mid, const char *sub, int qos) { return mosq.subscribe(m, mid, sub, qos); }

void jb_mosquitto_connect_callback_set(struct mosquitto *m, status_callback on_connect)
{
	mosq.connect_callback_set(m, on_connect);
}

void jb_mosquitto_disconnect_callback_set(struct mosquitto *m, status_callback on_disconnect)
{
	mosq.disconnect_callback_set(m, on_disconnect);
}

void jb_mosquitto_publish_callback_set(struct mosquitto *m, status_callback on_publish)
{
	mosq.publish_callback_set(m, on_publish);
}

void jb_mosquitto_message_callback_set(struct mosquitto *m, message_callback on_message)
{
	mosq.message_callback_set(m, on_message);
}

void jb_mosquitto_subscribe_callback_set(struct mosquitto *m, subscribe_callback on_subscribe)
{
	mosq.subscribe_callback_set(m, on_subscribe);
}
