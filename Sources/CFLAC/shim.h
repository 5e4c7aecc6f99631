// SPDX-License-Identifier: MIT
#include <FLAC/stream_decoder.h>
