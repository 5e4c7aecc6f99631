// SPDX-License-Identifier: MIT
// hilkeys NAME: a USB card reader that types ids as a keyboard, made with uinput (the kernel's
// own input core and evdev, so the player opens, grabs and reads it as a real reader). Prints
// `ready /dev/input/eventN` once the device's node exists, then reads commands from stdin:
//   type ID   types ID (digits, A-F) and Enter as a reader does (press, release, a few ms
//             apart); answers `typed ID elsewhere N grab busy|free`: N is how many key events
//             a second reader of the same node (opened here, like a console's keyboard handler)
//             received within 0.3 s, busy that another program holds the device's grab
//             (EVIOCGRAB fails with EBUSY). A reader grabbed by the player: 0 and busy.
//   quit      (or end of input) removes the device.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int ui = -1;

static void emit(int type, int code, int value) {
    struct input_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = type;
    ev.code = code;
    ev.value = value;
    if (write(ui, &ev, sizeof ev) != (ssize_t)sizeof ev) { perror("hilkeys: write"); exit(1); }
}

static void pause_ms(int ms) {
    struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static int keycode(char c) {
    static const int digits[10] = { KEY_0, KEY_1, KEY_2, KEY_3, KEY_4, KEY_5, KEY_6, KEY_7, KEY_8, KEY_9 };
    static const int hex[6] = { KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F };
    if (c >= '0' && c <= '9') return digits[c - '0'];
    if (c >= 'A' && c <= 'F') return hex[c - 'A'];
    if (c >= 'a' && c <= 'f') return hex[c - 'a'];
    return -1;
}

static void press(int code) {
    emit(EV_KEY, code, 1);
    emit(EV_SYN, SYN_REPORT, 0);
    pause_ms(2);
    emit(EV_KEY, code, 0);
    emit(EV_SYN, SYN_REPORT, 0);
    pause_ms(2);
}

// The event node of the uinput device SYSNAME (inputN), waited for up to 10 s (udev makes it).
static int find_node(const char *sysname, char *node, size_t size) {
    char dir[128];
    snprintf(dir, sizeof dir, "/sys/devices/virtual/input/%s", sysname);
    for (int i = 0; i < 200; i++) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "event", 5) != 0) continue;
            snprintf(node, size, "/dev/input/%s", e->d_name);
            if (access(node, R_OK) == 0) { closedir(d); return 0; }
        }
        if (d) closedir(d);
        pause_ms(50);
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: hilkeys NAME\n"); return 2; }
    setvbuf(stdout, NULL, _IOLBF, 0);
    ui = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (ui < 0) { perror("hilkeys: /dev/uinput"); return 1; }
    ioctl(ui, UI_SET_EVBIT, EV_KEY);
    for (int k = KEY_ESC; k <= KEY_KPDOT; k++) ioctl(ui, UI_SET_KEYBIT, k);
    ioctl(ui, UI_SET_KEYBIT, KEY_KPENTER);
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    // A common reader's ids (Sycreader / "RFID Technology"); the player matches the name.
    setup.id.bustype = BUS_USB;
    setup.id.vendor = 0xffff;
    setup.id.product = 0x0035;
    setup.id.version = 0x0111;
    strncpy(setup.name, argv[1], UINPUT_MAX_NAME_SIZE - 1);
    if (ioctl(ui, UI_DEV_SETUP, &setup) != 0 || ioctl(ui, UI_DEV_CREATE) != 0) { perror("hilkeys: uinput setup"); return 1; }
    char sysname[64] = "", node[300] = "";
    if (ioctl(ui, UI_GET_SYSNAME(sizeof sysname), sysname) < 0 || find_node(sysname, node, sizeof node) != 0) {
        fprintf(stderr, "hilkeys: no event node for %s\n", sysname);
        return 1;
    }
    int other = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (other < 0) { perror(node); return 1; }
    printf("ready %s\n", node);

    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (strcmp(line, "quit") == 0) break;
        if (strncmp(line, "type ", 5) != 0) { printf("error: unknown command '%s'\n", line); continue; }
        // What reached the other reader before this id does not count.
        struct input_event ev;
        while (read(other, &ev, sizeof ev) == (ssize_t)sizeof ev) {}
        const char *id = line + 5;
        int bad = 0;
        for (const char *c = id; *c; c++) if (keycode(*c) < 0) bad = 1;
        if (bad || !*id) { printf("error: not an id: '%s'\n", id); continue; }
        for (const char *c = id; *c; c++) press(keycode(*c));
        press(KEY_ENTER);
        int seen = 0;
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            int left = 300 - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
            if (left <= 0) break;
            struct pollfd p = { .fd = other, .events = POLLIN };
            if (poll(&p, 1, left) <= 0) continue;
            while (read(other, &ev, sizeof ev) == (ssize_t)sizeof ev) if (ev.type == EV_KEY) seen++;
        }
        const char *grab = "free";
        if (ioctl(other, EVIOCGRAB, 1) == 0) ioctl(other, EVIOCGRAB, 0);
        else grab = errno == EBUSY ? "busy" : strerror(errno);
        printf("typed %s elsewhere %d grab %s\n", id, seen, grab);
    }
    ioctl(ui, UI_DEV_DESTROY);
    return 0;
}
