// SPDX-License-Identifier: MIT
// Buttons and keys, seen from Swift: a uniform API over libgpiod 1.6 and 2.x (gpio.c; the version is
// chosen when gpio.c is compiled) and the evdev ioctls and record layout Swift cannot reach (evdev.c).
// Nothing from <gpiod.h> or <linux/*.h> leaks through this header.
#ifndef JUKEBOX_CINPUT_H
#define JUKEBOX_CINPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------- GPIO (gpio.c)

/// Most lines one request holds (libgpiod v1's bulk limit; plenty for buttons and encoders).
#define JB_GPIO_MAX_LINES 64

/// Bias of an input line. AS_IS leaves what firmware or the device tree set.
enum { JB_GPIO_BIAS_AS_IS = 0, JB_GPIO_BIAS_DISABLED = 1, JB_GPIO_BIAS_PULL_UP = 2, JB_GPIO_BIAS_PULL_DOWN = 3 };

typedef struct jb_gpio_chip jb_gpio_chip;
typedef struct jb_gpio_request jb_gpio_request;

typedef struct jb_gpio_chip_info {
    char name[64];       ///< "gpiochip0"
    char label[64];      ///< "pinctrl-bcm2711"
    unsigned num_lines;
} jb_gpio_chip_info;

typedef struct jb_gpio_line_info {
    char name[64];       ///< "GPIO17", or "" when the line has no name
    char consumer[64];   ///< who requested it, or ""
    bool used;           ///< requested by someone (a process, a kernel driver, a hog)
} jb_gpio_line_info;

typedef struct jb_gpio_line_config {
    unsigned offset;
    int bias;            ///< JB_GPIO_BIAS_*
    bool active_low;     ///< applied by this file to every edge read (the line is requested active-high)
} jb_gpio_line_config;

/// One edge. `index` is the line's position in the request; `rising` is after active-low (true: the
/// line became active); `timestamp_ns` is the kernel's: CLOCK_MONOTONIC with libgpiod 2 and with
/// libgpiod 1.6 on Linux >= 5.7; CLOCK_REALTIME with libgpiod 1.6 on older kernels.
typedef struct jb_gpio_edge {
    unsigned index;
    bool rising;
    uint64_t timestamp_ns;
} jb_gpio_edge;

/// 1 or 2: the libgpiod API this file was compiled against.
int jb_gpio_api_major(void);
/// libgpiod's version string ("1.6.3", "2.2.1").
const char *jb_gpio_library_version(void);
/// Whether a request has one fd per line (libgpiod 1.6) or one fd for all its lines (libgpiod 2).
bool jb_gpio_fd_per_line(void);

/// Opens the chip device at `path`. NULL with errno on failure (ENOENT, EACCES, ENOTTY/ENODEV:
/// not a GPIO chip).
jb_gpio_chip *jb_gpio_chip_open(const char *path);
void jb_gpio_chip_close(jb_gpio_chip *chip);
/// 0, or -1 with errno.
int jb_gpio_chip_get_info(jb_gpio_chip *chip, jb_gpio_chip_info *out);
/// 0, or -1 with errno (EINVAL: offset out of range).
int jb_gpio_chip_get_line_info(jb_gpio_chip *chip, unsigned offset, jb_gpio_line_info *out);
/// The offset of the line named `name` on this chip, or -1 with errno (ENOENT: no such line).
int jb_gpio_chip_find_line(jb_gpio_chip *chip, const char *name);

/// Requests `n` lines of `chip` as inputs with both edges, raw (no kernel debounce: the core
/// debounces from the edges' timestamps). The chip must stay open while the request lives.
/// NULL with errno on failure (EBUSY: a line is in use; EACCES/EPERM; EINVAL: the kernel refused
/// a setting, e.g. bias before Linux 5.5); `*failed_line` is the index of the line that failed, or
/// `n` when the request as a whole failed. Every fd is non-blocking.
jb_gpio_request *jb_gpio_request_lines(jb_gpio_chip *chip, const char *consumer,
                                       const jb_gpio_line_config *lines, size_t n,
                                       size_t *failed_line);
