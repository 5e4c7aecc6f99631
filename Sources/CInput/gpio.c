// SPDX-License-Identifier: MIT
// The uniform GPIO API of CInput.h over libgpiod 1.6 or 2.x. The two are different APIs with
// clashing names, so one is chosen here at compile time: only v1's <gpiod.h> defines
// GPIOD_LINE_BULK_MAX_LINES. Lines are requested active-high and active-low is applied in emit(),
// the one place every edge passes through, so both versions and the fed path behave the same.
#define _GNU_SOURCE 1
#include "CInput.h"

#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <linux/gpio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define JB_GPIOD_V1 1
#else
#define JB_GPIOD_V1 0
#endif

struct jb_gpio_chip {
    struct gpiod_chip *chip;
};

struct jb_gpio_request {
    size_t n;
    jb_gpio_line_config lines[JB_GPIO_MAX_LINES];
    size_t nfds;
    int fds[JB_GPIO_MAX_LINES];
    bool adopted;                                   // fds made by the caller, not libgpiod
    bool fed_high[JB_GPIO_MAX_LINES];               // adopted: each line's physical level, as fed
#if JB_GPIOD_V1
    struct gpiod_line *handles[JB_GPIO_MAX_LINES]; // owned by the chip; released one by one
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
#endif
};

static void copy_text(char *dst, size_t cap, const char *src) {
    if (!src) src = "";
    strncpy(dst, src, cap - 1);
    dst[cap - 1] = '\0';
}

static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Active-low, for edges and levels alike (lines are requested active-high).
static bool active(const jb_gpio_request *r, size_t index, bool high) {
    return r->lines[index].active_low ? !high : high;
}

// Every edge goes through here: line index, active-low, timestamp.
static void emit(const jb_gpio_request *r, jb_gpio_edge *out, unsigned index, bool rising, uint64_t ns) {
    out->index = index;
    out->rising = active(r, index, rising);
    out->timestamp_ns = ns;
}

static jb_gpio_request *new_request(const jb_gpio_line_config *lines, size_t n) {
    if (n == 0 || n > JB_GPIO_MAX_LINES) { errno = EINVAL; return NULL; }
    jb_gpio_request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->n = n;
    memcpy(r->lines, lines, n * sizeof *lines);
    return r;
}

jb_gpio_chip *jb_gpio_chip_open(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return NULL;
    jb_gpio_chip *c = malloc(sizeof *c);
    if (!c) { int e = errno; gpiod_chip_close(chip); errno = e; return NULL; }
    c->chip = chip;
    return c;
}

void jb_gpio_chip_close(jb_gpio_chip *c) {
    if (!c) return;
    gpiod_chip_close(c->chip);
    free(c);
}

#if JB_GPIOD_V1 // ------------------------------------------------------------ libgpiod 1.6

int jb_gpio_api_major(void) { return 1; }
const char *jb_gpio_library_version(void) { return gpiod_version_string(); }
bool jb_gpio_fd_per_line(void) { return true; }

int jb_gpio_chip_get_info(jb_gpio_chip *c, jb_gpio_chip_info *out) {
    copy_text(out->name, sizeof out->name, gpiod_chip_name(c->chip));
    copy_text(out->label, sizeof out->label, gpiod_chip_label(c->chip));
    out->num_lines = gpiod_chip_num_lines(c->chip);
    return 0;
}

int jb_gpio_chip_get_line_info(jb_gpio_chip *c, unsigned offset, jb_gpio_line_info *out) {
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line) return -1;
    copy_text(out->name, sizeof out->name, gpiod_line_name(line));
    copy_text(out->consumer, sizeof out->consumer, gpiod_line_consumer(line));
    out->used = gpiod_line_is_used(line);
    return 0;
}

int jb_gpio_chip_find_line(jb_gpio_chip *c, const char *name) {
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(c->chip, name);
    if (!line) { if (errno == 0) errno = ENOENT; return -1; }
    return (int)gpiod_line_offset(line);
}

