// SPDX-License-Identifier: MIT
// libasound prints its own "ALSA lib file:line:(function) ..." lines to stderr through a variadic
// handler Swift cannot implement. This shim formats each message and hands it to a plain callback.
#ifndef JUKEBOX_ALSA_MESSAGES_H
#define JUKEBOX_ALSA_MESSAGES_H

/// Receives one formatted libasound message (no trailing newline), on the thread that called ALSA.
typedef void (*jukebox_alsa_sink)(const char *message);

/// Routes libasound's messages to `sink` (NULL restores libasound's own stderr printing).
void jukebox_alsa_route_messages(jukebox_alsa_sink sink);

#endif
