// SPDX-License-Identifier: MIT
// The jukebox test PCM is an ALSA external plugin (libJukeboxTestPCM.so), loaded by libasound
// through `pcm_type.jukeboxtest { lib "/abs/path/libJukeboxTestPCM.so" }`; nothing links to it.
// Its configuration, control-file format and log format are described in jukeboxtest.c.
#ifndef JUKEBOX_TEST_PCM_H
#define JUKEBOX_TEST_PCM_H

/// The plugin's protocol version as written to its log ("jukeboxtest 1").
#define JUKEBOX_TEST_PCM_VERSION 1

#endif
