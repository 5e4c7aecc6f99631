// SPDX-License-Identifier: MIT
import CALSA
import Glibc

/// Opening an ALSA control device (`hw:0`, `default`…), or one defined by a configuration text
/// (tests: a user-space control plugin), shared by the mixer and the jack watcher.
enum AlsaControlDevice {
    /// The opened control handle and the configuration tree it was opened from (to free after it).
    struct Opened {
        var ctl: OpaquePointer
        var config: OpaquePointer?
    }

    /// Opens `device` with `mode` (`SND_CTL_NONBLOCK` or 0), from `config` when given; the ALSA
    /// error code on failure.
    static func open(_ device: String, config: String?, mode: Int32) -> Result<Opened, AlsaCode> {
        var ctl: OpaquePointer?
        guard let config else {
            let rc = snd_ctl_open(&ctl, device, mode)
            guard rc == 0, let ctl else { return .failure(AlsaCode(rc: rc)) }
            return .success(Opened(ctl: ctl, config: nil))
        }
        var top: OpaquePointer?
        var input: OpaquePointer?
        guard snd_config_top(&top) == 0, let top else { return .failure(AlsaCode(rc: -ENOMEM)) }
        var rc = config.withCString { text -> Int32 in
            guard snd_input_buffer_open(&input, text, strlen(text)) == 0, let input else { return -ENOMEM }
            defer { snd_input_close(input) }
            return snd_config_load(top, input)
        }
        if rc == 0 { rc = snd_ctl_open_lconf(&ctl, device, mode, top) }
        guard rc == 0, let ctl else {
            snd_config_delete(top)
            return .failure(AlsaCode(rc: rc < 0 ? rc : -ENODEV))
        }
        return .success(Opened(ctl: ctl, config: top))
    }

    /// An ALSA error code (negative errno).
    struct AlsaCode: Error {
        var rc: Int32
    }
}