jb_gpio_request *jb_gpio_request_lines(jb_gpio_chip *c, const char *consumer,
                                       const jb_gpio_line_config *lines, size_t n,
                                       size_t *failed_line) {
    *failed_line = n;
    jb_gpio_request *r = new_request(lines, n);
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        int flags = 0;
        switch (lines[i].bias) {
        case JB_GPIO_BIAS_DISABLED: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
        case JB_GPIO_BIAS_PULL_UP: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
        case JB_GPIO_BIAS_PULL_DOWN: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
        default: break;
        }
        struct gpiod_line_request_config config = {
            .consumer = consumer, .request_type = GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES, .flags = flags,
        };
        struct gpiod_line *line = gpiod_chip_get_line(c->chip, lines[i].offset);
        if (!line || gpiod_line_request(line, &config, 0) < 0 ||
            set_nonblocking(gpiod_line_event_get_fd(line)) < 0) {
            int e = errno;
            if (line && gpiod_line_is_requested(line)) gpiod_line_release(line);
            *failed_line = i;
            jb_gpio_request_release(r);
            errno = e;
            return NULL;
        }
        r->handles[i] = line;
        r->fds[i] = gpiod_line_event_get_fd(line);
        r->nfds = i + 1;
    }
    return r;
}

void jb_gpio_request_release(jb_gpio_request *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nfds; i++) {
        if (r->adopted) close(r->fds[i]);
        else if (r->handles[i]) gpiod_line_release(r->handles[i]); // closes the event fd
    }
    free(r);
}

int jb_gpio_request_read(jb_gpio_request *r, size_t fd_index, jb_gpio_edge *edges, size_t max) {
    if (fd_index >= r->nfds) { errno = EINVAL; return -1; }
    if (max > JB_GPIO_MAX_LINES) max = JB_GPIO_MAX_LINES;
    // The same libgpiod call for chips and adopted fds: it reads struct gpioevent_data records.
    struct gpiod_line_event events[JB_GPIO_MAX_LINES];
    int count = gpiod_line_event_read_fd_multiple(r->fds[fd_index], events, (unsigned)max);
    if (count < 0) return errno == EAGAIN ? 0 : -1;
    for (int i = 0; i < count; i++) {
        uint64_t ns = (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
        emit(r, &edges[i], (unsigned)fd_index, events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE, ns);
    }
    return count;
}

// The physical level of a chip's line: GPIOHANDLE_GET_LINE_VALUES_IOCTL on its event fd.
static int read_level(jb_gpio_request *r, size_t index) {
    return gpiod_line_get_value(r->handles[index]);
}

size_t jb_gpio_encode_kernel_event(unsigned offset, bool rising, uint64_t timestamp_ns, uint32_t seqno,
                                   void *buf, size_t cap) {
    (void)offset; (void)seqno; // uAPI v1 records carry neither: the fd says which line
    struct gpioevent_data data;
    if (cap < sizeof data) return 0;
    memset(&data, 0, sizeof data);
    data.timestamp = timestamp_ns;
    data.id = rising ? GPIOEVENT_EVENT_RISING_EDGE : GPIOEVENT_EVENT_FALLING_EDGE;
    memcpy(buf, &data, sizeof data);
    return sizeof data;
}

#else // ----------------------------------------------------------------------- libgpiod 2.x

int jb_gpio_api_major(void) { return 2; }
const char *jb_gpio_library_version(void) { return gpiod_api_version(); }
bool jb_gpio_fd_per_line(void) { return false; }

int jb_gpio_chip_get_info(jb_gpio_chip *c, jb_gpio_chip_info *out) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(c->chip);
    if (!info) return -1;
    copy_text(out->name, sizeof out->name, gpiod_chip_info_get_name(info));
    copy_text(out->label, sizeof out->label, gpiod_chip_info_get_label(info));
    out->num_lines = (unsigned)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return 0;
}

int jb_gpio_chip_get_line_info(jb_gpio_chip *c, unsigned offset, jb_gpio_line_info *out) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(c->chip, offset);
    if (!info) return -1;
    copy_text(out->name, sizeof out->name, gpiod_line_info_get_name(info));
    copy_text(out->consumer, sizeof out->consumer, gpiod_line_info_get_consumer(info));
    out->used = gpiod_line_info_is_used(info);
    gpiod_line_info_free(info);
    return 0;
}

