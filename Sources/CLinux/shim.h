// SPDX-License-Identifier: MIT
// Linux headers that Swift's Glibc module does not include.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <termios.h>
#include <sys/ioctl.h>
// openpty: the serial console's tests drive it through a pty.
#include <pty.h>
// I2C through /dev/i2c-N (JukeboxBoard/I2CBus.swift).
#include <linux/i2c.h>
#include <linux/i2c-dev.h>

// ioctl is variadic in C; these fixed signatures import the same way on every Swift version.
static inline int clinux_ioctl_long(int fd, unsigned long request, unsigned long arg) {
    return ioctl(fd, request, arg);
}
static inline int clinux_ioctl_ptr(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}
