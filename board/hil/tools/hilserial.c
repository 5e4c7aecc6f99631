// SPDX-License-Identifier: MIT
// hilserial SOCKET SECONDS LINE...: talks to jukebox's serial console through QEMU's socket
// chardev for the guest's second UART. Handshake first: bytes sent before the console is up are
// lost, so it sends CR until the prompt `jukebox> ` answers (or SECONDS pass). Then each LINE is
// typed with CR, and everything up to the next prompt is printed (CRs removed). Exit 1 on timeout.
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *prompt = "jukebox> ";
static char buf[1 << 20];
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
        if (left <= 0) return -1;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0) continue;
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) return -1;
        len += n;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: hilserial SOCKET SECONDS LINE...\n"); return 2; }
    double deadline = now() + atof(argv[2]);
    int fd = -1;
    while (fd < 0) {
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            close(fd);
            fd = -1;
            if (now() > deadline) { fprintf(stderr, "hilserial: cannot connect to %s\n", argv[1]); return 1; }
            usleep(100000);
        }
    }
    long at = -1;
    while (at < 0) {
        if (now() > deadline) {
            buf[len] = 0;
            fprintf(stderr, "hilserial: no prompt within %s s; seen: %s\n", argv[2], buf);
            return 1;
        }
        if (write(fd, "\r", 1) != 1) return 1;
        double step = now() + 1;
        at = wait_prompt(fd, 0, step < deadline ? step : deadline);
    }
    // Prompts for CRs that crossed on the wire still arrive: let them in before the first command.
    wait_prompt(fd, len, now() + 0.5);
    for (int i = 3; i < argc; i++) {
        size_t from = len;
        dprintf(fd, "%s\r", argv[i]);
        long next = wait_prompt(fd, from, now() + 15);
        buf[len] = 0;
        for (size_t j = from; j < (next < 0 ? len : (size_t)next); j++) if (buf[j] != '\r') putchar(buf[j]);
        if (next < 0) { fprintf(stderr, "hilserial: no prompt after '%s'\n", argv[i]); return 1; }
    }
    return 0;
}
