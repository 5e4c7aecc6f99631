// SPDX-License-Identifier: MIT
/*
 * jukeboxtest: a fault-injecting ALSA playback device for tests, as an ioplug external plugin.
 *
 * It plays nothing. It consumes frames on CLOCK_MONOTONIC at the configured rate (or N times
 * faster), records every byte it receives, and fails on demand the way real devices fail.
 *
 * Build: `swift build` makes .build/debug/libJukeboxTestPCM.so (compiled with -DPIC, linked to
 * libasound). Use it by hand, e.g. with aplay, from ~/.asoundrc:
 *
 *     pcm_type.jukeboxtest { lib "/abs/path/.build/debug/libJukeboxTestPCM.so" }
 *     pcm.faulty {
 *         type jukeboxtest
 *         record  "/tmp/faulty.raw"      # every byte received is appended here (never truncated;
 *                                        # frames taken back by a rewind are overwritten)
 *         control "/tmp/faulty.control"  # faults, see below (a missing file means "ok")
 *         lock    "/tmp/faulty.lock"     # exclusive like hw: a second opener gets -EBUSY
 *         log     "/tmp/faulty.log"      # one line per event, see below
 *         speed   1                      # 1 = real time; 20 = twenty times faster
 *     }
 *
 *     aplay -D faulty song.wav      # echo unplug > /tmp/faulty.control   while it plays
 *
 * Every parameter is optional (without `lock` any number of openers may play at once; without
 * `record` the bytes are dropped). Accepted: playback only, RW and MMAP interleaved access (so
 * `plug` can stack on it), S16_LE, S32_LE, FLOAT_LE, 1000–768000 Hz, 1–8 channels.
 *
 * Control file: words separated by white space or newlines; `#` starts a comment. It is re-read
 * whenever its inode, size or modification time changes (write a new file and rename it over the
 * old one to be sure a change is seen). Words:
 *   ok        no fault (the same as an empty or missing file)
 *   busy      opening fails with -EBUSY
 *   unplug    the open stream dies: writes fail with -ENODEV, the state becomes DISCONNECTED and
 *             the clock stops, as of the moment the file changed (its mtime, no earlier than the
 *             device's previous look at it) though the writer learns it at its next call, as
 *             a card that stops before its driver goes; opening fails with -ENODEV until the word
 *             is gone. Its log line's `heard` is where the clock stopped (`noticed_after_ms=`)
 *   xrun      one underrun (-EPIPE) in the open stream; the frames queued at that moment are lost
 *   suspend   one suspend (-ESTRPIPE) in the open stream; snd_pcm_resume continues where it stopped
 *   stall     the device stops consuming (the clock stops, poll never reports room, blocking
 *             writes block) until the word is gone
 *   nopause   checked at open: the device cannot pause (snd_pcm_hw_params_can_pause is 0 and
 *             snd_pcm_pause fails with -ENOSYS), like the Raspberry Pi headphone jack
 * `xrun` and `suspend` fire once per change of the file, in streams that were open when it
 * changed; a stream opened later ignores them.
 *
 * Log file: appended, one line per event: `EVENT key=value ...`, always with `pid=`, `heard=`
 * (byte offset in the record file of the next frame the device would have played: everything
 * before it was "heard"), `recorded=` (the record file's size as far as this stream wrote it) and
 * `t=` (CLOCK_MONOTONIC seconds when `heard` was read). The clock runs from a start (or unpause,
 * resume, unstall) to the next stop, pause, underrun, xrun, suspend, unplug, stall or close, so
 * with the recording the log tells when each recorded frame was played, to within one frame.
 * Events: open, params (also format=, rate=, channels=, period=, buffer= in frames), start, stop,
 * pause, unpause, underrun, xrun, suspend, resume, unplug, stall, unstall, close, rewind (frames=).
 *
 * Rewinds: ioplug lets an application (or a `plug` stacked on the device) move its pointer back
 * over frames written but not yet played. The device takes those frames back like a kernel-backed
 * one (never any it already played) and the next frames written overwrite them in the recording,
 * so the recording stays what the device played, in order, up to each stop's `heard`.
 *
 * Pitfalls (see the hardware notes): an ioplug's `pointer` decides underruns itself and any
 * negative return there becomes an xrun, so -ENODEV comes from `transfer` and the state.
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "JukeboxTestPCM.h"

enum {
	F_BUSY = 1 << 0,
	F_UNPLUG = 1 << 1,
	F_XRUN = 1 << 2,
	F_SUSPEND = 1 << 3,
	F_STALL = 1 << 4,
	F_NOPAUSE = 1 << 5,
};

typedef struct {
	snd_pcm_ioplug_t io;
	char *control_path;
	char *record_path;
	double speed;
	int record_fd, lock_fd, log_fd, timer_fd;
	int rewrite_fd; /* the recording without O_APPEND, to overwrite frames taken back */
	int locked; /* lock_fd holds the flock and our pid */

	/* control file */
	unsigned flags;
	int seen;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t checked_ns;       /* CLOCK_MONOTONIC of the last look at the control file */
	uint64_t changed_ns;       /* CLOCK_MONOTONIC when it last changed (see read_control) */
	int pending_xrun, pending_suspend;

	/* faults in effect */
	int unplugged, stalled, suspended, paused, started;

	/* the clock: frames consumed since prepare = pos0 (+ elapsed since t0 while it runs) */
	int clock_on;
	uint64_t t0_ns;
	uint64_t pos0;
	uint64_t written;          /* frames received since prepare */
	snd_pcm_uframes_t avail_min;
	unsigned frame_bytes;

	/* where this stream's bytes sit in the record file */
	uint64_t rec_base;         /* file size at open */
	uint64_t rec_bytes;        /* bytes this stream appended */
	uint64_t prepare_bytes;    /* rec_bytes at the last prepare */
} jt_t;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Frames consumed by `now` since prepare (not capped at the frames received). */
static uint64_t consumed_at(const jt_t *t, uint64_t now)
{
	uint64_t c = t->pos0;
	if (t->clock_on && t->io.rate > 0 && now > t->t0_ns) {
		double elapsed = (double)(now - t->t0_ns) * 1e-9;
		c += (uint64_t)(elapsed * t->io.rate * t->speed);
	}
	return c;
}

