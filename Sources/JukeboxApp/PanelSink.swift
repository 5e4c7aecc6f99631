// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The configured panel as the runtime's `DisplaySink`: frames go to a `DisplayLink`, which
/// throttles, retries with back-off and reports a failing panel once (playback never waits).
///
/// A real panel is driven from a thread of its own (`threaded`): an I2C write is synchronous and a
/// full SSD1306 frame takes about 92 ms at 100 kHz, which the loop must not wait out (a button
/// press meanwhile would be handled that much later). The loop only hands over the newest frame
/// (frames handed over while one is written replace each other, as the link's throttle does) and
/// logs the link's reports on its next `tick`. The simulated panels of the demo and `probe
/// display` stay on the caller's thread: the simulator answers at once, and the demo draws its
/// picture from the simulator after each frame.
public final class PanelSink: DisplaySink, @unchecked Sendable {
    /// The throttling, retrying link to the driver. With a panel thread only that thread touches
    /// it: read `summary` instead.
    public let link: DisplayLink
    let log: Log
    /// Draws the panel in the terminal too (the demo's simulated panel).
    let mirror: ((DisplayFrame) -> Void)?
    private let monitor = Monitor()
    private var thread: NativeThread?
    // Shared with the panel thread, under the monitor.
    private var posted: DisplayFrame?
    private var reports: [DisplayLink.Report] = []
    private var latest: Summary
    private var stopping = false

    /// What the link has done, for diagnostics (copied after each update on a panel thread).
    public struct Summary: Sendable, Equatable, CustomStringConvertible {
        public var state: DisplayLink.State
        public var framesSent, bytesSent, framesDropped, errorCount: Int

        init(_ link: DisplayLink) {
            state = link.state
            framesSent = link.framesSent
            bytesSent = link.bytesSent
            framesDropped = link.framesDropped
            errorCount = link.errorCount
        }

        public var description: String {
            "\(state): \(framesSent) frames, \(bytesSent) bytes, \(framesDropped) dropped, \(errorCount) errors"
        }
    }

    /// A sink drawing through `link`; `mirror` also gets each frame (a terminal view). With
    /// `threaded` the link is driven from a thread of its own (call `close()` when done).
    public init(link: DisplayLink, log: Log, mirror: ((DisplayFrame) -> Void)? = nil, threaded: Bool = false) {
        self.link = link
        self.log = log
        self.mirror = mirror
        self.latest = Summary(link)
        if threaded { thread = NativeThread(name: "jukebox-panel") { [self] in run() } }
    }

    public func show(_ frame: DisplayFrame) {
        if thread != nil {
            monitor.withLock {
                posted = frame
                monitor.broadcast()
            }
        } else {
            note(link.show(frame, now: monotonicNow()))
        }
        mirror?(frame)
    }

    public func tick(now: Double) {
        if thread != nil {
            for report in monitor.withLock({ () -> [DisplayLink.Report] in defer { reports = [] }; return reports }) {
                note(report)
            }
        } else {
            note(link.tick(now: now))
        }
        mirror?(DisplayFrame(rows: []))
    }

    /// With a panel thread the loop has nothing timed to do for the panel (reports wait for its
    /// regular tick).
    public var nextDeadline: Double? { thread == nil ? link.nextDeadline : nil }

    /// What the link has done so far.
    public var summary: Summary { thread == nil ? Summary(link) : monitor.withLock { latest } }

    /// Ends the panel thread after the frame handed over last (if any) went to the link; waits
    /// for it. Does nothing without a thread; later calls do nothing.
    public func close() {
        guard let thread else { return }
        monitor.withLock {
            stopping = true
            monitor.broadcast()
        }
        thread.join()
        self.thread = nil
    }

