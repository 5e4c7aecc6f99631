// SPDX-License-Identifier: MIT
// evdev: the record layout and the ioctls whose numbers are function-like macros Swift cannot call.
#define _GNU_SOURCE 1
#include "CInput.h"

#include <errno.h>
#include <linux/input.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

size_t jb_input_event_size(void) { return sizeof(struct input_event); }

void jb_input_decode(const void *bytes, jb_input_record *out) {
    struct input_event event;
    memcpy(&event, bytes, sizeof event);
    // input_event_sec/usec name the right fields for both layouts (timeval, or __sec/__usec on
    // 32-bit userspace with 64-bit time_t).
    out->sec = (int64_t)event.input_event_sec;
    out->usec = (int64_t)event.input_event_usec;
    out->type = event.type;
    out->code = event.code;
    out->value = event.value;
}

void jb_input_encode(const jb_input_record *in, void *bytes) {
    struct input_event event;
    memset(&event, 0, sizeof event);
    event.input_event_sec = in->sec;
    event.input_event_usec = in->usec;
    event.type = in->type;
    event.code = in->code;
    event.value = in->value;
    memcpy(bytes, &event, sizeof event);
}

int jb_input_get_name(int fd, char *buf, size_t len) {
    if (len == 0) { errno = EINVAL; return -1; }
    memset(buf, 0, len);
    int n = ioctl(fd, EVIOCGNAME(len - 1), buf);
    return n < 0 ? -1 : (int)strlen(buf);
}

int jb_input_has_key(int fd, unsigned code) {
    unsigned char bits[KEY_MAX / 8 + 1];
    if (code > KEY_MAX) return 0;
    memset(bits, 0, sizeof bits);
    if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof bits), bits) < 0) return -1;
    return (bits[code / 8] >> (code % 8)) & 1;
}

int jb_input_use_monotonic_clock(int fd) {
    int clock = CLOCK_MONOTONIC;
    return ioctl(fd, EVIOCSCLOCKID, &clock) < 0 ? -1 : 0;
}

int jb_input_grab(int fd, int on) {
    return ioctl(fd, EVIOCGRAB, (void *)(long)on) < 0 ? -1 : 0;
}
