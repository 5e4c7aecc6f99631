// SPDX-License-Identifier: MIT
// hilgpio PULLFILE LEVEL...: writes each LEVEL (pull-up / pull-down) to a gpio-sim line's `pull`
// attribute as fast as it can, from one open file: contact bounce. Prints the microseconds from the
// first write to the last, so a test can tell a real bounce (well inside the debounce window) from
// a stimulus the scheduler stretched. Exit 1 when a write fails.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: hilgpio PULLFILE LEVEL...\n"); return 2; }
    int fd = open(argv[1], O_WRONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    long long first = now_us();
    for (int i = 2; i < argc; i++) {
        if (pwrite(fd, argv[i], strlen(argv[i]), 0) != (ssize_t)strlen(argv[i])) { perror(argv[i]); return 1; }
    }
    printf("%lld\n", now_us() - first);
    return 0;
}
