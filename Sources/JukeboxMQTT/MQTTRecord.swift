// SPDX-License-Identifier: MIT
import CMosquitto
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// What a bridge left retained on a broker (Home Assistant's discovery configs, the state
/// topics), with what it takes to reach that broker again: so a box whose MQTT is turned off, or
/// that is uninstalled, can take it all away (`MQTTForget`), even though its config no longer
/// says where.
public struct MQTTAnnouncement: Codable, Equatable, Sendable {
    /// The broker.
    public var host: String
    /// Its port.
    public var port: Int
    /// The user name, if any.
    public var username: String?
    /// The password, when the config held it (the record is then as secret as the config was).
    public var password: String?
    /// The password's file, when the config named one.
    public var passwordFile: String?
    /// TLS, when used.
    public var tls: TLSFiles?
    /// The topic prefix.
    public var topic: String
    /// Every retained topic published (cleared with an empty retained message).
    public var retained: [String]

    /// TLS files.
    public struct TLSFiles: Codable, Equatable, Sendable {
        /// The CA.
        public var ca: String
        /// The client certificate.
        public var cert: String?
        /// Its key.
        public var key: String?
    }

    /// The record of `settings` (resolved to `port`) and its retained topics.
    public init(_ settings: MQTTSettings, port: Int, topic: String, retained: [String]) {
        host = settings.host
        self.port = port
        username = settings.username
        password = settings.password
        passwordFile = settings.passwordFile
        tls = settings.tls.map { TLSFiles(ca: $0.ca, cert: $0.cert, key: $0.key) }
        self.topic = topic
        self.retained = retained
    }

    /// Whether `other` is the same broker reached as the same user (its retained topics are then
    /// this one's to update).
    func sameBroker(_ other: MQTTAnnouncement) -> Bool {
        host == other.host && port == other.port && username == other.username
    }
}

/// The file beside the state file that lists what was announced (`mqtt-announced.json`, mode
/// 0600: it may hold the password; owned by the folder's owner, even when root writes it).
/// Shared by the bridge and the forgetter, two processes: each change is a whole new file under
/// a temporary name of its own (O_EXCL, pid), fsync, rename. (Not `writeAtomically`, whose one
/// fixed temporary name assumes one writing process.)
public final class MQTTRecord: @unchecked Sendable {
    /// Its name, beside the state file.
    public static let fileName = "mqtt-announced.json"
    /// The file.
    public let path: String
    private let monitor = Monitor()

    /// The record at `path`.
    public init(path: String) { self.path = path }

    /// The record beside `statePath`.
    public convenience init(statePath: String) { self.init(path: Paths.directory(statePath) + "/" + Self.fileName) }

    /// The announcements recorded; none when the file is missing or unreadable.
    public func load() -> [MQTTAnnouncement] {
        monitor.withLock { read() }
    }

    private func read() -> [MQTTAnnouncement] {
        guard let bytes = try? readFile(path, limit: 1 << 20) else { return [] }
        return (try? JSONDecoder().decode([MQTTAnnouncement].self, from: Data(bytes))) ?? []
    }

