// SPDX-License-Identifier: MIT
#include <neaacdec.h>
