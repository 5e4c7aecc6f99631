// SPDX-License-Identifier: MIT
import Foundation
import Glibc

/// A real Icecast server (Debian's `icecast2`) run by the test, not the system service: its config
/// is written into the test's folder (127.0.0.1, a free port, no chroot, logs and pidfile there),
/// so it never meets an installed one (which listens on 8000). A source client (Python, `source`)
/// feeds a mount the way a streaming tool does: `PUT /mount` with Basic auth `source:PASSWORD`,
/// `Content-Type: audio/mpeg` and `ice-name`, paced at the file's byte rate, looping. Titles are set
/// through Icecast's admin API (`updateTitle`). Icecast refuses to run as root, so as root it runs
/// as `nobody` (setpriv) in a folder handed to nobody. Throws `RadioServer.Unavailable` without
/// icecast2 or python3 (a skip), `Failure` when it is there and does not work; every wait is
/// bounded, and neither icecast2 nor the source client outlives a test process that is killed.
public final class IcecastServer {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The folder holding its config, logs and pidfile.
    public let folder: String
    private let sourcePassword = "jukebox-source"
    private let adminPassword = "jukebox-admin"
    private let python: String
    private let process: Process
    private var sources: [Process] = []

    static let sourceScript = #"""
import os, socket, sys, time, base64
parent = os.getppid()
port, mount, path, name, rate, password, ctype = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
data = open(path, 'rb').read()
deadline = time.monotonic() + 10
while True:
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=5)
        auth = base64.b64encode(('source:' + password).encode()).decode()
        s.sendall(('PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Basic %s\r\n'
                   'Content-Type: %s\r\nice-name: %s\r\nice-public: 0\r\n\r\n' % (mount, port, auth, ctype, name)).encode())
        answer = b''
        while b'\r\n\r\n' not in answer:
            chunk = s.recv(1024)
            if not chunk: break
            answer += chunk
        if answer.split(b' ')[1:2] == [b'200']: break
        s.close()
    except OSError:
        pass
    # Icecast not listening yet (it was just started): try again until the deadline.
    if time.monotonic() > deadline:
        print('no answer from icecast', flush=True)
        sys.exit(1)
    time.sleep(0.05)
print('streaming', flush=True)
start = time.monotonic()
sent = 0
while True:
    for i in range(0, len(data), 4096):
        piece = data[i:i + 4096]
        s.sendall(piece)
        sent += len(piece)
        # The test process is gone (killed, crashed): stop, do not stream into an orphan forever.
        if os.getppid() != parent: sys.exit(0)
        ahead = start + sent / rate - time.monotonic()
        if ahead > 0: time.sleep(ahead)
"""#

    static let adminScript = #"""
import sys, base64, urllib.request, urllib.parse
port, mount, song, password = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
query = urllib.parse.urlencode({'mount': mount, 'mode': 'updinfo', 'song': song})
request = urllib.request.Request('http://127.0.0.1:%d/admin/metadata?%s' % (port, query))
request.add_header('Authorization', 'Basic ' + base64.b64encode(('admin:' + password).encode()).decode())
try:
    print(urllib.request.urlopen(request, timeout=5).status, flush=True)
except Exception as e:
    print('failed: %s' % e, flush=True)
