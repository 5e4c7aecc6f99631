// SPDX-License-Identifier: MIT
// libexpat (libexpat1-dev), the podcast feeds' XML parser. Its API is plain C (no variadics), so
// Swift calls it directly; expat >= 2.4 bounds entity amplification (billion laughs) by itself.
#include <expat.h>
