// SPDX-License-Identifier: MIT
import Foundation

/// Debian's `ffmpeg` for the loudness tests: it makes their files, and its `ebur128` filter's
/// integrated loudness (the summary it prints, in 0.1 LU steps) is the reference they hold the player to.
public enum FFmpegLoudness {
    public static let path = "/usr/bin/ffmpeg"

    /// Why ffmpeg gave no figure.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs ffmpeg quietly with `arguments` (making a test file); throws when it fails.
    public static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw Failure(description: "ffmpeg \(arguments): exit \(process.terminationStatus)") }
    }

    /// The integrated loudness (LUFS) of the input `input` names (`["-i", path]`, or a raw
    /// format's options before it).
    public static func integrated(_ input: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-hide_banner", "-nostats"] + input + ["-af", "ebur128", "-f", "null", "-"]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let summary = text.range(of: "Integrated loudness:") else { throw Failure(description: "no ebur128 summary: \(text)") }
        let line = text[summary.upperBound...].split(separator: "\n").first { $0.contains("I:") } ?? ""
        guard let value = line.split(separator: " ").first(where: { Double($0) != nil }).flatMap({ Double($0) }) else {
            throw Failure(description: "no figure in \(line)")
        }
        return value
    }
}
