// SPDX-License-Identifier: MIT
// The C ABI over soundtouch::SoundTouch (include/CSoundTouch.h). No C++ exception crosses into
// Swift: SoundTouch throws std::runtime_error for settings it refuses, caught here.
#include "CSoundTouch.h"

#include <cfenv>
#include <new>
#include <soundtouch/SoundTouch.h>

// Debian's libSoundTouch is linked with crtfastmath: loading it sets flush-to-zero and
// denormals-are-zero (MXCSR 0x1f80 -> 0x9fc0 on amd64) for the whole process, and every thread
// started later inherits it. That changed numbers far from SoundTouch (a saved position of 5e-324
// read back as nil, PlaceFileTests) and would make a float decode differ from the reference
// decoders' in the quietest samples. The library's initialisers run before this object's, so this
// one gives the process its default floating-point environment back. SoundTouch does not need it:
// flushing changes only denormals, and saves time on them.
__attribute__((constructor)) static void jb_stretch_default_fp_environment() { std::fesetenv(FE_DFL_ENV); }

struct jb_stretch {
	soundtouch::SoundTouch touch;
};

static_assert(sizeof(soundtouch::SAMPLETYPE) == sizeof(float), "SoundTouch built with integer samples");

extern "C" jb_stretch *jb_stretch_create(int rate, int channels) {
	if (rate <= 0 || channels < 1 || channels > 16) return nullptr;
	jb_stretch *s = new (std::nothrow) jb_stretch;
	if (s == nullptr) return nullptr;
	try {
		s->touch.setSampleRate(static_cast<unsigned>(rate));
		s->touch.setChannels(static_cast<unsigned>(channels));
		// Speech and music alike: the defaults (sequence/seek window chosen by the tempo), and
		// the quick seek off, for quality over the few per cent of CPU it saves.
		s->touch.setSetting(SETTING_USE_QUICKSEEK, 0);
		s->touch.setSetting(SETTING_USE_AA_FILTER, 1);
		s->touch.setTempo(1.0);
	} catch (...) {
		delete s;
		return nullptr;
	}
	return s;
}

extern "C" void jb_stretch_destroy(jb_stretch *s) { delete s; }

extern "C" int jb_stretch_set_tempo(jb_stretch *s, double tempo) {
	if (!(tempo > 0.0 && tempo <= 10.0)) return -1;
	try {
		s->touch.setTempo(tempo);
	} catch (...) {
		return -1;
	}
	return 0;
}

extern "C" int jb_stretch_put(jb_stretch *s, const float *samples, unsigned frames) {
	try {
		s->touch.putSamples(samples, frames);
	} catch (...) {
		return -1;
	}
	return 0;
}

extern "C" unsigned jb_stretch_receive(jb_stretch *s, float *out, unsigned max_frames) {
	try {
		return s->touch.receiveSamples(out, max_frames);
	} catch (...) {
		return 0;
	}
}

extern "C" unsigned jb_stretch_ready(const jb_stretch *s) { return s->touch.numSamples(); }

extern "C" void jb_stretch_flush(jb_stretch *s) {
	try {
		s->touch.flush();
	} catch (...) {
	}
}

extern "C" void jb_stretch_clear(jb_stretch *s) { s->touch.clear(); }
