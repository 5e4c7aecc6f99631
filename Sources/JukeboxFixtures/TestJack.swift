// SPDX-License-Identifier: MIT
import CALSA
import Glibc

/// A sound card's jack for tests: a user-space control device (`ControlPlugin`) with booleans
/// named `Headphone Jack` and `Line Out Jack` (interface CARD, as drivers make them) beside a
/// volume. `set` writes a control through a handle of its own, as the driver's interrupt would;
/// the plugin then sends a value notice to every subscribed handle, as the kernel does. Setting
/// `Card Gone` makes every handle's next read of notices fail as an unplugged USB card's does
/// (ENODEV). Its values are process-wide, like a card's.
public enum TestJack {
    /// The compiled plugin (once per process).
    public static let plugin = ControlPlugin.build(type: "jbjack", source: source, name: "Jukebox test jack",
                                                   created: "for (int i = 0; i < 32; i++) if (!open_handles[i]) { open_handles[i] = j; break; }")

    /// Sets control `name` (a boolean); false when the plugin is missing or the write failed.
    @discardableResult
    public static func set(_ name: String, _ on: Bool) -> Bool {
        guard case .success(let plugin) = plugin else { return false }
        return plugin.config.withCString { text -> Bool in
            var top: OpaquePointer?
            var input: OpaquePointer?
            guard snd_config_top(&top) == 0, let top else { return false }
            defer { snd_config_delete(top) }
            guard snd_input_buffer_open(&input, text, strlen(text)) == 0, let input else { return false }
            let loaded = snd_config_load(top, input)
            snd_input_close(input)
            var ctl: OpaquePointer?
            guard loaded == 0, snd_ctl_open_lconf(&ctl, plugin.device, 0, top) == 0, let ctl else { return false }
            defer { snd_ctl_close(ctl) }
            var value: OpaquePointer?
            guard snd_ctl_elem_value_malloc(&value) == 0, let value else { return false }
            defer { snd_ctl_elem_value_free(value) }
            snd_ctl_elem_value_set_interface(value, SND_CTL_ELEM_IFACE_CARD)
            snd_ctl_elem_value_set_name(value, name)
            snd_ctl_elem_value_set_boolean(value, 0, on ? 1 : 0)
            return snd_ctl_elem_write(ctl, value) >= 0
        }
    }

    /// Nothing plugged, the card there.
    public static func reset() {
        set("Card Gone", false)
        set("Headphone Jack", false)
        set("Line Out Jack", false)
    }

    /// Whether `fd` is readable within `ms`.
    public static func readable(_ fd: Int32, within ms: Int32 = 0) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, ms) == 1
    }

    static let source = #"""
#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

struct ctl { const char *name; int boolean; long value; };
static struct ctl ctls[] = {
    { "Headphone Jack", 1, 0 }, { "Line Out Jack", 1, 0 }, { "PCM Playback Volume", 0, 50 }, { "Card Gone", 1, 0 },
};
#define N (sizeof(ctls) / sizeof(ctls[0]))
struct jb { snd_ctl_ext_t ext; int pipe[2]; unsigned pending; int subscribed; };
static struct jb *open_handles[32];

static void notify(unsigned key) {
    for (int i = 0; i < 32; i++) {
        struct jb *j = open_handles[i];
        if (!j || !j->subscribed) continue;
        j->pending |= 1u << key;
        if (write(j->pipe[1], "x", 1) < 0) {}
    }
}
static void jb_close(snd_ctl_ext_t *ext) {
    struct jb *j = ext->private_data;
    for (int i = 0; i < 32; i++) if (open_handles[i] == j) open_handles[i] = NULL;
    close(j->pipe[0]); close(j->pipe[1]); free(j);
}
\#(ControlPlugin.lookup)
static int jb_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id) {
    (void)ext;
    snd_ctl_elem_id_set_interface(id, ctls[offset].boolean ? SND_CTL_ELEM_IFACE_CARD : SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, ctls[offset].name);
    return 0;
}
static int jb_attr(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc, unsigned int *count) {
    (void)ext;
    *type = ctls[key].boolean ? SND_CTL_ELEM_TYPE_BOOLEAN : SND_CTL_ELEM_TYPE_INTEGER;
    *acc = SND_CTL_EXT_ACCESS_READWRITE;
    *count = 1;
    return 0;
}
static int jb_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *min, long *max, long *step) {
    (void)ext; *min = 0; *max = ctls[key].boolean ? 1 : 100; *step = 1; return 0;
}
static int jb_read(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) { (void)ext; value[0] = ctls[key].value; return 0; }
static int jb_write(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
    (void)ext;
    if (value[0] == ctls[key].value) return 0;
    ctls[key].value = value[0];
    notify(key);
    return 1;
}
static void jb_subscribe(snd_ctl_ext_t *ext, int subscribe) { struct jb *j = ext->private_data; j->subscribed = subscribe; }
static int jb_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *mask) {
    struct jb *j = ext->private_data;
    char byte;
    if (ctls[3].value) return -ENODEV;
    for (unsigned int k = 0; k < N; k++) {
        if (!(j->pending & (1u << k))) continue;
        j->pending &= ~(1u << k);
        if (read(j->pipe[0], &byte, 1) < 0) {}
        snd_ctl_elem_id_set_numid(id, k + 1);
        snd_ctl_elem_id_set_interface(id, ctls[k].boolean ? SND_CTL_ELEM_IFACE_CARD : SND_CTL_ELEM_IFACE_MIXER);
        snd_ctl_elem_id_set_name(id, ctls[k].name);
        *mask = SND_CTL_EVENT_MASK_VALUE;
        return 1;
    }
    return -EAGAIN;
}
static const snd_ctl_ext_callback_t callbacks = {
    .close = jb_close, .elem_count = jb_count, .elem_list = jb_list, .find_elem = jb_find,
    .get_attribute = jb_attr, .get_integer_info = jb_info, .read_integer = jb_read,
    .write_integer = jb_write, .subscribe_events = jb_subscribe, .read_event = jb_event,
};
"""#
}
