// SPDX-License-Identifier: MIT
import CALSA
import Glibc

/// A sound card's jack control (`Headphone Jack`: a boolean the driver sets when a plug goes in),
/// watched through the card's control device: `fd` becomes readable when a control changes, and
/// `read()` says what the jack is now. Opened non-blocking; nothing here waits. What a plug or a
/// pull means is the core's (`Event.headphones`). Owned by one thread (the loop).
public final class AlsaJack {
    /// The control device (`hw:0`, `default`…) and the control's name.
    public let device: String
    public let control: String

    private var ctl: OpaquePointer?
    private var config: OpaquePointer?
    private let numid: UInt32

    /// Opens `device`, finds the boolean control named `control` and subscribes to its changes;
    /// `config` is an ALSA configuration text defining `device` (tests). Throws `cardNotFound`
    /// (with the cards there are), `controlNotFound` (with the card's boolean controls) or `failed`.
    public init(device: String, control: String, config: String? = nil) throws(MixerError) {
        self.device = device
        self.control = control
        let opened: AlsaControlDevice.Opened
        switch AlsaControlDevice.open(device, config: config, mode: SND_CTL_NONBLOCK) {
        case .success(let o): opened = o
        case .failure(let e):
            let cards = AlsaMixer.cardNames()
            throw MixerError(kind: .cardNotFound,
                             message: "\(device): cannot open its controls (\(AlsaErrors.text(e.rc))); "
                                 + (cards.isEmpty ? "there is no sound card" : "cards: " + cards.joined(separator: ", ")),
                             available: cards)
        }
        let found = Self.booleans(opened.ctl)
        guard let match = found.first(where: { $0.name == control }) else {
            snd_ctl_close(opened.ctl)
            if let top = opened.config { snd_config_delete(top) }
            let names = found.map(\.name)
            throw MixerError(kind: .controlNotFound,
                             message: "\(device): no switch control \"\(control)\"; "
                                 + (names.isEmpty ? "it has none (no jack it reports)" : "its switches: " + names.joined(separator: ", ")),
                             available: names)
        }
        numid = match.numid
        ctl = opened.ctl
        self.config = opened.config
        let rc = snd_ctl_subscribe_events(opened.ctl, 1)
        guard rc >= 0, fd >= 0 else {
            close()
            throw MixerError(kind: .failed, message: "\(device): cannot watch \"\(control)\" (\(AlsaErrors.text(rc < 0 ? rc : -EINVAL)))")
        }
    }

    deinit { close() }

    /// The descriptor to poll for readability (-1 once closed).
    public var fd: Int32 {
        guard let ctl, snd_ctl_poll_descriptors_count(ctl) >= 1 else { return -1 }
        var p = pollfd()
        return snd_ctl_poll_descriptors(ctl, &p, 1) == 1 ? p.fd : -1
    }

    /// Whether a plug is in the jack now, read from the card.
    public func plugged() throws(MixerError) -> Bool {
        guard let ctl else { throw MixerError(kind: .failed, message: "\(device): closed") }
        var value: OpaquePointer?
        guard snd_ctl_elem_value_malloc(&value) == 0, let value else { throw MixerError(kind: .failed, message: "out of memory") }
        defer { snd_ctl_elem_value_free(value) }
        snd_ctl_elem_value_set_numid(value, numid)
        let rc = snd_ctl_elem_read(ctl, value)
        guard rc >= 0 else { throw MixerError(kind: .failed, message: "\(device): \"\(control)\": \(AlsaErrors.text(rc))") }
        return snd_ctl_elem_value_get_boolean(value, 0) != 0
    }

    /// Takes every waiting change notice; the jack's value when one was about it, nil when none was.
    /// Throws when the card went away (unplugged USB card, driver unbound) or the control was removed.
    public func read() throws(MixerError) -> Bool? {
        guard let ctl else { throw MixerError(kind: .failed, message: "\(device): closed") }
        var event: OpaquePointer?
        guard snd_ctl_event_malloc(&event) == 0, let event else { throw MixerError(kind: .failed, message: "out of memory") }
        defer { snd_ctl_event_free(event) }
        var changed = false
        // Bounded: a card that floods notices cannot hold the loop; the rest waits for the next poll.
        for _ in 0..<256 {
            let rc = snd_ctl_read(ctl, event)
            if rc == -EAGAIN || rc == 0 { break }
            guard rc > 0 else { throw MixerError(kind: .failed, message: "\(device): \(AlsaErrors.text(rc))") }
            guard snd_ctl_event_get_type(event) == SND_CTL_EVENT_ELEM, snd_ctl_event_elem_get_numid(event) == numid else { continue }
            // SND_CTL_EVENT_MASK_REMOVE is every bit set: the control is gone (the card with it).
            if snd_ctl_event_elem_get_mask(event) == UInt32.max {
                throw MixerError(kind: .failed, message: "\(device): \"\(control)\" was removed")
            }
            changed = true
        }
        return changed ? try plugged() : nil
    }

    /// Closes the control device; safe to call twice.
    public func close() {
        if let ctl { snd_ctl_close(ctl) }
        ctl = nil
        if let config { snd_config_delete(config) }
        config = nil
    }

    /// The card's boolean controls, by name and numid.
    private static func booleans(_ ctl: OpaquePointer) -> [(name: String, numid: UInt32)] {
        var list: OpaquePointer?
        guard snd_ctl_elem_list_malloc(&list) == 0, let list else { return [] }
        defer { snd_ctl_elem_list_free(list) }
        guard snd_ctl_elem_list(ctl, list) == 0 else { return [] }
        let count = min(snd_ctl_elem_list_get_count(list), 4096)
        guard count > 0, snd_ctl_elem_list_alloc_space(list, count) == 0 else { return [] }
        defer { snd_ctl_elem_list_free_space(list) }
        guard snd_ctl_elem_list(ctl, list) == 0 else { return [] }
        var info: OpaquePointer?
        guard snd_ctl_elem_info_malloc(&info) == 0, let info else { return [] }
        defer { snd_ctl_elem_info_free(info) }
        var found: [(name: String, numid: UInt32)] = []
        for i in 0..<min(snd_ctl_elem_list_get_used(list), count) {
            let numid = snd_ctl_elem_list_get_numid(list, i)
            snd_ctl_elem_info_set_numid(info, numid)
            guard snd_ctl_elem_info(ctl, info) == 0, snd_ctl_elem_info_get_type(info) == SND_CTL_ELEM_TYPE_BOOLEAN,
                  let name = snd_ctl_elem_list_get_name(list, i) else { continue }
            found.append((String(cString: name), numid))
        }
        return found
    }
}
