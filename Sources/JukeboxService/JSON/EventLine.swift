// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore

/// One line of an `events` stream, the one definition of its fields: written by the loop
/// (`ControlPort.stream`) and read by the MQTT face. `event 04:47:43.250 button next down →
/// playing` (wall-clock time of day, then what happened and the phase after it), or for
/// `events --json` clients `event {"time":…,"what":…,"phase":…}` with the card id, or the button
/// and its gesture, as fields of their own, so a program never parses the words of `what`.
public struct EventLine: Equatable, Sendable {
    public var time: String
    /// What happened, in words for people.
    public var what: String
    /// The phase after it, as shown (`ShownPhase`'s text; a reader passes on what it is sent).
    public var phase: String
    /// The card read, for a card's event.
    public var card: String?
    /// The gesture made, for a gesture's event.
    public var gesture: ButtonGesture?

    public init(time: String, what: String, phase: String, card: String? = nil, gesture: ButtonGesture? = nil) {
        self.time = time
        self.what = what
        self.phase = phase
        self.card = card
        self.gesture = gesture
    }

    /// The line for `events`.
    public var text: String { "event \(time) \(what) → \(phase)" }

    /// The line for `events --json`.
    public var json: String { "event " + value.text }

    /// The JSON object, fields in this order: time, what, phase, then card or button and gesture.
    public var value: JSONValue {
        var fields = [JSONValue.Field("time", .string(time)), .init("what", .string(what)), .init("phase", .string(phase))]
        if let card { fields.append(.init("card", .string(card))) }
        if let gesture {
            fields += [.init("button", .string(gesture.button.rawValue)), .init("gesture", .string(gesture.kind.rawValue))]
        }
        return .fields(fields)
    }

    /// Reads an `events --json` line; nil when it is not one (or names no `what`). A button or a
    /// gesture this build does not know is no gesture.
    public init?(json line: some StringProtocol) {
        guard line.hasPrefix("event {"),
              let fields = try? JSONDecoder().decode([String: String].self, from: Data(line.dropFirst(6).utf8)),
              let what = fields["what"] else { return nil }
        let gesture = fields["button"].flatMap(Button.init(rawValue:)).flatMap { button in
            fields["gesture"].flatMap(ButtonGesture.Kind.init(rawValue:)).map { ButtonGesture(button, $0) }
        }
        self.init(time: fields["time"] ?? "", what: what, phase: fields["phase"] ?? "", card: fields["card"], gesture: gesture)
    }
}
