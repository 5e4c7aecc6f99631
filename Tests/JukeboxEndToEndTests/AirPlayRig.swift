// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport

/// A real AirPlay receiver for AirPlayTests: Debian's shairport-sync with the package's session
/// hooks, and what it needs to start, private to the test: a dbus-daemon on a socket in the
/// test's folder (shairport-sync and avahi-daemon find it through `DBUS_SYSTEM_BUS_ADDRESS`) and an
/// avahi-daemon on loopback only (shairport-sync 3.3.8 knows no mDNS but Avahi's and exits
/// without it). avahi-daemon keeps its pid file at /run/avahi-daemon/pid, one per machine, so it
/// runs in a mount namespace of its own (`unshare -m`, root only) with a tmpfs there: a machine's
/// own avahi-daemon, if any, is left alone. Every child dies with the test process (`ChildDeath`),
/// and `stop()` kills them all.
final class AirPlayRig {
    static let shairport = "/usr/bin/shairport-sync"
    static let avahi = "/usr/sbin/avahi-daemon"
    static let dbus = "/usr/bin/dbus-daemon"
    static let unshare = "/usr/bin/unshare"

    let dir: String
    /// shairport-sync's RTSP port on 127.0.0.1.
    let port: Int
    private(set) var children: [Jukebox.Running] = []
    var bus: String { dir + "/bus" }

    /// What is missing to run the rig here, or nil.
    static func missing() -> String? {
        if geteuid() != 0 {
            return "the AirPlay test needs root (its avahi-daemon runs in a mount namespace of its own); CI runs as root"
        }
        let packages = [(shairport, "shairport-sync"), (avahi, "avahi-daemon"), (dbus, "dbus"), (unshare, "util-linux")]
        let absent = packages.filter { !FileManager.default.isExecutableFile(atPath: $0.0) }.map(\.1)
        return absent.isEmpty ? nil : "the AirPlay test needs " + absent.joined(separator: ", ") + " (board/setup.sh installs them)"
    }

    /// Starts dbus-daemon, avahi-daemon and shairport-sync with `sessioncontrol` (a libconfig group)
    /// and `extra` (more groups), once shairport-sync has its service registered with Avahi.
    init(dir: String, sessioncontrol: String, extra: String = "") throws {
        self.dir = dir
        port = try MPDWire.freePort()
        let busConfig = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(dir)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/><allow own="*"/>
                <allow send_type="method_call"/><allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/><allow receive_type="method_return"/>
                <allow receive_type="error"/><allow receive_type="signal"/>
              </policy>
            </busconfig>

            """
        try busConfig.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        // Loopback only: nothing is announced on the machine's network.
        let avahiConfig = """
            [server]
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=lo
            enable-dbus=yes
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-hinfo=no
            publish-workstation=no
            [reflector]
            enable-reflector=no

            """
        try avahiConfig.write(toFile: dir + "/avahi.conf", atomically: true, encoding: .utf8)
        // The RTP ports: a range of 100 from a base away from shairport-sync's default (6001), so a
        // machine's own receiver does not stand in the way (shairport-sync tries the next on a clash).
        let udpBase = 20_000 + Int.random(in: 0..<400) * 100
        let general = """
            general = { name = "jukebox-test-\(port)"; port = \(port); udp_port_base = \(udpBase); udp_port_range = 100;
                        output_backend = "dummy"; mdns_backend = "avahi"; };

            """
        try (general + sessioncontrol + "\n" + extra).write(toFile: dir + "/shairport-sync.conf", atomically: true, encoding: .utf8)

        let env = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + bus]
        do {
            let daemon = try spawn("dbus", Self.dbus, ["--config-file=" + dir + "/bus.conf", "--nofork", "--nopidfile", "--print-address"])
            guard waitFor(10, { daemon.stdoutSoFar.contains("unix:path=") || !daemon.process.isRunning }), daemon.process.isRunning else {
                throw missingPeer("the private dbus-daemon did not start: " + Self.contents(daemon.errPath))
            }
            // avahi-daemon closes every descriptor it inherited as it starts, Foundation's watch on
            // its child among them (a socket whose end Foundation takes for the child's exit, and
            // then blocks in waitpid, for every child): so the child Foundation watches is the
            // shell, which runs avahi-daemon and waits, and avahi-daemon dies with that shell
            // (setpriv again). unshare(1) makes the new namespace's mounts private. Its /run is a
            // tmpfs of its own with an empty avahi-daemon folder: on a machine where Debian's
            // avahi-daemon never ran (kept from starting, as on a fresh CI machine) there is no
            // /run/avahi-daemon to mount over, and nothing is made outside the namespace.
            let script = "mount -t tmpfs -o size=1m,mode=0755 jukebox-test /run && mkdir /run/avahi-daemon || exit 1; "
                + "\(ChildDeath.setpriv) --pdeathsig KILL -- \(Self.avahi) -f \"$1\" --no-chroot --no-drop-root --no-rlimits & wait $!"
            let avahi = try spawn("avahi", Self.unshare, ["-m", "/bin/sh", "-c", script, "sh", dir + "/avahi.conf"], environment: env)
            guard waitFor(10, { Self.contents(avahi.errPath).contains("Server startup complete") || !avahi.process.isRunning }), avahi.process.isRunning else {
                throw missingPeer("the private avahi-daemon did not start: " + Self.contents(avahi.errPath))
            }
            let receiver = try spawn("shairport-sync", Self.shairport, ["-c", dir + "/shairport-sync.conf", "-vv"], environment: env)
            // It accepts connections once its service is registered (announced on loopback only).
            guard waitFor(20, { Self.contents(receiver.errPath).contains("successfully added") || !receiver.process.isRunning }),
                  receiver.process.isRunning else {
                throw missingPeer("shairport-sync did not start: " + String(Self.contents(receiver.errPath).suffix(2000)))
            }
        } catch {
            stop()
            throw error
        }
    }

    /// shairport-sync's log so far (`-vv`).
    var shairportLog: String { Self.contents(dir + "/shairport-sync.err") }

    /// `child` (the player) is killed with the rig's own.
    func adopt(_ child: Jukebox.Running) { children.insert(child, at: 0) }

    /// Kills every child (no waiting: a test that fails must not hang on one).
    func stop() {
        for child in children.reversed() where child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }

    /// Starts `executable` so it dies with this process, output into files in `dir`.
    func spawn(_ name: String, _ executable: String, _ arguments: [String], environment: [String: String] = [:],
               stdin: FileHandle? = nil) throws -> Jukebox.Running {
        let command = ChildDeath.command(executable, arguments)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        let base = dir + "/" + name
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".err", contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: base + ".out")
        p.standardError = FileHandle(forWritingAtPath: base + ".err")
        p.standardInput = stdin ?? FileHandle.nullDevice
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try p.run()
        let running = Jukebox.Running(process: p, outPath: base + ".out", errPath: base + ".err")
        children.append(running)
        return running
    }

    static func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}

/// CLOCK_MONOTONIC in seconds: the clock of the test device's log (`t=`) and of the sender's lines.
func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
