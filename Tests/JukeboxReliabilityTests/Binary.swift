// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

/// The `jukebox` executable built beside the test bundle, started as a service manager would
/// (no terminal, output to files so no pipe can fill and block it). A copy of what the CLI tests
/// use, kept here because each test target owns its helpers.
enum Binary {
    /// A started process and where its output goes.
    final class Running: @unchecked Sendable {
        let process: Process
        let errPath: String
        var pid: Int32 { process.processIdentifier }

        init(process: Process, errPath: String) {
            self.process = process
            self.errPath = errPath
        }

        /// What the process wrote to stderr so far.
        var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

        /// A power cut as far as the process can tell: SIGKILL, nothing runs after it.
        func powerCut() {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }

        /// SIGTERM and wait; the exit status, nil (after a SIGKILL) when it did not exit in time.
        func stop(timeout: Double = 10) -> Int32? {
            kill(pid, SIGTERM)
            let end = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < end { usleep(10_000) }  // polls a child's exit, with a timeout
            if process.isRunning {
                powerCut()
                return nil
            }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// `.build/<triple>/debug/jukebox`: the test runner is `<name>.xctest` in the same folder.
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = (exe as NSString).deletingLastPathComponent
        if folder.hasSuffix(".xctest") { folder = (folder as NSString).deletingLastPathComponent }
        return folder + "/jukebox"
    }

    /// Starts `jukebox run --config config` with `HOME=home` (ALSA reads `~/.asoundrc` there: that
    /// is how the binary gets its own test device); stderr is appended to `errPath`.
    static func run(config: String, home: String, errPath: String) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure("no jukebox binary at \(path): run 'swift build' first")
        }
        let p = Process()
        // The player dies with the test process (`ChildDeath`: PR_SET_PDEATHSIG through setpriv).
        let command = ChildDeath.command(path, ["run", "--config", config])
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        if !FileManager.default.fileExists(atPath: errPath) { _ = FileManager.default.createFile(atPath: errPath, contents: nil) }
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        err.seekToEndOfFile()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = home
        p.environment = env
        try p.run()
        try? err.close()
        return Running(process: p, errPath: errPath)
    }
}

/// A test failure with a message (for `throw` from helpers).
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
