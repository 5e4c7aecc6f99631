// SPDX-License-Identifier: MIT
// TagLib's C binding lives at <taglib/tag_c.h> on Debian 12 (libtagc0-dev) and 13 (libtag-c-dev).
#include <taglib/tag_c.h>