    /// Changes the list; the file is removed when it ends up empty. Returns the problem, if any.
    @discardableResult
    public func update(_ change: (inout [MQTTAnnouncement]) -> Void) -> String? {
        monitor.withLock {
            let before = read()
            var list = before
            change(&list)
            if list == before, list.isEmpty == !fileExists(path) { return nil }
            if list.isEmpty {
                return unlink(cPath(path)) == 0 || errno == ENOENT ? nil : "mqtt: \(path): \(errnoText(errno))"
            }
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                try Self.writeFile(Array(try encoder.encode(list)) + [0x0A], to: path)
                return nil
            } catch {
                return "mqtt: \(path): \(error)"
            }
        }
    }

    private static func writeFile(_ bytes: [UInt8], to path: String) throws {
        let folder = Paths.directory(path)
        var temp = "", fd: Int32 = -1
        for attempt in 0..<8 {
            temp = "\(folder)/.\(fileName).\(getpid()).\(attempt).tmp"
            fd = open(cPath(temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw MQTTProblem(text: "\(temp): \(errnoText(errno))") }
        defer { close(fd) }
        // `mqtt-forget` runs as root from the package's prerm; the file it leaves must stay the
        // service's (the folder's owner), or the service can no longer read what is left to take away.
        var folderStat = stat()
        if geteuid() == 0, stat(cPath(folder), &folderStat) == 0, folderStat.st_uid != 0,
           fchown(fd, folderStat.st_uid, folderStat.st_gid) != 0 {
            let problem = errnoText(errno)
            unlink(cPath(temp))
            throw MQTTProblem(text: "\(temp): chown: \(problem)")
        }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let problem = errnoText(errno)
                unlink(cPath(temp))
                throw MQTTProblem(text: "\(temp): \(problem)")
            }
            offset += n
        }
        guard fsync(fd) == 0, rename(cPath(temp), cPath(path)) == 0 else {
            let problem = errnoText(errno)
            unlink(cPath(temp))
            throw MQTTProblem(text: "\(path): \(problem)")
        }
        let dir = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
    }
}

/// Takes away what one announcement left on its broker: an empty retained message on each of
/// its topics (MQTT's way to delete one; Home Assistant removes an entity whose config is
/// emptied), QoS 1 so the broker's acknowledgement says it is done. Bounded in time.
public enum MQTTForget {
    final class Progress: @unchecked Sendable {
        var connack: Int32?
        var acked = 0
        var lost = false
    }

    /// Connects, clears every retained topic of `entry`, waits for the acknowledgements and
    /// disconnects, within `timeout` seconds (or until `cancelled` says so); nil when done, else
    /// the problem.
    public static func run(_ entry: MQTTAnnouncement, timeout: Double, cancelled: () -> Bool = { false }) -> String? {
        if let problem = MQTTClientSetup.libraryProblem { return problem }
        let deadline = monotonicNow() + timeout
        let progress = Progress()
        let id = "jukebox-forget-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard let m = jb_mosquitto_new(id, true, Unmanaged.passUnretained(progress).toOpaque()) else {
            return "mqtt: cannot create a client: \(errnoText(errno))"
        }
        defer { jb_mosquitto_destroy(m) }
        var password = entry.password
        if let file = entry.passwordFile {
            switch MQTTClientSetup.password(from: file) {
            case .success(let p): password = p
            case .failure(let problem): return problem.text
            }
        }
        let tls = entry.tls.map { MQTTSettings.TLS(ca: $0.ca, cert: $0.cert, key: $0.key) }
        if let problem = MQTTClientSetup.configure(m, username: entry.username, password: password, tls: tls) { return problem }
        jb_mosquitto_connect_callback_set(m) { _, me, rc in Unmanaged<Progress>.fromOpaque(me!).takeUnretainedValue().connack = rc }
        jb_mosquitto_publish_callback_set(m) { _, me, _ in Unmanaged<Progress>.fromOpaque(me!).takeUnretainedValue().acked += 1 }
        jb_mosquitto_disconnect_callback_set(m) { _, me, _ in Unmanaged<Progress>.fromOpaque(me!).takeUnretainedValue().lost = true }
        let where_ = "\(entry.host):\(entry.port)"
        var rc = jb_mosquitto_connect_async(m, entry.host, Int32(entry.port), 30)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return "mqtt: \(where_): " + reason(rc) }
        // libmosquitto's loop is driven here, in slices of 0.1 s: no thread of its own to stop.
        func loop(until done: () -> Bool) -> String? {
            while !done() {
                if progress.lost { return "mqtt: \(where_): the connection closed" }
                if monotonicNow() >= deadline || cancelled() { return "mqtt: \(where_): no answer within \(Int(timeout)) s" }
                rc = jb_mosquitto_loop(m, 100, 1)
                if rc != MOSQ_ERR_SUCCESS.rawValue { return "mqtt: \(where_): " + reason(rc) }
            }
            return nil
        }
        if let problem = loop(until: { progress.connack != nil }) { return problem }
        if progress.connack != 0 { return "mqtt: \(where_) refused: " + String(cString: jb_mosquitto_connack_string(progress.connack ?? 0)) }
        for topic in entry.retained {
            rc = jb_mosquitto_publish(m, nil, topic, 0, nil, 1, true)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return "mqtt: \(topic): " + reason(rc) }
        }
        if let problem = loop(until: { progress.acked >= entry.retained.count }) { return problem }
        jb_mosquitto_disconnect(m)
        _ = loop(until: { progress.lost })
        return nil
    }

    static func reason(_ rc: Int32) -> String {
        let text = rc == MOSQ_ERR_ERRNO.rawValue ? errnoText(errno) : String(cString: jb_mosquitto_strerror(rc))
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    /// Forgets every announcement in `record` (or those `only` selects) within `timeout` seconds:
    /// each one done leaves the record. Returns the problems (empty: all done).
    public static func all(in record: MQTTRecord, timeout: Double, only: (MQTTAnnouncement) -> Bool = { _ in true },
                           cancelled: () -> Bool = { false }) -> [String] {
        let deadline = monotonicNow() + timeout
        var problems: [String] = []
        for entry in record.load() where only(entry) {
            let left = deadline - monotonicNow()
            guard left > 0 else {
                problems.append("mqtt: \(entry.host):\(entry.port): no time left")
                continue
            }
            if let problem = run(entry, timeout: left, cancelled: cancelled) {
                problems.append(problem)
                continue
            }
            if let problem = record.update({ list in list.removeAll { $0 == entry } }) { problems.append(problem) }
        }
        return problems
    }
}