    // The panel thread: the newest frame, or the link's own timed work (an init sequence's waits,
    // a retry, the periodic re-check), whichever comes first. The link is used without the lock.
    private func run() {
        while true {
            monitor.lock()
            while posted == nil && !stopping {
                guard let deadline = link.nextDeadline else { monitor.wait(); continue }
                let left = deadline - monotonicNow()
                if left <= 0 { break }
                monitor.wait(seconds: left)
            }
            let frame = posted
            posted = nil
            let done = stopping && frame == nil
            monitor.unlock()
            if done { return }
            let now = monotonicNow()
            let report = frame.map { link.show($0, now: now) } ?? link.tick(now: now)
            let summary = Summary(link)
            monitor.withLock {
                if let report { reports.append(report) }
                latest = summary
            }
        }
    }

    private func note(_ report: DisplayLink.Report?) {
        switch report {
        case .failed(let error)?: log.warning("display: \(error) (playback goes on; retrying with back-off)")
        case .recovered?: log.info("display: working again")
        case nil: break
        }
    }

    /// A panel driven through its simulator (the exact bytes a real one would get), drawn with
    /// `draw` as a person would see it: the demo's panel.
    public static func simulated(_ layout: PanelLayout, log: Log, draw: @escaping ([String]) -> Void) -> PanelSink {
        if layout.graphic {
            let sim = SSD1306Simulator(controller: .ssd1306, address: 0x3C)
            let driver = SSD1306(transport: sim, controller: .ssd1306, address: 0x3C)
            return PanelSink(link: DisplayLink(driver: driver, minInterval: 0.2), log: log) { _ in
                draw(PanelSnapshot.boxed(PanelSnapshot(oled: sim).braille().split(separator: "\n").map(String.init))
                    .split(separator: "\n").map(String.init))
            }
        }
        let geometry: PanelLayout = layout.rows == 4 ? .lcd20x4 : .lcd16x2
        let sim = HD44780Simulator(address: 0x27, geometry: geometry)
        let driver = HD44780(transport: sim, address: 0x27, geometry: geometry)
        return PanelSink(link: DisplayLink(driver: driver), log: log) { _ in
            draw(PanelSnapshot.boxed(sim.rows).split(separator: "\n").map(String.init))
        }
    }

    /// The panel for `config`, or nil (with a message) when none is configured or the bus is absent:
    /// a missing display is reported and retried by the link, never fatal.
    /// A `terminal` display is no I2C panel: nil (the caller draws it with `simulated`).
    /// With `threaded` the panel is driven from a thread of its own (the player; `probe display`
    /// drives it in place).
    public static func make(_ config: BoardConfig.Display?, log: Log, threaded: Bool = false) -> PanelSink? {
        guard let config, config.kind != .terminal else { return nil }
        let busName = config.bus ?? "/dev/i2c-1"
        let transport: I2CTransport
        do {
            if let n = Int(busName) { transport = try I2CBus(number: n) } else if busName.hasPrefix("/") {
                transport = try I2CBus(path: busName)
            } else {
                transport = try I2CBus(adapterNamed: busName)
            }
        } catch {
            log.warning("display: \(error); no display (playback goes on)")
            return nil
        }
        let pins: HD44780Pins
        switch config.pins {
        case nil, "standard"?: pins = .standard
        case "mjkdz"?: pins = .mjkdz
        case let spec?:
            guard let parsed = HD44780Pins(spec: spec) else {
                log.warning("display: pins \"\(spec)\" is not a mapping like rs=0,rw=1,e=2,bl=3,d4=4,d5=5,d6=6,d7=7; using the standard one")
                pins = .standard
                break
            }
            pins = parsed
        }
        let driver: PanelDriver
        let kind = config.kind ?? .hd44780x16x2
        switch kind {
        case .ssd1306, .sh1106:
            driver = SSD1306(transport: transport, controller: kind == .sh1106 ? .sh1106 : .ssd1306, address: UInt8(config.address ?? 0x3C))
        case .hd44780x16x2, .hd44780x20x4, .terminal:  // (terminal: returned above)
            driver = HD44780(transport: transport, address: UInt8(config.address ?? 0x27), geometry: kind == .hd44780x20x4 ? .lcd20x4 : .lcd16x2, pins: pins)
        }
        return PanelSink(link: DisplayLink(driver: driver, minInterval: kind.layout.graphic ? 0.2 : 0.1), log: log, threaded: threaded)
    }
}
