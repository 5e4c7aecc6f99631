// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

/// Runs the `jukebox` executable built beside the test bundle.
enum Jukebox {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A started process with its output collected into files (no pipe can fill and block it).
    final class Running {
        let process: Process
        let outPath: String
        let errPath: String

        init(process: Process, outPath: String, errPath: String) {
            self.process = process
            self.outPath = outPath
            self.errPath = errPath
        }

        /// What it has written to stdout so far.
        var stdoutSoFar: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }

        /// Waits for exit; nil (after killing it) when it did not exit in time.
        func wait(timeout: Double) -> Result? {
            let end = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < end { Thread.sleep(forTimeInterval: 0.01) }  // polls a child's exit, with a timeout
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            process.waitUntilExit()
            defer { try? FileManager.default.removeItem(atPath: outPath); try? FileManager.default.removeItem(atPath: errPath) }
            return Result(status: process.terminationStatus,
                          stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                          stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        }
    }

    /// The binary beside the test bundle, or `$JUKEBOX_BINARY` (to run the tests against another build).
    static var binary: String {
        if let other = ProcessInfo.processInfo.environment["JUKEBOX_BINARY"], !other.isEmpty { return other }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = (exe as NSString).deletingLastPathComponent
        // The test runner is .build/<triple>/debug/<name>.xctest (a file on Linux).
        if folder.hasSuffix(".xctest") { folder = (folder as NSString).deletingLastPathComponent }
        return folder + "/jukebox"
    }

    /// Starts the binary; `environment` adds (or, with nil, removes) variables; `stdin` is
    /// /dev/null unless given (a pipe a test writes lines to).
    /// `asUser`: run as that uid and gid (through setpriv; the tests must run as root for it).
    static func start(_ args: [String], home: String? = nil, environment: [String: String?] = [:],
                      stdin: FileHandle? = nil, asUser: UInt32? = nil) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw NSError(domain: "jukebox", code: 1, userInfo: [NSLocalizedDescriptionKey: "no jukebox binary at \(binary): run 'swift build' first"])
        }
        let p = Process()
        // The player dies with the test process (`ChildDeath`: PR_SET_PDEATHSIG through setpriv).
        let command = ChildDeath.command(binary, args, options: asUser.map { ["--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? [])
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        let base = NSTemporaryDirectory() + "jukebox-out-" + UUID().uuidString
        FileManager.default.createFile(atPath: base + ".out", contents: nil)
        FileManager.default.createFile(atPath: base + ".err", contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: base + ".out")
        p.standardError = FileHandle(forWritingAtPath: base + ".err")
        p.standardInput = stdin ?? FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        // ALSA reads ~/.asoundrc: this is how a test hands the binary its test device.
        if let home { env["HOME"] = home }
        for (name, value) in environment { env[name] = value }
        p.environment = env
        try p.run()
        return Running(process: p, outPath: base + ".out", errPath: base + ".err")
    }

    static func run(_ args: [String], timeout: Double = 20, home: String? = nil, environment: [String: String?] = [:],
                    asUser: UInt32? = nil) throws -> Result {
        guard let r = try start(args, home: home, environment: environment, asUser: asUser).wait(timeout: timeout) else {
            throw NSError(domain: "jukebox", code: 2, userInfo: [NSLocalizedDescriptionKey: "jukebox \(args) did not finish in \(timeout) s"])
        }
        return r
    }
}
