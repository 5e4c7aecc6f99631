// SPDX-License-Identifier: MIT
#include "CAlsaMessages.h"

#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

static jukebox_alsa_sink current_sink;

/* Same content as libasound's default handler (the function and the message, the error text
 * when there is one), without the "ALSA lib file:line" prefix: the log says where it came from. */
static void handler(const char *file, int line, const char *function, int err, const char *fmt, ...)
{
	(void)file;
	(void)line;
	jukebox_alsa_sink sink = current_sink;
	if (!sink)
		return;
	char text[512];
	int used = snprintf(text, sizeof text, "alsa-lib %s: ", function ? function : "?");
	if (used < 0 || (size_t)used >= sizeof text)
		used = 0;
	va_list args;
	va_start(args, fmt);
	int more = vsnprintf(text + used, sizeof text - (size_t)used, fmt, args);
	va_end(args);
	if (more > 0)
		used += more;
	if ((size_t)used >= sizeof text)
		used = (int)sizeof text - 1;
	if (err)
		snprintf(text + used, sizeof text - (size_t)used, ": %s", snd_strerror(err));
	sink(text);
}

void jukebox_alsa_route_messages(jukebox_alsa_sink sink)
{
	current_sink = sink;
	snd_lib_error_set_handler(sink ? handler : NULL);
}
