// SPDX-License-Identifier: MIT
import Foundation

/// A user-space ALSA control device for tests: a control plugin (`<alsa/control_external.h>`)
/// compiled here with `cc` and loaded by libasound from a configuration string, so the real
/// control code runs without a sound card (MixerTests' volume controls, JackTests' jack).
public struct ControlPlugin: Sendable {
    /// The configuration text that makes `device` this plugin.
    public let config: String
    public let device: String

    /// Compiles `source` (which defines `SND_CTL_PLUGIN_SYMBOL(type)`) once per process and type.
    public static func build(type: String, source: String) -> Result<ControlPlugin, ControlPluginError> {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jukebox-ctl-\(type)-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let file = dir.appendingPathComponent("\(type).c")
            let library = dir.appendingPathComponent("lib\(type).so").path
            try source.write(to: file, atomically: true, encoding: .utf8)
            let cc = Process()
            cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            cc.arguments = ["cc", "-shared", "-fPIC", "-DPIC", "-o", library, file.path, "-lasound"]
            try cc.run()
            cc.waitUntilExit()
            guard cc.terminationStatus == 0 else { return .failure(ControlPluginError(message: "cc could not build the test control plugin \(type)")) }
            let device = "jbtest_\(type)"
            return .success(ControlPlugin(config: "ctl_type.\(type) { lib \"\(library)\" }\nctl.\(device) { type \(type) }\n",
                                          device: device))
        } catch {
            return .failure(ControlPluginError(message: "no C compiler to build the test control plugin \(type): \(error)"))
        }
    }
}

/// Why a test control plugin could not be built (no C compiler, no libasound headers).
public struct ControlPluginError: Error, Sendable {
    public let message: String
}
