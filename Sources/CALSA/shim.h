// SPDX-License-Identifier: MIT
// One include so Swift sees libasound's whole public API.
#include <alsa/asoundlib.h>
