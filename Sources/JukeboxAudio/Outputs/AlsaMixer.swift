// SPDX-License-Identifier: MIT
import CALSA
import Glibc
import JukeboxSystem

/// Why a mixer control could not be opened or set.
public struct MixerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Equatable {
        /// No sound card (or control device) by that name; `available` lists the cards that exist.
        case cardNotFound
        /// The card has no playback volume control by that name; `available` lists the ones it has.
        case controlNotFound
        /// The control refused a value or went away (card unplugged).
        case failed
    }

    /// The class of failure.
    public var kind: Kind
    /// One readable line saying what is wrong and what exists instead.
    public var message: String
    /// Card names (`cardNotFound`) or playback volume control names (`controlNotFound`) that do exist.
    public var available: [String]

    /// Creates an error.
    public init(kind: Kind, message: String, available: [String] = []) {
        self.kind = kind
        self.message = message
        self.available = available
    }

    public var description: String { message }
}

/// A hardware volume: one ALSA simple mixer control (`PCM`, `Master`, `Digital`, `Headphone`…) on
/// one card, set on the mapped-volume curve of `VolumeCurve` over the control's dB range, or linearly
/// over its raw steps when the driver gives no dB information.
///
/// Percent 0 sets the control's minimum and, when the control has a playback switch, turns it off
/// (silence even where the minimum is not mute); any other value turns the switch on again.
/// Every method is thread-safe; each call is a few non-blocking control ioctls.
public final class AlsaMixer: @unchecked Sendable {
    /// The control device attached (`hw:CARD=DAC`, `default`…).
    public let device: String
    /// The control's name and index.
    public let control: String
    public let index: Int
    /// Whether the control has a dB range (then the curve is perceptual; otherwise linear in steps).
    public let hasDB: Bool
    /// Whether the control has a playback switch (used for percent 0).
    public let hasSwitch: Bool
    /// The control's raw range and, when `hasDB`, its dB range in 0.01 dB.
    public let rawRange: ClosedRange<Int>
    public let dBRange: ClosedRange<Int>?

    private let lock = Monitor()
    private var mixer: OpaquePointer?
    private var elem: OpaquePointer?
    private var config: OpaquePointer?

    /// Opens control `control` (index `index`) on `card`: a card name or number (`DAC`, `1`, attached
    /// as `hw:CARD=…`), or an ALSA control device name containing `:` or `default`.
    /// Throws `.cardNotFound` or `.controlNotFound` with what exists instead.
    public convenience init(card: String, control: String, index: Int = 0) throws(MixerError) {
        try self.init(device: Self.deviceName(card: card), control: control, index: index, config: nil)
    }

    /// Opens a control on `device`; with `config` (ALSA configuration text), `device` is looked up in it
    /// alone instead of the system configuration (hermetic tests with a user-space control plugin).
    init(device: String, control: String, index: Int, config: String?) throws(MixerError) {
        self.device = device
        self.control = control
        self.index = index
        var handle: OpaquePointer?
        guard snd_mixer_open(&handle, 0) == 0, let handle else {
            throw MixerError(kind: .failed, message: "\(device): cannot create a mixer")
        }
        var ownedConfig: OpaquePointer?
        do throws(MixerError) {
            ownedConfig = try Self.attach(handle, device: device, config: config)
            try Self.check(snd_mixer_selem_register(handle, nil, nil), "\(device): register simple mixer")
            try Self.check(snd_mixer_load(handle), "\(device): load mixer controls")
            let found = try Self.find(handle, device: device, control: control, index: index)
            var lo = 0, hi = 0
            snd_mixer_selem_get_playback_volume_range(found, &lo, &hi)
            rawRange = lo...max(lo, hi)
            var dLo = 0, dHi = 0
            if snd_mixer_selem_get_playback_dB_range(found, &dLo, &dHi) == 0, dLo < dHi {
                dBRange = dLo...dHi
            } else {
                dBRange = nil
            }
            hasDB = dBRange != nil
            hasSwitch = snd_mixer_selem_has_playback_switch(found) != 0
            elem = found
        } catch {
            snd_mixer_close(handle)
            if let ownedConfig { snd_config_delete(ownedConfig) }
            throw error
        }
        mixer = handle
        self.config = ownedConfig
    }

