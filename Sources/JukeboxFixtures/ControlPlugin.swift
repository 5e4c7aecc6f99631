// SPDX-License-Identifier: MIT
import Foundation

/// A user-space ALSA control device for tests: a control plugin (`<alsa/control_external.h>`)
/// compiled here with `cc` and loaded by libasound from a configuration string, so the real
/// control code runs without a sound card (MixerTests' volume controls, JackTests' jack).
public struct ControlPlugin: Sendable {
    /// The configuration text that makes `device` this plugin.
    public let config: String
    public let device: String

    /// Compiles `source` followed by the plugin's entry point once per process and type. `source`
    /// defines `struct jb` (its first members `snd_ctl_ext_t ext; int pipe[2];`, the pipe being
    /// what the handle polls) and `callbacks`; `setup` is C run before the handle is created
    /// (more of `j->ext`), `created` after it (`j` is the new handle).
    public static func build(type: String, source: String, name: String, setup: String = "", created: String = "")
        -> Result<ControlPlugin, ControlPluginError> {
        let source = source + entry(type: type, name: name, setup: setup, created: created)
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

extension ControlPlugin {
    /// The C of the callbacks that count the controls and find one by numid or name, over the
    /// source's `ctls` array (whose members have a `name`) and its count `N`.
    public static let lookup = #"""
    static int jb_count(snd_ctl_ext_t *ext) { (void)ext; return N; }
    static snd_ctl_ext_key_t jb_find(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id) {
        (void)ext;
        unsigned int numid = snd_ctl_elem_id_get_numid(id);
        if (numid > 0 && numid <= N) return numid - 1;
        const char *name = snd_ctl_elem_id_get_name(id);
        for (unsigned int i = 0; i < N; i++) if (strcmp(name, ctls[i].name) == 0) return i;
        return SND_CTL_EXT_KEY_NOT_FOUND;
    }
    """#

    /// The C of `SND_CTL_PLUGIN_DEFINE_FUNC(type)`: a handle over the source's `struct jb`.
    static func entry(type: String, name: String, setup: String, created: String) -> String {
        let id = String(type.prefix(15))
        return """

        SND_CTL_PLUGIN_DEFINE_FUNC(\(type))
        {
            (void)root; (void)conf;
            struct jb *j = calloc(1, sizeof(*j));
            if (!j) return -ENOMEM;
            if (pipe(j->pipe) < 0) { free(j); return -errno; }
            j->ext.version = SND_CTL_EXT_VERSION;
            j->ext.card_idx = 0;
            strcpy(j->ext.id, "\(id)");
            strcpy(j->ext.driver, "\(id)");
            strcpy(j->ext.name, "\(name)");
            strcpy(j->ext.longname, "\(name) (user space)");
            strcpy(j->ext.mixername, "\(id)");
            j->ext.poll_fd = j->pipe[0];
            j->ext.callback = &callbacks;
            j->ext.private_data = j;
            \(setup)
            int err = snd_ctl_ext_create(&j->ext, name, mode);
            if (err < 0) { close(j->pipe[0]); close(j->pipe[1]); free(j); return err; }
            \(created)
            *handlep = j->ext.handle;
            return 0;
        }
        SND_CTL_PLUGIN_SYMBOL(\(type));

        """
    }
}