int jb_gpio_chip_find_line(jb_gpio_chip *c, const char *name) {
    return gpiod_chip_get_line_offset_from_name(c->chip, name);
}

static bool index_of_offset(const jb_gpio_request *r, unsigned offset, unsigned *index) {
    for (size_t i = 0; i < r->n; i++) {
        if (r->lines[i].offset == offset) { *index = (unsigned)i; return true; }
    }
    return false;
}

static enum gpiod_line_bias v2_bias(int bias) {
    switch (bias) {
    case JB_GPIO_BIAS_DISABLED: return GPIOD_LINE_BIAS_DISABLED;
    case JB_GPIO_BIAS_PULL_UP: return GPIOD_LINE_BIAS_PULL_UP;
    case JB_GPIO_BIAS_PULL_DOWN: return GPIOD_LINE_BIAS_PULL_DOWN;
    default: return GPIOD_LINE_BIAS_AS_IS;
    }
}

jb_gpio_request *jb_gpio_request_lines(jb_gpio_chip *c, const char *consumer,
                                       const jb_gpio_line_config *lines, size_t n,
                                       size_t *failed_line) {
    *failed_line = n;
    jb_gpio_request *r = new_request(lines, n);
    if (!r) return NULL;
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    int e = ENOMEM;
    if (!settings || !line_config || !request_config) goto fail;
    gpiod_request_config_set_consumer(request_config, consumer);
    for (size_t i = 0; i < n; i++) {
        gpiod_line_settings_reset(settings);
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) < 0 ||
            gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) < 0 ||
            gpiod_line_settings_set_bias(settings, v2_bias(lines[i].bias)) < 0 ||
            gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) < 0) {
            e = errno; *failed_line = i; goto fail;
        }
        // No kernel debounce (period 0, the default): the kernel's debounce reports an edge only
        // once the line has been stable for the period, which delays every press by it. The core
        // debounces from the raw edges' timestamps instead, so the first edge acts at once.
        unsigned offset = lines[i].offset;
        if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) < 0) {
            e = errno; *failed_line = i; goto fail;
        }
    }
    r->buffer = gpiod_edge_event_buffer_new(JB_GPIO_MAX_LINES);
    if (!r->buffer) { e = errno; goto fail; }
    r->request = gpiod_chip_request_lines(c->chip, request_config, line_config);
    if (!r->request) { e = errno; goto fail; }
    r->fds[0] = gpiod_line_request_get_fd(r->request);
    r->nfds = 1;
    if (set_nonblocking(r->fds[0]) < 0) { e = errno; goto fail; }
    gpiod_line_settings_free(settings);
    gpiod_line_config_free(line_config);
    gpiod_request_config_free(request_config);
    return r;
fail:
    gpiod_line_settings_free(settings);
    gpiod_line_config_free(line_config);
    gpiod_request_config_free(request_config);
    jb_gpio_request_release(r);
    errno = e;
    return NULL;
}

void jb_gpio_request_release(jb_gpio_request *r) {
    if (!r) return;
    if (r->adopted) {
        for (size_t i = 0; i < r->nfds; i++) close(r->fds[i]);
    }
    if (r->request) gpiod_line_request_release(r->request); // closes its fd
    if (r->buffer) gpiod_edge_event_buffer_free(r->buffer);
    free(r);
}

// libgpiod 2 reads a request's fd only behind gpiod_line_request_read_edge_events (its fd-level
// reader, gpiod_edge_event_buffer_read_fd, is not exported), so adopted fds are read here, as
// libgpiod does it: whole struct gpio_v2_line_event records, id -> edge type, timestamp_ns, offset.
static int read_adopted_v2(jb_gpio_request *r, jb_gpio_edge *edges, size_t max) {
    struct gpio_v2_line_event data[JB_GPIO_MAX_LINES];
    ssize_t got = read(r->fds[0], data, max * sizeof data[0]);
    if (got < 0) return errno == EAGAIN ? 0 : -1;
    if ((size_t)got < sizeof data[0]) { errno = EIO; return -1; }
    int count = 0;
    for (size_t i = 0; i < (size_t)got / sizeof data[0]; i++) {
        unsigned index;
        if (!index_of_offset(r, data[i].offset, &index)) continue;
        emit(r, &edges[count++], index, data[i].id == GPIO_V2_LINE_EVENT_RISING_EDGE, data[i].timestamp_ns);
    }
    return count;
}

