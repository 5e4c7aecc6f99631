// SPDX-License-Identifier: MIT
import Synchronization

/// The output the core routes (`Command.routeOutput`, wired by the app): the box's own card and,
/// when configured, the headphones' own device and a Bluetooth speaker's, each a `PCMOutput`. A
/// stream never moves between devices: once the route names another device, the open stream
/// counts as closed (`isOpen` false), so the engine's next write opens the new device, whatever
/// the engine was doing (playing, lingering after an end, a stop followed at once by a play,
/// which keeps a device open). The core stops the track first and starts it again from where it
/// was heard, so nothing of it reaches the new device twice. Used on the writer thread like any
/// output; `route` is set from the loop's thread.
public final class RoutedOutput: PCMOutput {
    /// The devices a route may name (the core's `OutputRoute`, mapped by the app).
    public enum Device: Sendable, Equatable, CaseIterable {
        case card, headphones, bluetooth
    }

    private let card: PCMOutput
    private let others: [Device: PCMOutput]
    /// The device chosen.
    private let chosen: Mutex<Device>
    /// The output opened, until it is closed.
    private var active: PCMOutput?
    private var interrupt: Int32 = -1

    /// The card until the first `route` (no fact read yet). A route to a device not given here
    /// plays on the card.
    public init(card: PCMOutput, headphones: PCMOutput? = nil, bluetooth: PCMOutput? = nil) {
        self.card = card
        var others: [Device: PCMOutput] = [:]
        others[.headphones] = headphones
        others[.bluetooth] = bluetooth
        self.others = others
        chosen = Mutex(.card)
    }

    /// Chooses the device the next `open` (and `probe`) uses.
    public func route(to device: Device) { chosen.withLock { $0 = device } }

    /// The device the next opening is on.
    public var routed: Device { chosen.withLock { $0 } }

    private var selected: PCMOutput { others[routed] ?? card }
    /// The opened output, or the one the route names while none is.
    private var current: PCMOutput { active ?? selected }

    public func open(format: AudioFormat) throws(OutputError) {
        let target = selected
        if let active, active !== target { active.close() }
        active = nil
        target.setInterrupt(interrupt)
        try target.open(format: format)
        active = target
    }

    public func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard let active else { return 0 }
        return try active.write(buf, frames: frames)
    }

    public func setInterrupt(_ fd: Int32) {
        interrupt = fd
        card.setInterrupt(fd)
        for output in others.values { output.setInterrupt(fd) }
    }

    public func delayFrames() -> Int { active?.delayFrames() ?? 0 }
    public func pause(_ on: Bool) throws(OutputError) { try active?.pause(on) }
    public func drop() { active?.drop() }
    public func drain() { active?.drain() }

    public func close() {
        active?.close()
        active = nil
    }

    public func probe() -> OutputError? { selected.probe() }
    /// Open on the device the route names; a stream on another one is done with.
    public var isOpen: Bool {
        guard let active else { return false }
        return active === selected && active.isOpen
    }
    public var cutMethod: CutMethod { current.cutMethod }
    public func rewind(keeping: Int, atLeast: Int) -> Int { active?.rewind(keeping: keeping, atLeast: atLeast) ?? 0 }
    public var counters: DeviceCounters { current.counters }
    public var failurePoint: (accepted: Int, unheard: Int)? { active?.failurePoint }
    public var stallTimeout: Double { current.stallTimeout }
    public func noteLost(stalled: Bool) { active?.noteLost(stalled: stalled) }
}