/// Releases the lines and closes the fds.
void jb_gpio_request_release(jb_gpio_request *request);
/// The fds to poll: one per line (libgpiod 1.6) or one (libgpiod 2). Returns how many.
size_t jb_gpio_request_get_fds(jb_gpio_request *request, int *fds, size_t max);
/// Reads the edges waiting on fd number `fd_index` (0 ..< count from jb_gpio_request_get_fds), up
/// to `max` (<= JB_GPIO_MAX_LINES). Returns the count, 0 when none is waiting, -1 with errno.
int jb_gpio_request_read(jb_gpio_request *request, size_t fd_index, jb_gpio_edge *edges, size_t max);
/// The level line `index` (its position in the request) has now, after active-low: 1 active, 0
/// inactive, -1 with errno. It reads the line itself (libgpiod 1.6: gpiod_line_get_value; 2.x:
/// gpiod_line_request_get_value), so it is right when edges were lost: the kernel queues 16 edges a
/// line and drops what does not fit. An adopted request answers the level last fed for the line.
int jb_gpio_request_get_value(jb_gpio_request *request, size_t index);

// Feeding edges without a chip (tests, simulated buttons).

/// A request over fds the caller made (pipe read ends; adopted: released with the request), read
/// exactly like a chip's: `nfds` must be `n` when jb_gpio_fd_per_line(), else 1. With libgpiod 1.6
/// the records are parsed by libgpiod itself (gpiod_line_event_read_fd_multiple, the call the chip
/// path uses too); libgpiod 2 has no fd-level entry point, so this file parses them (see gpio.c).
jb_gpio_request *jb_gpio_request_adopt(const int *fds, size_t nfds, const jb_gpio_line_config *lines, size_t n);
/// Writes into `buf` the kernel record a chip request's fd delivers for one edge: struct
/// gpioevent_data (libgpiod 1.6: uAPI v1, no offset in it) or struct gpio_v2_line_event.
/// `rising` is the physical edge. Returns the record size, or 0 when `cap` is too small.
size_t jb_gpio_encode_kernel_event(unsigned offset, bool rising, uint64_t timestamp_ns, uint32_t seqno,
                                   void *buf, size_t cap);
/// Sets the physical level (`high`: the pin is high) that jb_gpio_request_get_value reports for line
/// `index` of an adopted request (a line starts released: high when active-low). 0, or -1 with
/// EINVAL for a chip's request or an index out of range.
int jb_gpio_request_feed_level(jb_gpio_request *request, size_t index, bool high);

// ---------------------------------------------------------------- evdev (evdev.c)

/// One struct input_event, decoded.
typedef struct jb_input_record {
    int64_t sec;
    int64_t usec;
    uint16_t type;
    uint16_t code;
    int32_t value;
} jb_input_record;

/// sizeof(struct input_event) on this platform (24 on 64-bit and on 32-bit with 64-bit time).
size_t jb_input_event_size(void);
/// Decodes one record of jb_input_event_size() bytes (any alignment).
void jb_input_decode(const void *bytes, jb_input_record *out);
/// Encodes one record (tests).
void jb_input_encode(const jb_input_record *in, void *bytes);
/// EVIOCGNAME: the device's name into `buf` (NUL-terminated). Length, or -1 with errno.
int jb_input_get_name(int fd, char *buf, size_t len);
/// EVIOCGBIT(EV_KEY): 1 when the device can send key `code`, 0 when not, -1 with errno.
int jb_input_has_key(int fd, unsigned code);
/// EVIOCSCLOCKID(CLOCK_MONOTONIC): event times on the monotonic clock. 0, or -1 with errno.
int jb_input_use_monotonic_clock(int fd);
/// EVIOCGRAB: with `on`, this fd alone gets the device's events (not the console, not X); 0, or -1
/// with errno (EBUSY: another process holds the grab). Closing the fd lets go.
int jb_input_grab(int fd, int on);

#endif
