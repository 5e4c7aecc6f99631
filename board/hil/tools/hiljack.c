// SPDX-License-Identifier: MIT
// hiljack CARD add|set NAME 0|1: a headphone jack on a kernel sound card without one (snd-aloop),
// through the control device's own ioctls: `add` makes a user boolean control NAME on interface
// CARD, as codec drivers name their jacks ("Headphone Jack"), with the value given; `set` writes it,
// as a driver's jack interrupt would (the kernel notifies every subscribed reader). CARD is the
// card's number or id (/proc/asound/ID). Exit 1 with the errno on failure.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <sound/asound.h>

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[2], "add") != 0 && strcmp(argv[2], "set") != 0)) {
        fprintf(stderr, "usage: hiljack CARD add|set NAME 0|1\n");
        return 2;
    }
    char path[PATH_MAX], link[PATH_MAX];
    int card;
    if (sscanf(argv[1], "%d", &card) != 1) {
        snprintf(path, sizeof path, "/proc/asound/%s", argv[1]);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0) { fprintf(stderr, "hiljack: no card %s\n", argv[1]); return 1; }
        link[n] = 0;
        if (sscanf(link, "card%d", &card) != 1) { fprintf(stderr, "hiljack: %s -> %s\n", path, link); return 1; }
    }
    snprintf(path, sizeof path, "/dev/snd/controlC%d", card);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { fprintf(stderr, "hiljack: %s: %s\n", path, strerror(errno)); return 1; }
    struct snd_ctl_elem_id id;
    memset(&id, 0, sizeof id);
    id.iface = SNDRV_CTL_ELEM_IFACE_CARD;
    snprintf((char *)id.name, sizeof id.name, "%s", argv[3]);
    if (strcmp(argv[2], "add") == 0) {
        struct snd_ctl_elem_info info;
        memset(&info, 0, sizeof info);
        info.id = id;
        info.type = SNDRV_CTL_ELEM_TYPE_BOOLEAN;
        info.access = SNDRV_CTL_ELEM_ACCESS_READWRITE;
        info.count = 1;
        info.value.integer.min = 0;
        info.value.integer.max = 1;
        info.value.integer.step = 1;
        if (ioctl(fd, SNDRV_CTL_IOCTL_ELEM_ADD, &info) < 0) { fprintf(stderr, "hiljack: add %s: %s\n", argv[3], strerror(errno)); return 1; }
    }
    struct snd_ctl_elem_value value;
    memset(&value, 0, sizeof value);
    value.id = id;
    value.value.integer.value[0] = atoi(argv[4]) ? 1 : 0;
    if (ioctl(fd, SNDRV_CTL_IOCTL_ELEM_WRITE, &value) < 0) { fprintf(stderr, "hiljack: set %s: %s\n", argv[3], strerror(errno)); return 1; }
    close(fd);
    return 0;
}
