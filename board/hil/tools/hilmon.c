// SPDX-License-Identifier: MIT
// hilmon SOCKET SECONDS COMMAND...: runs QEMU human-monitor commands (device_add, device_del…)
// through the monitor's unix socket: waits for the `(qemu) ` prompt, sends each COMMAND and
// prints what the monitor answered before its next prompt (escape sequences and the echo of the
// command removed). Exit 1 when the socket or a prompt does not come within SECONDS.
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *prompt = "(qemu) ";
static char buf[1 << 16];
static size_t len;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// Reads until the prompt appears after `from`, or `until` passes. Returns its offset or -1.
static long wait_prompt(int fd, size_t from, double until) {
    for (;;) {
        buf[len] = 0;
        char *p = from < len ? strstr(buf + from, prompt) : NULL;
        if (p) return p - buf;
        double left = until - now();
        if (left <= 0 || len == sizeof buf - 1) return -1;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0) continue;
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) return -1;
        len += n;
    }
}

// Prints buf[from, to) without ANSI escape sequences and CRs.
static void print_plain(size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        if (buf[i] == 0x1b) {
            i++;
            if (i < to && buf[i] == '[') while (i + 1 < to && !(buf[i + 1] >= '@' && buf[i + 1] <= '~')) i++;
            i++;
            continue;
        }
        if (buf[i] != '\r') putchar(buf[i]);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: hilmon SOCKET SECONDS COMMAND...\n"); return 2; }
    double deadline = now() + atof(argv[2]);
    int fd = -1;
    while (fd < 0) {
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            close(fd);
            fd = -1;
            if (now() > deadline) { fprintf(stderr, "hilmon: cannot connect to %s\n", argv[1]); return 1; }
            usleep(100000);
        }
    }
    if (wait_prompt(fd, 0, deadline) < 0) { fprintf(stderr, "hilmon: no monitor prompt on %s\n", argv[1]); return 1; }
    for (int i = 3; i < argc; i++) {
        size_t from = len;
        dprintf(fd, "%s\n", argv[i]);
        long next = wait_prompt(fd, from, deadline);
        if (next < 0) { fprintf(stderr, "hilmon: no prompt after '%s'\n", argv[i]); return 1; }
        // The monitor echoes the command line first: its answer starts after the echo's newline.
        char *nl = memchr(buf + from, '\n', (size_t)next - from);
        print_plain(nl ? (size_t)(nl - buf) + 1 : from, (size_t)next);
    }
    return 0;
}
