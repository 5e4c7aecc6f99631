// SPDX-License-Identifier: MIT
#include <mpg123.h>
