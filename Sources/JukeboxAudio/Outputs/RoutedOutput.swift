// SPDX-License-Identifier: MIT
import Synchronization

/// The output the core routes (`Command.routeOutput`, wired by the app): the box's own device and
/// the headphones' own, each a `PCMOutput`. A stream never moves between devices: once the route
/// names the other device, the open stream counts as closed (`isOpen` false), so the engine's next
/// write opens the new device, whatever the engine was doing (playing, lingering after an end,
/// a stop followed at once by a play, which keeps a device open). The core stops the track first
/// and starts it again from where it was heard, so nothing of it reaches the new device twice.
/// Used on the writer thread like any output; `route` is set from the loop's thread.
public final class RoutedOutput: PCMOutput {
    private let speaker: PCMOutput
    private let headphones: PCMOutput
    /// Whether the headphones' device is chosen.
    private let chosen: Mutex<Bool>
    /// The output opened, until it is closed.
    private var active: PCMOutput?
    private var interrupt: Int32 = -1

    /// The speaker's device until the first `route` (a jack not read yet).
    public init(speaker: PCMOutput, headphones: PCMOutput) {
        self.speaker = speaker
        self.headphones = headphones
        chosen = Mutex(false)
    }

    /// Chooses the device the next `open` (and `probe`) uses: the headphones' (true) or the speaker's.
    public func route(headphones: Bool) { chosen.withLock { $0 = headphones } }

    /// Whether the next opening is the headphones'.
    public var toHeadphones: Bool { chosen.withLock { $0 } }

    private var selected: PCMOutput { toHeadphones ? headphones : speaker }
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
        speaker.setInterrupt(fd)
        headphones.setInterrupt(fd)
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
    /// Open on the device the route names; a stream on the other one is done with.
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
