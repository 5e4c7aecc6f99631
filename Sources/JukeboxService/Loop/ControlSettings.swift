// SPDX-License-Identifier: MIT
import JukeboxSystem

/// What the wiring tells the control language's port (`ControlPort`) before the loop runs
/// (`Runtime.controlSettings`): facts and tools the faces' answers need, no policy.
public struct ControlSettings {
    /// The version and build for `version` and `diag`.
    public var version = "jukebox"
    /// The music folders `ls --json` lists (the config's `music`).
    public var musicFolders: [String] = []
    /// BlueZ's bluetoothctl, run for `bluetooth pair|trust|forget|disconnect` (`BluetoothControl`;
    /// found on PATH at start); nil: not installed, and those lines say so.
    public var bluetoothctl: String? = findProgram("bluetoothctl")
    /// busctl and the kernel's adapters, for `bluetooth trust|forget|disconnect`
    /// (`BluetoothControl.Bus`; found at start).
    public var bluetoothBus = BluetoothControl.Bus.system()
    /// The address of the box's adapter `bluetooth pair` uses (the config's `bluetooth.adapter`);
    /// nil: BlueZ's default one.
    public var bluetoothAdapter: String?
    /// Lines about the adapters for `diag` (device, counters, board).
    public var diagnostics: (() -> [String])?
    /// Re-reads the configuration (SIGHUP, `reload`): the new settings and what waits for a
    /// restart, or nil after logging why not; nil: this player has no configuration file.
    public var reload: (() -> ConfigReload?)?

    /// Settings with the tools found on this machine and nothing else told.
    public init() {}
}
