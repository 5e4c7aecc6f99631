// SPDX-License-Identifier: MIT
// hilctl SOCKET COMMAND...: sends one line to jukebox's control socket and prints the reply lines
// up to the final `ok …`/`error: …`. The HIL scenarios poll the status many times a second; this
// starts in a millisecond under TCG where a Swift process takes far longer. Exit 1 on no reply.
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: hilctl SOCKET COMMAND...\n"); return 2; }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
    char line[2048] = "";
    for (int i = 2; i < argc; i++) {
        strncat(line, argv[i], sizeof line - strlen(line) - 2);
        if (i + 1 < argc) strncat(line, " ", sizeof line - strlen(line) - 2);
    }
    strcat(line, "\n");
    if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) return 1;
    char buf[65536];
    size_t len = 0, start = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) return 1;
        len += n;
        for (size_t i = start; i < len; i++) {
            if (buf[i] != '\n') continue;
            fwrite(buf + start, 1, i + 1 - start, stdout);
            int ok = strncmp(buf + start, "ok", 2) == 0, error = strncmp(buf + start, "error:", 6) == 0;
            start = i + 1;
            if (ok || error) return ok ? 0 : 1;
        }
        if (start == len) len = start = 0;
        if (len == sizeof buf - 1) return 1;
    }
}