static uint64_t consumed(const jt_t *t)
{
	return consumed_at(t, now_ns());
}

static void jt_log(jt_t *t, const char *event, const char *extra)
{
	if (t->log_fd < 0)
		return;
	/* `heard` and `t` are read at the same instant: while the clock runs, the frame at `heard`
	 * is consumed at `t` and each later one 1/(rate*speed) s after it (the benchmark's latency
	 * figures rest on this). */
	uint64_t now = now_ns();
	uint64_t c = consumed_at(t, now);
	if (c > t->written)
		c = t->written;
	char line[512];
	int n = snprintf(line, sizeof line, "%s pid=%d heard=%" PRIu64 " recorded=%" PRIu64 " t=%" PRIu64 ".%09" PRIu64 "%s%s\n",
			 event, (int)getpid(),
			 t->rec_base + t->prepare_bytes + c * t->frame_bytes,
			 t->rec_base + t->rec_bytes, (uint64_t)(now / 1000000000ull), (uint64_t)(now % 1000000000ull),
			 extra ? " " : "", extra ? extra : "");
	if (n > 0)
		(void)!write(t->log_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Starts or stops the clock to match the faults and the stream state; a stop counts from `at`
 * (a past moment, or 0 for now). */
static void update_clock_at(jt_t *t, uint64_t at)
{
	int on = t->started && !t->paused && !t->stalled && !t->suspended && !t->unplugged;
	if (on == t->clock_on)
		return;
	if (on) {
		t->t0_ns = now_ns();
	} else {
		uint64_t now = now_ns();
		if (at == 0 || at > now)
			at = now;
		if (at < t->t0_ns)
			at = t->t0_ns;
		uint64_t c = consumed_at(t, at);
		t->pos0 = c < t->written ? c : t->written;
	}
	t->clock_on = on;
}

static void update_clock(jt_t *t)
{
	update_clock_at(t, 0);
}

static unsigned parse_control(const char *text)
{
	unsigned flags = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '#')
			p++;
		size_t len = (size_t)(p - start);
#define WORD(w) (len == sizeof(w) - 1 && memcmp(start, w, len) == 0)
		if (WORD("busy")) flags |= F_BUSY;
		else if (WORD("unplug")) flags |= F_UNPLUG;
		else if (WORD("xrun")) flags |= F_XRUN;
		else if (WORD("suspend")) flags |= F_SUSPEND;
		else if (WORD("stall")) flags |= F_STALL;
		else if (WORD("nopause")) flags |= F_NOPAUSE;
#undef WORD
	}
	return flags;
}