    deinit { close() }

    /// Sets the volume, `percent` clamped to 0...100, on all channels. Throws `.failed` when the
    /// control refuses or the card went away (then every later call throws too).
    public func set(percent: Int) throws(MixerError) {
        lock.lock()
        defer { lock.unlock() }
        guard let elem else { throw MixerError(kind: .failed, message: "\(device): mixer is closed") }
        let p = min(max(percent, 0), 100)
        let fraction = Double(p) / 100
        if let dB = dBRange {
            let value = p == 0 ? dB.lowerBound : Int(VolumeCurve.dB(fraction: fraction, min: dB.lowerBound, max: dB.upperBound).rounded())
            // Nearest step (dir 0); the curve is monotonic, so a louder percent is never quieter.
            try Self.check(snd_mixer_selem_set_playback_dB_all(elem, max(value, dB.lowerBound), 0), "\(device) \(control): set dB")
        } else {
            let value = VolumeCurve.raw(fraction: fraction, min: rawRange.lowerBound, max: rawRange.upperBound)
            try Self.check(snd_mixer_selem_set_playback_volume_all(elem, value), "\(device) \(control): set volume")
        }
        if hasSwitch {
            try Self.check(snd_mixer_selem_set_playback_switch_all(elem, p == 0 ? 0 : 1), "\(device) \(control): set switch")
        }
    }

