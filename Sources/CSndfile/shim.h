// SPDX-License-Identifier: MIT
#include <sndfile.h>
