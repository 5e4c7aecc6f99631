// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// Tells the core when the kernel's sound devices change (`Event.soundDevicesChanged`), so that a
/// player waiting for a card that went away (driver unbound, USB DAC pulled, HDMI sink off) probes
/// it the moment it is back instead of polling for it.
///
/// An `EventSource` on the loop's poll: inotify on `DEV/snd` for device nodes made (the kernel's
/// devtmpfs, as a card registers) and changed (udev setting their group and mode afterwards), and
/// on `DEV` for the `snd` folder itself coming back. It decides nothing: whether a change matters
/// is the core's (`State.deviceReturnAnnounced`). Opens and closes of the nodes are not watched:
/// the player's own probes would announce themselves.
public final class SoundDeviceWatch: EventSource {
    /// The folder holding `snd` (`/dev`; a scratch folder in tests).
    public let dev: String
    private var notify: Int32 = -1
    private var devWatch: Int32 = -1
    private var sndWatch: Int32 = -1

    /// Starts watching `dev`/snd (and `dev`, for the folder's return).
    public init(dev: String = "/dev") {
        self.dev = dev
        notify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if notify >= 0 { devWatch = inotify_add_watch(notify, cPath(dev), UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)) }
        watchSnd()
    }

    deinit {
        if notify >= 0 { close(notify) }
    }

    /// Whether the watch runs: announcements will come (false when inotify or `dev` could not be
    /// had; a missing `snd` folder is watched for).
    public var isWatching: Bool { devWatch >= 0 || sndWatch >= 0 }

    /// Whether the ALSA device `name` is a kernel card's, whose return the kernel announces under
    /// /dev/snd: `hw:` and `plughw:` names (also `sysdefault:`, `front:`, `iec958:` and `hdmi:`,
    /// which name a card). `default` and plugins (pulse, pipewire, a test device) may be anything:
    /// they are polled.
    public static func namesKernelCard(_ name: String) -> Bool {
        ["hw:", "plughw:", "sysdefault:", "front:", "iec958:", "hdmi:"].contains { name.hasPrefix($0) }
    }

    public var fds: [Int32] { notify >= 0 ? [notify] : [] }

    public var needsMaintenance: Bool { false }

    public func maintain() {}

    public func read(fd: Int32) -> [Event] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var changed = false, sndBack = false
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= n {
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let length = Int(event.len)
                    if event.wd == sndWatch {
                        if event.mask & UInt32(IN_IGNORED) != 0 {
                            sndWatch = -1
                        } else if event.mask & UInt32(IN_CREATE | IN_ATTRIB | IN_MOVED_TO) != 0 {
                            changed = true
                        }
                    } else if length > 0, offset + header + length <= n {
                        // In `dev`: only the `snd` folder matters (a tty or a disk node does not).
                        let name = raw[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                        if name.elementsEqual("snd".utf8) { sndBack = true }
                    }
                    offset += header + length
                }
            }
        }
        if sndBack || sndWatch < 0 {
            watchSnd()
            if sndBack { changed = true }
        }
        return changed ? [.soundDevicesChanged] : []
    }

    private func watchSnd() {
        guard notify >= 0 else { return }
        let mask = UInt32(IN_CREATE | IN_ATTRIB | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR)
        sndWatch = inotify_add_watch(notify, cPath(dev.hasSuffix("/") ? dev + "snd" : dev + "/snd"), mask)
    }
}