    /// The volume the control shows now (also after another program changed it), on the same curve;
    /// 0 when its switch is off; nil when closed or unreadable.
    public func get() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard let mixer, let elem else { return nil }
        // Take in changes made elsewhere; poll first, as reading events blocks when there are none.
        if snd_mixer_wait(mixer, 0) > 0 { snd_mixer_handle_events(mixer) }
        let channel = SND_MIXER_SCHN_FRONT_LEFT
        if hasSwitch {
            var on: Int32 = 1
            if snd_mixer_selem_get_playback_switch(elem, channel, &on) == 0, on == 0 { return 0 }
        }
        if let dB = dBRange {
            var value = 0
            guard snd_mixer_selem_get_playback_dB(elem, channel, &value) == 0 else { return nil }
            return VolumeCurve.percent(fraction: VolumeCurve.fraction(dB: value, min: dB.lowerBound, max: dB.upperBound))
        }
        var value = 0
        guard snd_mixer_selem_get_playback_volume(elem, channel, &value) == 0 else { return nil }
        return VolumeCurve.percent(fraction: VolumeCurve.fraction(raw: value, min: rawRange.lowerBound, max: rawRange.upperBound))
    }

    /// The control's raw value on its first channel (for tests and diagnostics).
    func rawValue() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard let elem else { return nil }
        var value = 0
        return snd_mixer_selem_get_playback_volume(elem, SND_MIXER_SCHN_FRONT_LEFT, &value) == 0 ? value : nil
    }

    /// Releases the mixer; later `set` throws and `get` returns nil. Safe to call twice.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        if let mixer { snd_mixer_close(mixer) }
        if let config { snd_config_delete(config) }
        mixer = nil
        elem = nil
        config = nil
    }

    /// The control device for a card as given in the configuration.
    static func deviceName(card: String) -> String {
        card == "default" || card.contains(":") ? card : "hw:CARD=\(card)"
    }

    /// The names of the sound cards present (`snd_card_next`), e.g. `0: vc4hdmi`, `1: DAC`.
    public static func cardNames() -> [String] {
        var names: [String] = []
        var card: Int32 = -1
        while snd_card_next(&card) == 0, card >= 0, names.count < 64 {
            var id: UnsafeMutablePointer<CChar>?
            var name = "card \(card)"
            var ctl: OpaquePointer?
            if snd_ctl_open(&ctl, "hw:\(card)", 0) == 0, let ctl {
                var info: OpaquePointer?
                if snd_ctl_card_info_malloc(&info) == 0, let info {
                    if snd_ctl_card_info(ctl, info) == 0 { name = "\(card): " + String(cString: snd_ctl_card_info_get_id(info)) }
                    snd_ctl_card_info_free(info)
                }
                snd_ctl_close(ctl)
            } else if snd_card_get_name(card, &id) == 0, let id {
                name = "\(card): " + String(cString: id)
                free(id)
            }
            names.append(name)
        }
        return names
    }

    // MARK: - Opening

    private static func attach(_ handle: OpaquePointer, device: String, config: String?) throws(MixerError) -> OpaquePointer? {
        guard let config else {
            let rc = snd_mixer_attach(handle, device)
            if rc < 0 { throw cardNotFound(device, rc) }
            return nil
        }
        let opened: AlsaControlDevice.Opened
        switch AlsaControlDevice.open(device, config: config, mode: 0) {
        case .success(let o): opened = o
        case .failure(let e): throw cardNotFound(device, e.rc)
        }
        var hctl: OpaquePointer?
        var rc = snd_hctl_open_ctl(&hctl, opened.ctl)
        if rc < 0 { snd_ctl_close(opened.ctl) }
        if rc == 0, let hctl {
            rc = snd_mixer_attach_hctl(handle, hctl) // the mixer owns hctl from here, also on failure
        }
        if rc < 0 {
            if let top = opened.config { snd_config_delete(top) }
            throw cardNotFound(device, rc)
        }
        return opened.config
    }

    private static func find(_ handle: OpaquePointer, device: String, control: String, index: Int) throws(MixerError) -> OpaquePointer {
        var sid: OpaquePointer?
        guard snd_mixer_selem_id_malloc(&sid) == 0, let sid else { throw MixerError(kind: .failed, message: "out of memory") }
        defer { snd_mixer_selem_id_free(sid) }
        snd_mixer_selem_id_set_name(sid, control)
        snd_mixer_selem_id_set_index(sid, UInt32(max(0, index)))
        if let found = snd_mixer_find_selem(handle, sid), snd_mixer_selem_has_playback_volume(found) != 0 {
            return found
        }
        let names = playbackVolumeNames(handle)
        let wanted = index > 0 ? "\(control),\(index)" : control
        let instead = names.isEmpty
            ? "it has no playback volume control (use software volume)"
            : "controls with a playback volume: " + names.joined(separator: ", ")
        throw MixerError(kind: .controlNotFound, message: "\(device): no mixer control \"\(wanted)\"; \(instead)", available: names)
    }

    /// The names of the simple controls with a playback volume (`Name` or `Name,index`), in mixer order.
    private static func playbackVolumeNames(_ handle: OpaquePointer) -> [String] {
        var names: [String] = []
        var elem = snd_mixer_first_elem(handle)
        while let e = elem {
            if snd_mixer_selem_is_active(e) != 0, snd_mixer_selem_has_playback_volume(e) != 0 {
                let name = String(cString: snd_mixer_selem_get_name(e))
                let index = snd_mixer_selem_get_index(e)
                names.append(index > 0 ? "\(name),\(index)" : name)
            }
            elem = snd_mixer_elem_next(e)
        }
        return names
    }

    private static func cardNotFound(_ device: String, _ rc: Int32) -> MixerError {
        let cards = cardNames()
        let instead = cards.isEmpty ? "there is no sound card" : "cards: " + cards.joined(separator: ", ")
        return MixerError(kind: .cardNotFound,
                          message: "\(device): cannot open its mixer (\(AlsaErrors.text(rc))); \(instead)",
                          available: cards)
    }

    private static func check(_ rc: Int32, _ what: String) throws(MixerError) {
        if rc < 0 { throw MixerError(kind: .failed, message: "\(what): \(AlsaErrors.text(rc))") }
    }
}
