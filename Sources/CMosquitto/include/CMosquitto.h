// SPDX-License-Identifier: MIT
// libmosquitto for the MQTT face, loaded on first use ("libmosquitto.so.1", dlopen) rather than
// linked, so a player without MQTT never maps it and what it pulls in (issue 33). Each
// jb_mosquitto_X is libmosquitto's mosquitto_X, same arguments and result; mosquitto.h stays for
// the types and constants (MOSQ_ERR_*, struct mosquitto_message). Call mosquitto_X directly and
// the link fails: the library is not linked.
#ifndef JUKEBOX_CMOSQUITTO_H
#define JUKEBOX_CMOSQUITTO_H

#include <mosquitto.h>
#include <stdbool.h>

/// Loads libmosquitto and runs mosquitto_lib_init, once per process (thread-safe): NULL when it
/// is ready, else why not ("libmosquitto.so.1 could not be loaded: …"). Call it before the first
/// client: without the library, jb_mosquitto_new returns NULL and the strings say the reason.
const char *jb_mosquitto_load(void);

struct mosquitto *jb_mosquitto_new(const char *id, bool clean_session, void *obj);
const char *jb_mosquitto_strerror(int mosq_errno);
const char *jb_mosquitto_connack_string(int connack_code);

// The rest take a client from jb_mosquitto_new, so the library is there.
void jb_mosquitto_destroy(struct mosquitto *mosq);
int jb_mosquitto_threaded_set(struct mosquitto *mosq, bool threaded);
int jb_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int jb_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int jb_mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                         const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
int jb_mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive);
int jb_mosquitto_reconnect_async(struct mosquitto *mosq);
int jb_mosquitto_disconnect(struct mosquitto *mosq);
int jb_mosquitto_loop(struct mosquitto *mosq, int timeout, int max_packets);
int jb_mosquitto_socket(struct mosquitto *mosq);
int jb_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos,
                         bool retain);
int jb_mosquitto_subscribe(struct mosquitto *mosq, int *mid, const char *sub, int qos);
void jb_mosquitto_connect_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int));
void jb_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int));
void jb_mosquitto_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int));
void jb_mosquitto_message_callback_set(struct mosquitto *mosq,
                                       void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *));
void jb_mosquitto_subscribe_callback_set(struct mosquitto *mosq,
                                         void (*on_subscribe)(struct mosquitto *, void *, int, int, const int *));

#endif
