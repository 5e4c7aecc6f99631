// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxAudio
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The headphone jack the config's `headphones` names, as an event source: the card's control
/// device is polled with the loop's other descriptors, and each change of the jack becomes
/// `Event.headphones` (the core decides what it means). When the jack is opened (at start, and
/// again after its card came back) its state is reported once, through an eventfd of its own, so
/// the core always knows it. A card that goes away is logged and looked for once a second.
public final class JackSource: EventSource {
    private let settings: HeadphoneJackSettings
    private let config: String?
    private let log: Log
    private var jack: AlsaJack?
    /// Readable while the opened jack's state is still to be reported.
    private var wake: Int32
    /// The last state reported (a notice that changes nothing is not an event).
    private var reported: Bool?
    private var problem: String?

    /// Opens the jack at once (or keeps looking for it); `config` defines the card (tests).
    public init(_ settings: HeadphoneJackSettings, log: Log, config: String? = nil) {
        self.settings = settings
        self.config = config
        self.log = log
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        maintain()
    }

    deinit { close() }

    public var fds: [Int32] { [jack?.fd ?? -1, wake].filter { $0 >= 0 } }

    public func read(fd: Int32) -> [Event] {
        guard let jack else { return [] }
        do throws(MixerError) {
            let now: Bool?
            if fd == wake {
                var count: UInt64 = 0
                _ = Glibc.read(wake, &count, 8)
                now = try jack.plugged()
            } else {
                now = try jack.read()
            }
            guard let now, now != reported else { return [] }
            reported = now
            return [.headphones(plugged: now)]
        } catch {
            log.warning("headphones: \(error.message); looking for the jack again")
            jack.close()
            self.jack = nil
            return []
        }
    }

    public func maintain() {
        guard jack == nil else { return }
        do throws(MixerError) {
            let opened = try AlsaJack(device: settings.card, control: settings.control, config: config)
            jack = opened
            problem = nil
            log.info("headphones: watching \"\(DisplayText.inert(settings.control))\" on \(DisplayText.inert(settings.card))")
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, 8)
        } catch {
            // Said once, not at every look.
            if problem != error.message { log.warning("headphones: \(error.message)") }
            problem = error.message
        }
    }

    public var needsMaintenance: Bool { jack == nil }

    /// Closes the jack and the eventfd; safe to call twice.
    public func close() {
        jack?.close()
        jack = nil
        if wake >= 0 { _ = Glibc.close(wake) }
        wake = -1
    }
}
