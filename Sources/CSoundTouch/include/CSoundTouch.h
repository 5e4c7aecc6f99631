// SPDX-License-Identifier: MIT
// Tempo change with the pitch kept (playback speed for spoken word): libSoundTouch's C++ class
// `soundtouch::SoundTouch` behind a small C ABI Swift can call. Samples are interleaved 32-bit
// floats (Debian builds SoundTouch with float samples); counts are in frames.
#ifndef JUKEBOX_CSOUNDTOUCH_H
#define JUKEBOX_CSOUNDTOUCH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jb_stretch jb_stretch;

/// A stretcher for `channels` (1...16) at `rate` Hz; NULL when SoundTouch refuses them or memory
/// runs out. Tempo starts at 1.
jb_stretch *jb_stretch_create(int rate, int channels);
void jb_stretch_destroy(jb_stretch *s);
/// Sets the tempo (1.25: plays in 1/1.25 of the time, same pitch). Returns 0, or -1 when refused.
int jb_stretch_set_tempo(jb_stretch *s, double tempo);
/// Hands `frames` interleaved frames in. Returns 0, or -1 when SoundTouch failed (nothing kept).
int jb_stretch_put(jb_stretch *s, const float *samples, unsigned frames);
/// Takes up to `max_frames` processed frames out into `out`; returns how many (0: none ready).
unsigned jb_stretch_receive(jb_stretch *s, float *out, unsigned max_frames);
/// Processed frames ready to be taken.
unsigned jb_stretch_ready(const jb_stretch *s);
/// Pushes what is held inside out (padding with silence): call once at the end of the input.
void jb_stretch_flush(jb_stretch *s);
/// Drops everything held, input and output.
void jb_stretch_clear(jb_stretch *s);

#ifdef __cplusplus
}
#endif

#endif
