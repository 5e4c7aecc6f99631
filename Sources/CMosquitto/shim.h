// SPDX-License-Identifier: MIT
#include <mosquitto.h>