int jb_gpio_request_read(jb_gpio_request *r, size_t fd_index, jb_gpio_edge *edges, size_t max) {
    if (fd_index >= r->nfds) { errno = EINVAL; return -1; }
    if (max > JB_GPIO_MAX_LINES) max = JB_GPIO_MAX_LINES;
    if (r->adopted) return read_adopted_v2(r, edges, max);
    int count = gpiod_line_request_read_edge_events(r->request, r->buffer, max);
    if (count < 0) return errno == EAGAIN ? 0 : -1;
    int kept = 0;
    for (int i = 0; i < count; i++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(r->buffer, (unsigned long)i);
        unsigned index;
        if (!event || !index_of_offset(r, gpiod_edge_event_get_line_offset(event), &index)) continue;
        emit(r, &edges[kept++], index,
             gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE,
             gpiod_edge_event_get_timestamp_ns(event));
    }
    return kept;
}

// The physical level of a chip's line: GPIO_V2_LINE_GET_VALUES_IOCTL on the request's fd
// (enum gpiod_line_value: GPIOD_LINE_VALUE_ERROR is -1, then 0 inactive, 1 active).
static int read_level(jb_gpio_request *r, size_t index) {
    return (int)gpiod_line_request_get_value(r->request, r->lines[index].offset);
}

size_t jb_gpio_encode_kernel_event(unsigned offset, bool rising, uint64_t timestamp_ns, uint32_t seqno,
                                   void *buf, size_t cap) {
    struct gpio_v2_line_event data;
    if (cap < sizeof data) return 0;
    memset(&data, 0, sizeof data);
    data.timestamp_ns = timestamp_ns;
    data.id = rising ? GPIO_V2_LINE_EVENT_RISING_EDGE : GPIO_V2_LINE_EVENT_FALLING_EDGE;
    data.offset = offset;
    data.seqno = seqno;
    data.line_seqno = seqno;
    memcpy(buf, &data, sizeof data);
    return sizeof data;
}

#endif // ----------------------------------------------------------------------------------------

size_t jb_gpio_request_get_fds(jb_gpio_request *r, int *fds, size_t max) {
    size_t count = r->nfds < max ? r->nfds : max;
    memcpy(fds, r->fds, count * sizeof *fds);
    return r->nfds;
}

int jb_gpio_request_get_value(jb_gpio_request *r, size_t index) {
    if (index >= r->n) { errno = EINVAL; return -1; }
    int high = r->adopted ? r->fed_high[index] : read_level(r, index);
    if (high < 0) return -1;
    return active(r, index, high != 0);
}

jb_gpio_request *jb_gpio_request_adopt(const int *fds, size_t nfds, const jb_gpio_line_config *lines, size_t n) {
    if (nfds != (jb_gpio_fd_per_line() ? n : 1)) { errno = EINVAL; return NULL; }
    jb_gpio_request *r = new_request(lines, n);
    if (!r) return NULL;
    r->adopted = true;
    for (size_t i = 0; i < n; i++) r->fed_high[i] = lines[i].active_low; // released
    for (size_t i = 0; i < nfds; i++) {
        r->fds[i] = fds[i];
        r->nfds = i + 1;
        if (set_nonblocking(fds[i]) < 0) { int e = errno; jb_gpio_request_release(r); errno = e; return NULL; }
    }
    return r;
}

int jb_gpio_request_feed_level(jb_gpio_request *r, size_t index, bool high) {
    if (!r->adopted || index >= r->n) { errno = EINVAL; return -1; }
    r->fed_high[index] = high;
    return 0;
}
