// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// The rest of a stick's files, handed from its first read to its second on the tag reader's
/// thread (which serves them one after the other, its queue's lock ordering the two).
private final class USBRest: @unchecked Sendable {
    var files: [String] = []
}

extension OffLoopJobs {
    /// `Command.loadUSB`: the stick is listed and its first folders (through the one holding
    /// `through`, as the core chose) read by the tag reader, never on the loop, and come back as
    /// `Event.usbTracks` (`more`) through `deliver`, so it plays while the rest is read and comes
    /// back as `Event.usbMoreTracks`. Nil once started; a player that cannot load files gets the
    /// event that says so at once (to queue: this runs while the loop carries out a command).
    func readStick(_ path: String, through bookmarked: String?, deliver: @escaping (Event) -> Void) -> Event? {
        let rest = USBRest()
        let started = perform({ load in
            let (first, others) = USBScan.split(USBScan.folders(path), through: bookmarked)
            rest.files = others
            guard !first.isEmpty else { return .success(FileWorkOutput(lines: ["no audio files in \(path)"])) }
            let read = load(first)
            return .success(FileWorkOutput(tracks: Library.folderOrder(read.tracks), lines: read.messages))
        }, then: { result in
            let output = (try? result.get()) ?? FileWorkOutput()
            deliver(.usbTracks(path: path, tracks: output.tracks, messages: output.lines, more: true))
        })
        guard started else { return .usbTracks(path: path, tracks: [], messages: ["this player cannot load files"]) }
        _ = perform({ load in
            guard !rest.files.isEmpty else { return .success(FileWorkOutput()) }
            let read = load(rest.files)
            rest.files = []
            return .success(FileWorkOutput(tracks: Library.folderOrder(read.tracks), lines: read.messages))
        }, then: { result in
            let output = (try? result.get()) ?? FileWorkOutput()
            deliver(.usbMoreTracks(path: path, tracks: output.tracks, messages: output.lines))
        })
        return nil
    }
}
