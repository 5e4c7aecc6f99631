// SPDX-License-Identifier: MIT
// Linux headers that Swift's Glibc module does not include.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
// adjtimex: whether the kernel holds the wall clock synchronised (JukeboxService/WallClock.swift).
#include <sys/timex.h>
// malloc_trim: the MPD library gives back the tag reader's freed arena after an update.
#include <malloc.h>
#include <signal.h>
#include <termios.h>
#include <sys/ioctl.h>
// openpty: the serial console's tests drive it through a pty.
#include <pty.h>
// I2C through /dev/i2c-N (JukeboxBoard/I2CBus.swift).
#include <linux/i2c.h>
#include <linux/i2c-dev.h>
// SPI through /dev/spidevB.C (JukeboxBoard/SPIDevice.swift).
#include <linux/spi/spidev.h>
#include <string.h>
// mallopt (JukeboxService/Allocator.swift).
#include <malloc.h>

// ioctl is variadic in C; these fixed signatures import the same way on every Swift version.
static inline int clinux_ioctl_long(int fd, unsigned long request, unsigned long arg) {
    return ioctl(fd, request, arg);
}
static inline int clinux_ioctl_ptr(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}

// SPI_IOC_MESSAGE(n) and SPI_IOC_WR_* are function-like macros Swift cannot import: one full-duplex
// transfer of `length` bytes (tx and rx may be the same buffer), and the mode/word/speed setup.
static inline int clinux_spi_transfer(int fd, const void *tx, void *rx, unsigned length, unsigned speed_hz) {
    struct spi_ioc_transfer t;
    memset(&t, 0, sizeof t);
    t.tx_buf = (unsigned long)tx;
    t.rx_buf = (unsigned long)rx;
    t.len = length;
    t.speed_hz = speed_hz;
    t.bits_per_word = 8;
    return ioctl(fd, SPI_IOC_MESSAGE(1), &t);
}
static inline int clinux_spi_setup(int fd, unsigned char mode, unsigned char bits, unsigned speed_hz) {
    if (ioctl(fd, SPI_IOC_WR_MODE, &mode) < 0) return -1;
    if (ioctl(fd, SPI_IOC_WR_BITS_PER_WORD, &bits) < 0) return -1;
    return ioctl(fd, SPI_IOC_WR_MAX_SPEED_HZ, &speed_hz);
}

// The loaded objects' read-only segments, for JukeboxService/ColdPages.swift. dl_iterate_phdr is
// declared only under _GNU_SOURCE, so it is reached here under a name of its own, with the leading
// fields of struct dl_phdr_info that glibc has filled since 2.2.4.
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <unistd.h>

struct clinux_phdr_info {
    ElfW(Addr) addr;
    const char *name;
    const ElfW(Phdr) *phdr;
    ElfW(Half) phnum;
};
extern int clinux_dl_iterate_phdr(int (*callback)(struct clinux_phdr_info *, size_t, void *), void *data)
    __asm__("dl_iterate_phdr");

/// Called with the whole pages [start, end) of one segment; its return value is ignored.
typedef void (*clinux_segment_fn)(uintptr_t start, uintptr_t end, void *context);

struct clinux_segments {
    clinux_segment_fn fn;
    void *context;
    uintptr_t page;
};

static inline int clinux_segments_of(struct clinux_phdr_info *info, size_t size, void *data) {
    struct clinux_segments *s = (struct clinux_segments *)data;
    (void)size;
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    for (ElfW(Half) i = 0; i < info->phnum; i++) {
        const ElfW(Phdr) *p = &info->phdr[i];
        if (p->p_type == PT_LOAD && vdso != 0 && info->addr + p->p_vaddr == vdso) return 0;
        if (p->p_type != PT_DYNAMIC) continue;
        // Text relocations: the loader writes into read-only segments (while it loads the object).
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->addr + p->p_vaddr); d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_TEXTREL) return 0;
            if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)) return 0;
        }
    }
    for (ElfW(Half) i = 0; i < info->phnum; i++) {
        const ElfW(Phdr) *p = &info->phdr[i];
        if (p->p_type != PT_LOAD || (p->p_flags & PF_W)) continue;
        // Only the pages wholly inside the part backed by the file.
        uintptr_t from = info->addr + p->p_vaddr;
        uintptr_t to = from + (p->p_filesz < p->p_memsz ? p->p_filesz : p->p_memsz);
        from = (from + s->page - 1) / s->page * s->page;
        to = to / s->page * s->page;
        if (to > from) s->fn(from, to, s->context);
    }
    return 0;
}

/// Calls `fn` with every read-only (non-writable) loadable segment of every loaded object except
/// the vDSO and objects with text relocations. The dynamic loader holds its lock meanwhile, so no
/// object is unmapped (by a dlclose on another thread) while `fn` runs; `fn` must not dlopen.
static inline void clinux_each_readonly_segment(clinux_segment_fn fn, void *context) {
    struct clinux_segments s = { fn, context, (uintptr_t)sysconf(_SC_PAGESIZE) };
    clinux_dl_iterate_phdr(clinux_segments_of, &s);
}

// pidfd_open(2) (Linux 5.3): `jukebox source` watches the program it speaks for (shairport-sync)
// through a pidfd, which polls readable when that process ends and never names a reused pid.
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
static inline int clinux_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
// pidfd_send_signal(2) (Linux 5.1): a signal to the process the pidfd names, never to a process
// that took its pid after it was collected (ESRCH then).
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
static inline int clinux_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, (void *)0, 0);
}

// Leaving the process without exit(3)'s handlers (JukeboxService/LeaveProcess.swift). LeakSanitizer
// checks at exit(3), so an -sanitize=address build asks for its check here: weak, the symbol is
// NULL in every other build.
#include <stdio.h>
#include <unistd.h>
extern void __lsan_do_leak_check(void) __attribute__((weak));
static inline void clinux_leave_process(int code) {
    fflush(NULL);
    if (__lsan_do_leak_check)
        __lsan_do_leak_check();
    _exit(code);
}
