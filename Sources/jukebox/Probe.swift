// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxAudio
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// `jukebox probe …`: bring-up tools for a new box, each one small and direct.
enum Probe {
    static func run(_ args: [String]) throws(UsageError) -> Int32 {
        guard let what = args.first else { throw UsageError(message: "probe needs a subject: \(subjects) (see: jukebox probe --help)") }
        let rest = Array(args.dropFirst())
        switch what {
        case "--help", "-h":
            writeAll(1, Help.probe + "\n")
            return 0
        case "tone": return try tone(rest)
        case "replay-i2c": return try ProbeReplay.run(rest)
        default:
            return try ProbeBoard.run(what, rest)
        }
    }

    /// The subjects, for messages.
    static var subjects: String { Help.probeSubjects.map(\.name).joined(separator: ", ") }

    /// Prints `probe NAME --help`; exit code 0.
    static func subjectHelp(_ name: String) -> Int32 {
        Subcommands.help(Help.probe(name) ?? Help.probe)
    }

    /// A sine on the device: the quickest "does this box make sound" check.
    static func tone(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--device", "--seconds", "--frequency"], flags: [], command: "probe tone")
        if a.wantsHelp { return subjectHelp("tone") }
        let device = a.options["--device"] ?? "default"
        let seconds = Double(try a.int("--seconds", in: 1...60) ?? 2)
        let frequency = Double(try a.int("--frequency", in: 20...20000) ?? 440)
        let rate = 48_000
        let output = AlsaOutput(device: device)
        do throws(OutputError) {
            try output.open(format: AudioFormat(sampleRate: rate, channels: 2, sample: .int16))
        } catch {
            writeAll(2, "jukebox: cannot open \(device): \(AudioWiring.describe(error))\n")
            return 1
        }
        defer { output.close() }
        writeAll(1, "playing \(Int(frequency)) Hz for \(Int(seconds)) s on \(device)\n")
        let total = Int(seconds * Double(rate))
        var frame = 0
        var buffer = [Int16](repeating: 0, count: 1024 * 2)
        while frame < total {
            let count = min(1024, total - frame)
            for i in 0..<count {
                let t = Double(frame + i) / Double(rate)
                // A 10 ms fade at both ends, so the probe itself does not click.
                let edge = min(1, t / 0.01, (Double(total - frame - i) / Double(rate)) / 0.01)
                let v = Int16(0.3 * edge * sin(2 * .pi * frequency * t) * 32767)
                buffer[2 * i] = v
                buffer[2 * i + 1] = v
            }
            let result = buffer.withUnsafeBytes { raw -> Result<Int, OutputError> in
                do throws(OutputError) { return .success(try output.write(raw.baseAddress!, frames: count)) } catch { return .failure(error) }
            }
            switch result {
            case .success(let n): frame += n
            case .failure(let error):
                writeAll(2, "jukebox: \(device): \(AudioWiring.describe(error))\n")
                return 1
            }
        }
        output.drain()
        return 0
    }
}
