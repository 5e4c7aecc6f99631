// SPDX-License-Identifier: MIT
import Glibc
import JukeboxService
import JukeboxSystem

/// The one `events --json` connection the web process keeps to the player (as the MQTT face
/// does), on a thread of its own: after every player event, coalesced within `coalesce`
/// seconds, it asks `status --json` and `queue --json` and publishes them as a new generation;
/// every open event stream (`/api/events`) waits on it. When the player goes away the generation
/// says `offline`, and the hub connects again every second.
public final class EventHub: @unchecked Sendable {
    /// What the streams read.
    public struct Snapshot: Sendable {
        public var generation = 0
        public var status: String?
        public var queue: String?
        public var offline = true
        public var stopping = false
    }

    private let socketPath: String
    private let coalesce: Double
    private let monitor = Monitor()
    private var snapshot = Snapshot()
    private var thread: NativeThread?

    public init(socketPath: String, coalesce: Double = 0.05) {
        self.socketPath = socketPath
        self.coalesce = coalesce
    }

    public func start() {
        thread = NativeThread(name: "web-events") { [self] in run() }
    }

    /// Ends the thread and wakes every stream (they end).
    public func stop() {
        monitor.withLock {
            snapshot.stopping = true
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    public var current: Snapshot { monitor.withLock { snapshot } }

    /// The snapshot once its generation is past `generation`, or after `timeout` seconds (the
    /// same generation then), or at once when stopping.
    public func wait(after generation: Int, timeout: Double) -> Snapshot {
        let deadline = monotonicNow() + timeout
        return monitor.withLock {
            while snapshot.generation == generation && !snapshot.stopping {
                let left = deadline - monotonicNow()
                if left <= 0 { break }
                monitor.wait(seconds: left)
            }
            return snapshot
        }
    }

    private var stopping: Bool { monitor.withLock { snapshot.stopping } }

    private func publish(status: String?, queue: String?, offline: Bool) {
        monitor.withLock {
            // Nothing new, no generation: a stream is not woken for the same text.
            if offline == snapshot.offline && status == snapshot.status && queue == snapshot.queue { return }
            snapshot.generation += 1
            snapshot.status = status
            snapshot.queue = queue
            snapshot.offline = offline
            monitor.broadcast()
        }
    }

    private func run() {
        var events: ControlClient?
        var requests: ControlClient?
        while !stopping {
            if events == nil {
                if let client = try? ControlClient(path: socketPath),
                   client.request("events --json", timeout: 5)?.hasPrefix("ok") == true {
                    events = client
                    requests = try? ControlClient(path: socketPath)
                    if !refresh(&requests) { events = nil }
                } else {
                    publish(status: nil, queue: nil, offline: true)
                    monitor.withLock { if !snapshot.stopping { monitor.wait(seconds: 1) } }
                    continue
                }
            }
            guard let stream = events else { continue }
            guard stream.readLine(timeout: 0.25) != nil else {
                if stream.isClosed {
                    events = nil
                    requests = nil
                    publish(status: nil, queue: nil, offline: true)
                }
                continue
            }
            // More events within the window are one change.
            let until = monotonicNow() + coalesce
            while case let left = until - monotonicNow(), left > 0, stream.readLine(timeout: left) != nil {}
            if !refresh(&requests) || stream.isClosed {
                events = nil
                requests = nil
                publish(status: nil, queue: nil, offline: true)
            }
        }
    }

    /// Asks the status and the queue and publishes them; false when the player did not answer.
    private func refresh(_ client: inout ControlClient?) -> Bool {
        // A kept connection the player dropped while it was idle is opened again once.
        for _ in 0..<2 {
            if client == nil { client = try? ControlClient(path: socketPath) }
            guard let c = client,
                  let status = c.request("status --json", timeout: 5), status.hasPrefix("ok {"),
                  let queue = c.request("queue --json", timeout: 5), queue.hasPrefix("ok {") else {
                client = nil
                continue
            }
            publish(status: String(status.dropFirst(3)), queue: String(queue.dropFirst(3)), offline: false)
            return true
        }
        return false
    }
}