/// `MQTTForget` on a thread of its own, retried with back-off (1 s doubling to 60 s) while the
/// broker cannot be reached, until every announcement it was given is gone or `close()`: for a
/// box that starts with MQTT turned off, or on another broker, whose old broker still holds
/// its retained topics.
public final class MQTTForgetter: @unchecked Sendable {
    private let monitor = Monitor()
    private var stopping = false
    private var done = false
    private var thread: NativeThread?

    /// Starts forgetting the announcements in `record` that `only` selects; `log` is called from
    /// the forgetter's thread.
    public init(record: MQTTRecord, only: @escaping @Sendable (MQTTAnnouncement) -> Bool = { _ in true },
                log: @escaping @Sendable (LogLevel, String) -> Void) {
        thread = NativeThread(name: "jukebox-mqttold") { [self] in
            defer { monitor.withLock { done = true; monitor.broadcast() } }
            var pause = 1.0
            var said: [String] = []
            while true {
                let problems = MQTTForget.all(in: record, timeout: 15, only: only) { self.monitor.withLock { self.stopping } }
                if problems.isEmpty {
                    log(.info, "mqtt: the retained topics and Home Assistant entities announced before are removed")
                    return
                }
                if problems != said { for p in problems { log(.warning, p + "; retrying") } }
                said = problems
                let stop = monitor.withLock {
                    if !stopping { monitor.wait(seconds: pause) }
                    return stopping
                }
                if stop { return }
                pause = min(pause * 2, 60)
            }
        }
    }

    /// Stops retrying (a forget under way ends within its 0.1 s slice) and joins the thread; one
    /// still held after 3 s (a name lookup that hangs) is left to the process's exit.
    public func close() {
        let ended = monitor.withLock {
            stopping = true
            monitor.broadcast()
            let deadline = monotonicNow() + 3
            while !done, thread != nil, monotonicNow() < deadline { monitor.wait(seconds: 0.1) }
            return done || thread == nil
        }
        if ended { thread?.join() } else { thread?.detach() }
        thread = nil
    }

    deinit { close() }
}