/* Re-reads the control file if it changed; one-shot faults arm only after the first read. */
static void read_control(jt_t *t)
{
	if (!t->control_path)
		return;
	struct stat st;
	uint64_t previous = t->checked_ns;
	t->checked_ns = now_ns();
	if (stat(t->control_path, &st) != 0) {
		if (t->seen && t->ino == 0)
			return;
		t->seen = 1;
		t->ino = 0;
		t->flags = 0;
		return;
	}
	if (t->seen && st.st_dev == t->dev && st.st_ino == t->ino && st.st_size == t->size &&
	    st.st_mtim.tv_sec == t->mtime.tv_sec && st.st_mtim.tv_nsec == t->mtime.tv_nsec)
		return;
	int first = !t->seen;
	t->seen = 1;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->size = st.st_size;
	t->mtime = st.st_mtim;
	/* When it changed, on CLOCK_MONOTONIC: its mtime, kept between the previous look (it had not
	 * changed then; the mtime's coarse clock may say a little earlier) and now. */
	struct timespec real;
	clock_gettime(CLOCK_REALTIME, &real);
	int64_t ago = ((int64_t)real.tv_sec - (int64_t)st.st_mtim.tv_sec) * 1000000000ll +
		      ((int64_t)real.tv_nsec - (int64_t)st.st_mtim.tv_nsec);
	uint64_t changed = t->checked_ns;
	if (ago > 0 && (uint64_t)ago < changed)
		changed -= (uint64_t)ago;
	if (changed < previous)
		changed = previous;
	t->changed_ns = changed;
	char text[4096];
	ssize_t n = 0;
	int fd = open(t->control_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof text - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	t->flags = parse_control(text);
	if (!first) {
		t->pending_xrun = (t->flags & F_XRUN) != 0;
		t->pending_suspend = (t->flags & F_SUSPEND) != 0;
	}
}

/* Applies the control file to the open stream. Called from every callback that sees time pass. */
static void apply_faults(jt_t *t)
{
	read_control(t);
	if ((t->flags & F_UNPLUG) && !t->unplugged) {
		/* The card went when the control file changed: its clock stops then, though the writer
		 * only learns it now, at its next call (a real card also stops before its driver goes). */
		update_clock(t);
		t->unplugged = 1;
		update_clock_at(t, t->changed_ns);
		t->io.state = SND_PCM_STATE_DISCONNECTED;
		char extra[64];
		uint64_t lag = t->checked_ns > t->changed_ns ? t->checked_ns - t->changed_ns : 0;
		snprintf(extra, sizeof extra, "noticed_after_ms=%.1f", (double)lag * 1e-6);
		jt_log(t, "unplug", extra);
	}
	if (t->unplugged)
		return;
	int stall = (t->flags & F_STALL) != 0;
	if (stall != t->stalled) {
		t->stalled = stall;
		update_clock(t);
		jt_log(t, stall ? "stall" : "unstall", NULL);
	}
	if (t->pending_suspend && t->started && !t->suspended) {
		t->pending_suspend = 0;
		t->suspended = 1;
		update_clock(t);
		t->io.state = SND_PCM_STATE_SUSPENDED;
		jt_log(t, "suspend", NULL);
	}
}

static int jt_start(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->unplugged)
		return -ENODEV;
	t->started = 1;
	update_clock(t);
	jt_log(t, "start", NULL);
	return 0;
}

static int jt_stop(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	update_clock(t);
	jt_log(t, "stop", NULL);
	t->started = 0;
	t->paused = 0;
	update_clock(t);
	return 0;
}

static snd_pcm_sframes_t jt_pointer(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->pending_xrun && t->started && !t->unplugged && !t->suspended) {
		t->pending_xrun = 0;
		update_clock(t);
		jt_log(t, "xrun", NULL);
		t->started = 0;
		update_clock(t);
		return -EPIPE;
	}
	uint64_t c = consumed(t);
	if (c >= t->written && t->clock_on) {
		/* Everything received has been played. */
		t->clock_on = 0;
		t->pos0 = t->written;
		c = t->written;
		if (io->state != SND_PCM_STATE_DRAINING) {
			jt_log(t, "underrun", NULL);
			t->started = 0;
			return -EPIPE;
		}
	}
	return (snd_pcm_sframes_t)(c % io->buffer_size);
}