"""#

    /// Starts icecast2 with a config written into a folder of its own (mkdtemp in the temporary
    /// folder: a test's scratch folder may be closed to the `nobody` it runs as under root) and
    /// returns once it listens (about 10 s at most; a port taken between the kernel's pick and
    /// icecast2's bind is picked again, 3 tries). The Python scripts are not in that folder: under
    /// root it belongs to nobody, and root must not run what nobody can write.
    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/icecast2") else {
            throw RadioServer.Unavailable(description: "icecast2 is not installed: no Icecast test (apt-get install icecast2)")
        }
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw RadioServer.Unavailable(description: "python3 is not installed: no Icecast source client") }
        let setpriv = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
        if getuid() == 0 && !setpriv {
            throw RadioServer.Unavailable(description: "running as root without setpriv: icecast2 will not run as root")
        }
        self.python = python
        var template = Array((NSTemporaryDirectory() + "/jukebox-icecast-XXXXXX").utf8CString)
        // The name from the array itself: mkdtemp's result points into its buffer, which a release
        // build may free once the array is not used again.
        guard mkdtemp(&template) != nil else { throw RadioServer.Unavailable(description: "no folder for icecast2") }
        let folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.folder = folder
        var started = false
        // A failed start leaves no folder behind (deinit does not run for an init that throws).
        defer { if !started { try? FileManager.default.removeItem(atPath: folder) } }
        if getuid() == 0 {
            // "You should not run icecast2 as root": run it as nobody, in a folder nobody may write.
            guard chown(folder, 65534, 65534) == 0 else {
                throw RadioServer.Unavailable(description: "cannot hand \(folder) to nobody for icecast2")
            }
        }
        var tries = 0
        while true {
            let port = try Self.freePort()
            let config = Self.config(folder: folder, port: port, source: sourcePassword, admin: adminPassword)
            try config.write(toFile: folder + "/icecast.xml", atomically: false, encoding: .utf8)
            let process = Process()
            var arguments = ["/usr/bin/icecast2", "-c", folder + "/icecast.xml"]
            if setpriv {
                // SIGTERM when the test process dies (killed, crashed): no orphan icecast2 (setpriv
                // sets it after the user change, which would clear it).
                var options = ["--pdeathsig", "TERM"]
                if getuid() == 0 { options += ["--reuid=65534", "--regid=65534", "--clear-groups"] }
                arguments = options + arguments
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            } else {
                process.executableURL = URL(fileURLWithPath: arguments.removeFirst())
            }
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.listening(process, port: port) {
                self.port = port
                self.process = process
                break
            }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            tries += 1
            if tries == 3 {
                let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
                throw Failure(description: "icecast2 did not listen on 127.0.0.1 (3 tries): \(log.suffix(600))")
            }
        }
        started = true
    }

    /// Whether icecast2 accepts connections on `port` within 10 s (false at once when it exited:
    /// its port was taken).
    private static func listening(_ process: Process, port: Int) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if accepts(port) { return process.isRunning }
            usleep(50_000)
        }
        return false
    }

    /// Whether a connection to 127.0.0.1:`port` is accepted now.
    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    deinit {
        for source in sources where source.isRunning {
            source.terminate()
            source.waitUntilExit()
        }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `http://127.0.0.1:PORT` + `mount`.
    public func url(_ mount: String) -> String { "http://127.0.0.1:\(port)\(mount)" }

    /// Icecast is installed and started but did not do its part (a test fails with it, not skips).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Feeds `mount` with `mp3` (looping, `bytesPerSecond` at most) as station `name`, sent as
    /// `contentType` (an Ogg file as `audio/ogg`: Icecast then parses its pages and inserts no ICY
    /// metadata); returns once Icecast has accepted the source (about 10 s at most, else `Failure`
    /// with the error log's end).
    public func startSource(mount: String, mp3: String, name: String, bytesPerSecond: Int,
                            contentType: String = "audio/mpeg") throws {
        let source = Process()
        source.executableURL = URL(fileURLWithPath: python)
        // -I: no script folder, current folder or PYTHON* variables on its module path.
        source.arguments = ["-I", "-c", Self.sourceScript, String(port), mount, mp3, name, String(bytesPerSecond), sourcePassword,
                            contentType]
        let out = Pipe()
        source.standardOutput = out
        source.standardError = FileHandle.nullDevice
        try source.run()
        sources.append(source)
        let line = Self.firstLine(out)
        guard line == "streaming" else {
            throw Failure(description: "the Icecast source was not accepted (\(line)): \(errorLog().suffix(600))")
        }
    }

    /// Sets `mount`'s title through the admin API (`/admin/metadata?mode=updinfo`); returns the HTTP
    /// status, or the failure in words.
    public func updateTitle(mount: String, song: String) throws -> String {
        let admin = Process()
        admin.executableURL = URL(fileURLWithPath: python)
        admin.arguments = ["-I", "-c", Self.adminScript, String(port), mount, song, adminPassword]
        let out = Pipe()
        admin.standardOutput = out
        admin.standardError = FileHandle.nullDevice
        try admin.run()
        let line = Self.firstLine(out)
        admin.waitUntilExit()
        return line
    }

    /// Icecast's error log so far (for failure messages).
    public func errorLog() -> String {
        (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
    }

    /// What a failure message needs to tell the server's side: whether each source client still
    /// runs, and the ends of the error and access logs (a listener shows in the access log once
    /// its connection ends).
    public func diagnosis() -> String {
        let access = (try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? ""
        let running = sources.map { $0.isRunning ? "running" : "exited \($0.terminationStatus)" }
        return "sources: \(running); error.log: \(errorLog().suffix(600)); access.log: \(access.suffix(400))"
    }

    private static func firstLine(_ pipe: Pipe) -> String {
        var line = Data()
        while let byte = try? pipe.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            line += byte
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// A port free on 127.0.0.1 now (the kernel's pick, released for Icecast or another server to bind).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RadioServer.Unavailable(description: "no socket for a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw RadioServer.Unavailable(description: "no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The server's config: everything in `folder`, nothing of the installed service's.
    static func config(folder: String, port: Int, source: String, admin: String) -> String {
        var lines: [String] = []
        lines.append("<icecast>")
        lines.append("<location>jukebox test</location><admin>test@localhost</admin><hostname>127.0.0.1</hostname>")
        // A small burst: a new listener gets about 1 s of audio at once (the default is 64 KiB).
        lines.append("<limits><clients>8</clients><sources>2</sources><source-timeout>10</source-timeout>"
                     + "<burst-on-connect>1</burst-on-connect><burst-size>16384</burst-size></limits>")
        lines.append("<authentication><source-password>\(source)</source-password>"
                     + "<admin-user>admin</admin-user><admin-password>\(admin)</admin-password></authentication>")
        lines.append("<listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>")
        lines.append("<paths><basedir>\(folder)</basedir><logdir>\(folder)</logdir>"
                     + "<webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot>"
                     + "<pidfile>\(folder)/icecast.pid</pidfile></paths>")
        lines.append("<logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>")
        lines.append("<security><chroot>0</chroot></security>")
        lines.append("</icecast>")
        return lines.joined(separator: "\n") + "\n"
    }
}
