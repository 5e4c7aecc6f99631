// SPDX-License-Identifier: MIT
// libogg's page sync and libvorbis's packet decoder (not vorbisfile: it seeks and scans its source).
#include <ogg/ogg.h>
#include <vorbis/codec.h>