static snd_pcm_sframes_t jt_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
				     snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->unplugged)
		return -ENODEV;
	const char *buf = (const char *)areas[0].addr + (areas[0].first + areas[0].step * offset) / 8;
	size_t bytes = size * t->frame_bytes;
	/* A rewind (snd_pcm_rewind, e.g. through `plug`) moved the application pointer back: the
	 * frames from there on are taken back as on a kernel-backed device, never below what was
	 * played, and the recording overwrites them. */
	uint64_t appl = (uint64_t)io->appl_ptr;
	if (appl < t->written && t->written - appl <= io->buffer_size) {
		uint64_t c = consumed(t);
		uint64_t back = t->written - (appl > c ? appl : c);
		if (back > 0) {
			char extra[48];
			t->written -= back;
			snprintf(extra, sizeof extra, "frames=%" PRIu64, back);
			jt_log(t, "rewind", extra);
		}
	}
	/* Where this chunk goes in the recording: the end, unless a rewind took frames back. */
	uint64_t at = t->prepare_bytes + t->written * t->frame_bytes;
	if (t->record_fd >= 0) {
		int rewriting = at < t->rec_bytes;
		if (rewriting && t->rewrite_fd < 0 &&
		    (t->rewrite_fd = open(t->record_path, O_WRONLY | O_CLOEXEC)) < 0)
			return -EIO;
		size_t done = 0;
		while (done < bytes) {
			ssize_t n = rewriting
				? pwrite(t->rewrite_fd, buf + done, bytes - done, (off_t)(t->rec_base + at + done))
				: write(t->record_fd, buf + done, bytes - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -EIO;
			done += (size_t)n;
		}
	}
	t->written += size;
	if (at + bytes > t->rec_bytes)
		t->rec_bytes = at + bytes;
	return (snd_pcm_sframes_t)size;
}

static int jt_prepare(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->unplugged)
		return -ENODEV;
	t->started = 0;
	t->paused = 0;
	t->suspended = 0;
	t->clock_on = 0;
	t->pos0 = 0;
	t->written = 0;
	t->prepare_bytes = t->rec_bytes;
	return 0;
}

static int jt_pause(snd_pcm_ioplug_t *io, int enable)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->unplugged)
		return -ENODEV;
	update_clock(t);
	t->paused = enable;
	update_clock(t);
	jt_log(t, enable ? "pause" : "unpause", NULL);
	return 0;
}

static int jt_pause_unsupported(snd_pcm_ioplug_t *io, int enable)
{
	(void)io;
	(void)enable;
	return -ENOSYS;
}

static int jt_resume(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	if (t->unplugged)
		return -ENODEV;
	if (t->suspended) {
		t->suspended = 0;
		io->state = t->started ? SND_PCM_STATE_RUNNING : SND_PCM_STATE_PREPARED;
		update_clock(t);
		jt_log(t, "resume", NULL);
	}
	return 0;
}

static int jt_delay(snd_pcm_ioplug_t *io, snd_pcm_sframes_t *delayp)
{
	jt_t *t = io->private_data;
	apply_faults(t);
	if (t->unplugged)
		return -ENODEV;
	uint64_t c = consumed(t);
	*delayp = c >= t->written ? 0 : (snd_pcm_sframes_t)(t->written - c);
	return 0;
}

static int jt_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds,
			   unsigned short *revents)
{
	jt_t *t = io->private_data;
	uint64_t ticks;
	(void)pfd;
	(void)nfds;
	while (read(t->timer_fd, &ticks, sizeof ticks) > 0) {
	}
	apply_faults(t);
	*revents = 0;
	switch (io->state) {
	case SND_PCM_STATE_XRUN:
	case SND_PCM_STATE_SUSPENDED:
	case SND_PCM_STATE_DISCONNECTED:
		*revents = POLLOUT | POLLERR;
		return 0;
	default:
		break;
	}
	if (t->stalled)
		return 0;
	uint64_t c = consumed(t);
	uint64_t queued = c >= t->written ? 0 : t->written - c;
	uint64_t room = queued >= io->buffer_size ? 0 : io->buffer_size - queued;
	if (room >= t->avail_min || io->state == SND_PCM_STATE_DRAINING)
		*revents = POLLOUT;
	return 0;
}

static const char *format_name(snd_pcm_format_t format)
{
	const char *name = snd_pcm_format_name(format);
	return name ? name : "?";
}

