// SPDX-License-Identifier: MIT
// Loading a shared library on first use (dlopen, then dlsym of each function a shim calls), for
// the C shims whose libraries only some runs need: libcurl (radio streams), libmosquitto (MQTT),
// libmicrohttpd and libcrypt (the web face). Linked, the dynamic loader would map each of them
// and everything they pull in (OpenSSL, Kerberos, LDAP, GnuTLS…) into every process, a FLAC-only
// player's too: several MiB of its resident memory (issue 33).
#ifndef JUKEBOX_CLIBRARYLOADER_H
#define JUKEBOX_CLIBRARYLOADER_H

#include <stddef.h>

/// One function to resolve: its name, and where its address goes (a function pointer's storage,
/// cast to void **: POSIX guarantees a function pointer and a void * have one representation).
typedef struct {
	const char *name;
	void **slot;
} jb_library_symbol;

/// Opens `soname` (RTLD_NOW | RTLD_LOCAL: the library's symbols stay its own) and resolves every
/// symbol into its slot. 0 when all are there; else -1, the library closed again, the slots left
/// NULL and `error` filled ("libcurl.so.4 could not be loaded: <dlerror>", or the symbol missing).
/// Not thread-safe by itself: call it from a pthread_once. With JUKEBOX_TEST_MISSING_LIBRARY=`soname`
/// in the environment (a test knob) it fails as if the library were not installed.
int jb_library_load(const char *soname, const jb_library_symbol *symbols, size_t count, char *error, size_t error_size);

#endif
