// SPDX-License-Identifier: MIT
// Linux headers that Swift's Glibc module does not include.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <termios.h>
#include <sys/ioctl.h>