static int jt_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params);
static int jt_hw_free(snd_pcm_ioplug_t *io);
static int jt_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params);
static int jt_close(snd_pcm_ioplug_t *io);

/* With a pause callback ioplug reports SND_PCM_INFO_PAUSE; `nopause` opens with the table
 * without one and switches to the one that refuses once the parameters are fixed. */
static const snd_pcm_ioplug_callback_t with_pause = {
	.start = jt_start, .stop = jt_stop, .pointer = jt_pointer, .transfer = jt_transfer,
	.close = jt_close, .hw_params = jt_hw_params, .hw_free = jt_hw_free, .sw_params = jt_sw_params,
	.prepare = jt_prepare, .pause = jt_pause, .resume = jt_resume, .poll_revents = jt_poll_revents,
	.delay = jt_delay,
};
static const snd_pcm_ioplug_callback_t without_pause = {
	.start = jt_start, .stop = jt_stop, .pointer = jt_pointer, .transfer = jt_transfer,
	.close = jt_close, .hw_params = jt_hw_params, .hw_free = jt_hw_free, .sw_params = jt_sw_params,
	.prepare = jt_prepare, .resume = jt_resume, .poll_revents = jt_poll_revents, .delay = jt_delay,
};
static const snd_pcm_ioplug_callback_t refusing_pause = {
	.start = jt_start, .stop = jt_stop, .pointer = jt_pointer, .transfer = jt_transfer,
	.close = jt_close, .hw_params = jt_hw_params, .hw_free = jt_hw_free, .sw_params = jt_sw_params,
	.prepare = jt_prepare, .pause = jt_pause_unsupported, .resume = jt_resume,
	.poll_revents = jt_poll_revents, .delay = jt_delay,
};

static int jt_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
	jt_t *t = io->private_data;
	(void)params;
	t->frame_bytes = (unsigned)(snd_pcm_format_physical_width(io->format) / 8) * io->channels;
	t->avail_min = io->period_size;
	/* Wake pollers once per period (of device time). */
	double period = (double)io->period_size / io->rate / t->speed;
	if (period < 0.0005)
		period = 0.0005;
	struct itimerspec spec;
	spec.it_interval.tv_sec = (time_t)period;
	spec.it_interval.tv_nsec = (long)((period - (double)(time_t)period) * 1e9);
	spec.it_value = spec.it_interval;
	timerfd_settime(t->timer_fd, 0, &spec, NULL);
	char extra[160];
	snprintf(extra, sizeof extra, "format=%s rate=%u channels=%u period=%lu buffer=%lu",
		 format_name(io->format), io->rate, io->channels,
		 (unsigned long)io->period_size, (unsigned long)io->buffer_size);
	jt_log(t, "params", extra);
	if (io->callback == &without_pause)
		io->callback = &refusing_pause;
	return 0;
}

static int jt_hw_free(snd_pcm_ioplug_t *io)
{
	if (io->callback == &refusing_pause)
		io->callback = &without_pause;
	return 0;
}

static int jt_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
	jt_t *t = io->private_data;
	snd_pcm_uframes_t avail_min = 0;
	if (snd_pcm_sw_params_get_avail_min(params, &avail_min) == 0 && avail_min > 0)
		t->avail_min = avail_min;
	return 0;
}

static void jt_free(jt_t *t)
{
	if (t->record_fd >= 0)
		close(t->record_fd);
	if (t->rewrite_fd >= 0)
		close(t->rewrite_fd);
	if (t->log_fd >= 0)
		close(t->log_fd);
	if (t->timer_fd >= 0)
		close(t->timer_fd);
	if (t->lock_fd >= 0) {
		/* The pid names the holder only while the lock is held: a stale one would blame this
		 * process for a later, injected "busy". */
		if (t->locked)
			(void)!ftruncate(t->lock_fd, 0);
		close(t->lock_fd); /* releases the flock */
	}
	free(t->control_path);
	free(t->record_path);
	free(t);
}

static int jt_close(snd_pcm_ioplug_t *io)
{
	jt_t *t = io->private_data;
	update_clock(t);
	jt_log(t, "close", NULL);
	jt_free(t);
	return 0;
}

static int get_string(snd_config_t *n, const char **out)
{
	int err = snd_config_get_string(n, out);
	if (err < 0)
		SNDERR("jukeboxtest: record, control, lock and log must be strings");
	return err;
}

