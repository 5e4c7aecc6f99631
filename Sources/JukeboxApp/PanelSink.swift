// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The configured panel as the runtime's `DisplaySink`: frames go to a `DisplayLink`, which
/// throttles, retries with back-off and reports a failing panel once (playback never waits).
public final class PanelSink: DisplaySink {
    /// The throttling, retrying link to the driver.
    public let link: DisplayLink
    let log: Log
    /// Draws the panel in the terminal too (the demo's simulated panel).
    let mirror: ((DisplayFrame) -> Void)?

    /// A sink drawing through `link`; `mirror` also gets each frame (a terminal view).
    public init(link: DisplayLink, log: Log, mirror: ((DisplayFrame) -> Void)? = nil) {
        self.link = link
        self.log = log
        self.mirror = mirror
    }

    public func show(_ frame: DisplayFrame) {
        note(link.show(frame, now: monotonicNow()))
        mirror?(frame)
    }

    public func tick(now: Double) {
        note(link.tick(now: now))
        mirror?(DisplayFrame(rows: []))
    }

    public var nextDeadline: Double? { link.nextDeadline }

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
    public static func make(_ config: BoardConfig.Display?, log: Log) -> PanelSink? {
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
        return PanelSink(link: DisplayLink(driver: driver, minInterval: kind.layout.graphic ? 0.2 : 0.1), log: log)
    }
}
