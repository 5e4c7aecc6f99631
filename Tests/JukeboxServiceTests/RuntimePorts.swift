// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService

/// What the tests ask the runtime's ports directly, as they asked the runtime before the ports
/// were classes of their own (`ControlPort`, and the tag reader behind both ports).
extension Runtime {
    func answer(_ command: ControlCommand) -> [String]? { control.answer(command) }
    func answerLater(_ command: ControlCommand, _ reply: @escaping ([String]) -> Void) -> Bool { control.answerLater(command, reply) }
    func statusJSON() -> String { control.statusJSON() }
    func readTracks(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String]) -> Void) -> Bool {
        control.readSource(paths) { tracks, messages, _ in then(tracks, messages) }
    }
}