SND_PCM_PLUGIN_DEFINE_FUNC(jukeboxtest)
{
	snd_config_iterator_t i, next;
	const char *record = NULL, *control = NULL, *lock = NULL, *log = NULL;
	double speed = 1.0;
	int err;
	(void)root;

	snd_config_for_each(i, next, conf) {
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *id;
		if (snd_config_get_id(n, &id) < 0)
			continue;
		if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint"))
			continue;
		if (!strcmp(id, "record")) {
			if ((err = get_string(n, &record)) < 0)
				return err;
		} else if (!strcmp(id, "control")) {
			if ((err = get_string(n, &control)) < 0)
				return err;
		} else if (!strcmp(id, "lock")) {
			if ((err = get_string(n, &lock)) < 0)
				return err;
		} else if (!strcmp(id, "log")) {
			if ((err = get_string(n, &log)) < 0)
				return err;
		} else if (!strcmp(id, "speed")) {
			const char *text;
			if (snd_config_get_ireal(n, &speed) < 0) {
				if (snd_config_get_string(n, &text) < 0)
					return -EINVAL;
				speed = atof(text);
			}
			if (!(speed > 0)) {
				SNDERR("jukeboxtest: speed must be positive");
				return -EINVAL;
			}
		} else {
			SNDERR("jukeboxtest: unknown field %s", id);
			return -EINVAL;
		}
	}
	if (stream != SND_PCM_STREAM_PLAYBACK) {
		SNDERR("jukeboxtest: playback only");
		return -EINVAL;
	}

	jt_t *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->record_fd = t->rewrite_fd = t->lock_fd = t->log_fd = t->timer_fd = -1;
	t->speed = speed;
	if (control && !(t->control_path = strdup(control))) {
		jt_free(t);
		return -ENOMEM;
	}
	read_control(t);
	if (t->flags & F_UNPLUG) {
		jt_free(t);
		return -ENODEV;
	}
	if (t->flags & F_BUSY) {
		jt_free(t);
		return -EBUSY;
	}
	if (lock) {
		t->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (t->lock_fd < 0) {
			err = -errno;
			jt_free(t);
			return err;
		}
		if (flock(t->lock_fd, LOCK_EX | LOCK_NB) != 0) {
			jt_free(t);
			return -EBUSY;
		}
		t->locked = 1;
		char pid[32];
		int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
		if (ftruncate(t->lock_fd, 0) == 0)
			(void)!pwrite(t->lock_fd, pid, (size_t)len, 0);
	}
	if (record) {
		if (!(t->record_path = strdup(record))) {
			jt_free(t);
			return -ENOMEM;
		}
		t->record_fd = open(record, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (t->record_fd < 0) {
			err = -errno;
			jt_free(t);
			return err;
		}
		off_t end = lseek(t->record_fd, 0, SEEK_END);
		t->rec_base = end > 0 ? (uint64_t)end : 0;
	}
	if (log) {
		t->log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (t->log_fd < 0) {
			err = -errno;
			jt_free(t);
			return err;
		}
	}
	t->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->timer_fd < 0) {
		err = -errno;
		jt_free(t);
		return err;
	}

	t->io.version = SND_PCM_IOPLUG_VERSION;
	t->io.name = "jukebox test PCM";
	t->io.callback = (t->flags & F_NOPAUSE) ? &without_pause : &with_pause;
	t->io.poll_fd = t->timer_fd;
	t->io.poll_events = POLLIN;
	t->io.mmap_rw = 0;
	t->io.private_data = t;
	err = snd_pcm_ioplug_create(&t->io, name, stream, mode);
	if (err < 0) {
		jt_free(t);
		return err;
	}

	static const unsigned int access_list[] = {
		SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_MMAP_INTERLEAVED,
	};
	static const unsigned int format_list[] = {
		SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE,
	};
	if ((err = snd_pcm_ioplug_set_param_list(&t->io, SND_PCM_IOPLUG_HW_ACCESS, 2, access_list)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_list(&t->io, SND_PCM_IOPLUG_HW_FORMAT, 3, format_list)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&t->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&t->io, SND_PCM_IOPLUG_HW_RATE, 1000, 768000)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&t->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1 << 20)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&t->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&t->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128, 4 << 20)) < 0) {
		snd_pcm_ioplug_delete(&t->io); /* calls jt_close */
		return err;
	}
	jt_log(t, "open", NULL);
	*pcmp = t->io.pcm;
	return 0;
}

SND_PCM_PLUGIN_SYMBOL(jukeboxtest);
