// SPDX-License-Identifier: MIT
// hilsndbuf.so: an LD_PRELOAD shim for bt-loop's A2DP source (bluealsa), needed only because
// btvirt's emulated controller has a 192-byte ACL MTU.
//
// bluealsa shrinks its A2DP socket's send buffer to 3 x the write MTU (SO_SNDBUF 3063: the
// kernel makes it 6126 bytes). Through a 192-byte ACL MTU the kernel splits one 965-byte media
// packet into 6 fragments, each an skb of ~1.3 KB truesize, allocated before any is sent: the
// sixth finds the buffer full and write() fails with EAGAIN, while poll() (half the buffer free)
// says POLLOUT, so the source spins forever and sends nothing. Real controllers (ACL MTU ~1021)
// take the packet in one or two fragments. This shim raises any SO_SNDBUF request to 64 KiB;
// everything else goes through unchanged.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>

int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
    static int (*real)(int, int, int, const void *, socklen_t);
    if (!real) real = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
    if (level == SOL_SOCKET && name == SO_SNDBUF) {
        int size = 65536;
        return real(fd, level, name, &size, sizeof size);
    }
    return real(fd, level, name, value, length);
}
