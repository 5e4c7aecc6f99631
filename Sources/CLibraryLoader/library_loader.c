// SPDX-License-Identifier: MIT
#include "CLibraryLoader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jb_library_load(const char *soname, const jb_library_symbol *symbols, size_t count, char *error, size_t error_size)
{
	// Test knob (docs/TESTING.md): JUKEBOX_TEST_MISSING_LIBRARY=SONAME opens a name that is not
	// there instead, so a test sees the player without that library (dlopen's own refusal).
	char missing[256];
	const char *name = soname;
	const char *refused = getenv("JUKEBOX_TEST_MISSING_LIBRARY");
	if (refused && strcmp(refused, soname) == 0) {
		snprintf(missing, sizeof missing, "%s-missing", soname);
		name = missing;
	}
	void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		const char *why = dlerror();
		snprintf(error, error_size, "%s could not be loaded: %s", soname, why ? why : "unknown error");
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		dlerror();
		void *address = dlsym(handle, symbols[i].name);
		if (address == NULL) {
			const char *why = dlerror();
			snprintf(error, error_size, "%s could not be loaded: no %s (%s)", soname, symbols[i].name,
			         why ? why : "a null symbol");
			for (size_t j = 0; j < count; j++)
				*symbols[j].slot = NULL;
			dlclose(handle);
			return -1;
		}
		*symbols[i].slot = address;
	}
	// Kept open for the life of the process: the shim's function pointers point into it.
	return 0;
}
