// SPDX-License-Identifier: MIT
// libebur128 (EBU R128 loudness): measures untagged files off the loop (LoudnessScanner).
#include <ebur128.h>
