// SPDX-License-Identifier: MIT
import Foundation

/// One instance of the fault-injecting ALSA test device (`Sources/JukeboxTestPCM`), with its own
/// files in `directory`: the recording, the control file, the lock file and the event log.
///
/// In-process: `AlsaOutput(device: pcm.name, configText: pcm.configText)`. For another process
/// (aplay, the jukebox binary): `writeAsoundrc(home:)` and run it with `HOME` set to that folder.
/// Each instance starts with no fault; a fresh instance per test is the reset.
public final class TestPCM: @unchecked Sendable {
    /// A fault, as written to the control file (see the comment at the top of jukeboxtest.c).
    public enum Fault: String, Sendable {
        case busy, unplug, xrun, suspend, stall, nopause
    }

    /// One line of the device's event log.
    public struct Event: Sendable, Equatable, CustomStringConvertible {
        /// open, params, start, stop, pause, unpause, underrun, xrun, suspend, resume, unplug, stall,
        /// unstall, close.
        public var name: String
        /// The process that had the device open.
        public var pid: Int32
        /// Byte offset in the recording of the next frame the device would have played.
        public var heard: Int
        /// The recording's size as far as this stream had written it.
        public var recorded: Int
        /// Every `key=value` of the line (format, rate, channels, period, buffer for `params`).
        public var fields: [String: String]

        public var description: String { "\(name) heard=\(heard) recorded=\(recorded)" }
    }

    /// The PCM name the configuration defines.
    public let name: String
    /// A `plug` PCM stacked on `name`.
    public var plugName: String { name + "_plug" }
    public let directory: String
    public let speed: Double
    public let library: String
    public var recordPath: String { directory + "/record.raw" }
    public var controlPath: String { directory + "/control" }
    public var lockPath: String { directory + "/lock" }
    public var logPath: String { directory + "/events.log" }

    /// Prepares a device in `directory` (created if needed) consuming `speed` times faster than real
    /// time. Throws when the plugin library cannot be found (build the package first).
    public init(directory: String, name: String = "jukeboxtest", speed: Double = 1) throws {
        guard let library = Self.libraryPath() else {
            throw TestAudio.Failure(description: "libJukeboxTestPCM.so not found next to \(Self.executableDirectory()); "
                                    + "run swift build (or set JUKEBOX_TEST_PCM_LIB)")
        }
        self.library = library
        self.directory = directory
        self.name = name
        self.speed = speed
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The built plugin: `$JUKEBOX_TEST_PCM_LIB`, else `libJukeboxTestPCM.so` next to the running
    /// executable (the test bundle and the products share the build folder).
    public static func libraryPath() -> String? {
        if let path = ProcessInfo.processInfo.environment["JUKEBOX_TEST_PCM_LIB"] {
            return FileManager.default.fileExists(atPath: path) ? path : nil
        }
        let path = executableDirectory() + "/libJukeboxTestPCM.so"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    static func executableDirectory() -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (exe as NSString).deletingLastPathComponent
    }

    /// alsa.conf text defining `name` (and `plugName`), for `AlsaOutput(device:configText:)` or an asoundrc.
    public var configText: String {
        let speedText = speed == speed.rounded() ? String(Int(speed)) : String(speed)
        return """
        pcm_type.jukeboxtest { lib "\(library)" }
        pcm.\(name) {
            type jukeboxtest
            record "\(recordPath)"
            control "\(controlPath)"
            lock "\(lockPath)"
            log "\(logPath)"
            speed \(speedText)
        }
        pcm.\(plugName) {
            type plug
            slave.pcm "\(name)"
        }

        """
    }

    /// Writes `home/.asoundrc` with `configText`, for a process started with `HOME=home`.
    public func writeAsoundrc(home: String) throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try configText.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
    }

    /// Replaces the faults in force (an empty list is `ok`). Written to a new file renamed over the
    /// old, so the device always sees the change.
    public func set(_ faults: [Fault]) throws {
        let text = faults.isEmpty ? "ok\n" : faults.map(\.rawValue).joined(separator: "\n") + "\n"
        try text.write(toFile: controlPath, atomically: true, encoding: .utf8)
    }

    /// No fault.
    public func clear() throws { try set([]) }

    /// Every byte the device received so far, over all opens.
    public func recording() -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: recordPath))).map { [UInt8]($0) } ?? []
    }

    /// The event log so far.
    public func events() -> [Event] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return Self.events(inLog: text)
    }

    /// The events of a device log's text: one a line, `name key=value ...`.
    public static func events(inLog text: String) -> [Event] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let first = words.first else { return nil }
            var fields: [String: String] = [:]
            for word in words.dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            return Event(name: String(first), pid: Int32(fields["pid"] ?? "") ?? 0,
                         heard: Int(fields["heard"] ?? "") ?? 0, recorded: Int(fields["recorded"] ?? "") ?? 0,
                         fields: fields)
        }
    }

    /// The events called `name`.
    public func events(named name: String) -> [Event] { events().filter { $0.name == name } }

    /// The pid written to the lock file by the last opener (it may have closed since).
    public var lockHolder: Int32? {
        (try? String(contentsOfFile: lockPath, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Waits until `condition` holds, checking every 5 ms; false after `timeout` seconds.
    public static func wait(timeout: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() >= deadline { return condition() }
            usleep(5000)
        }
        return true
    }
}
