// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService

/// Home Assistant's MQTT discovery for one box: the retained configs that make Home Assistant
/// list a device ("jukebox NAME") with its entities. Pure: the configs follow from these values.
///
/// Home Assistant has no MQTT media player, so the box is a set of plain entities: a now-playing
/// sensor (attributes artist, album, position, duration, phase, file, message), buttons
/// play/pause, next, previous and stop, a volume number (the config's volume limits), a speed
/// number (0.75-2, the pitch kept), selects
/// for repeat, the sleep timer and the playlists, a sleep timer sensor (minutes left), a shuffle switch, a tag scanner for cards, and a device
/// trigger for each gesture of each wired button. Every entity has a unique id, the availability
/// topic and the device block; topics follow `<prefix>/<component>/<node>/<object>/config`.
public struct MQTTDiscovery: Sendable {
    /// The discovery prefix ("" publishes nothing).
    public var prefix: String
    /// The box's topic prefix.
    public var topic: String
    /// The node id (the topic with every character outside `[A-Za-z0-9_-]` made `_`).
    public var nodeID: String
    /// The player's version, for the device block.
    public var version: String
    /// The volume number's range.
    public var volumeRange: ClosedRange<Int>
    /// The playlists the select offers, by name (none: no select).
    public var playlists: [String]
    /// The device triggers: a button and one of its gestures each.
    public var gestures: [ButtonGesture]
    /// Whether the box has a battery monitor: its level and charging as sensors.
    public var battery: Bool
    /// Whether the box watches a headphone jack: plugged in or not as a binary sensor.
    public var headphones: Bool
    /// Whether the parental rules have a daily listening limit: the minutes left as a sensor.
    public var listeningLimit: Bool

    /// Discovery under `prefix` for the box at `topic`.
    public init(prefix: String, topic: String, version: String, volumeRange: ClosedRange<Int>,
                playlists: [String] = [], gestures: [ButtonGesture] = [], battery: Bool = false, headphones: Bool = false,
                listeningLimit: Bool = false) {
        self.prefix = prefix
        self.topic = topic
        nodeID = Self.nodeID(topic)
        self.version = version
        self.volumeRange = volumeRange
        self.playlists = playlists
        self.gestures = gestures
        self.battery = battery
        self.headphones = headphones
        self.listeningLimit = listeningLimit
    }

    /// The sleep select's options: off, minutes (a timer set to other minutes shows them all the
    /// same, Home Assistant warns of an unknown option), the ends.
    public static let sleepOptions = ["off", "15", "30", "45", "60", "90", "track", "chapter", "folder"]

    /// `topic` as a node id.
    public static func nodeID(_ topic: String) -> String {
        String(String.UnicodeScalarView(topic.unicodeScalars.map {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" ? $0 : "_"
        }))
    }

    /// The device triggers for the wired `buttons` and their bindings: `short` for each, `long`
    /// where a long or hold action is bound, `double` where a double action is.
    public static func gestures(buttons: [Button], bindings: [Button: ButtonBinding]) -> [ButtonGesture] {
        var found: [ButtonGesture] = []
        for button in Button.allCases where buttons.contains(button) && button != .mute {
            let b = bindings[button] ?? ButtonBinding()
            found.append(ButtonGesture(button, .short))
            if b.long != nil || b.hold != nil { found.append(ButtonGesture(button, .long)) }
            if b.double != nil { found.append(ButtonGesture(button, .double)) }
        }
        return found
    }

    /// Home Assistant's trigger type for a gesture (its own names, which it translates).
    static func triggerType(_ kind: ButtonGesture.Kind) -> String {
        switch kind {
        case .short: "button_short_press"
        case .long: "button_long_press"
        case .double: "button_double_press"
        }
    }

    /// The configs: discovery topic → JSON payload, in a stable order (built as `JSONValue`s, the
    /// one encoder; each object's fields in the order Home Assistant's documentation gives them).
    public func configs() -> [(topic: String, payload: String)] {
        guard !prefix.isEmpty else { return [] }
        typealias F = JSONValue.Field
        let t = topic
        let name = "jukebox " + (topic.split(separator: "/").last.map(String.init) ?? nodeID)
        let device = F("device", .fields([
            F("identifiers", .array([.string("jukebox_" + nodeID)])), F("name", .string(name)),
            F("manufacturer", .string("jukebox")), F("model", .string("jukebox music player")), F("sw_version", .string(version))]))
        let origin = F("origin", .fields([F("name", .string("jukebox")), F("sw_version", .string(version))]))
        let availability = [F("availability_topic", .string(t + "/availability")), F("payload_available", .string("online")),
                            F("payload_not_available", .string("offline"))]
        var configs: [(String, String)] = []
        func entity(_ component: String, _ object: String, _ label: String, _ fields: [F]) {
            let body = [F("name", .string(label)), F("unique_id", .string(nodeID + "_" + object))] + fields + availability + [device, origin]
            configs.append(("\(prefix)/\(component)/\(nodeID)/\(object)/config", JSONValue.fields(body).text))
        }
        func string(_ key: String, _ value: String) -> F { F(key, .string(value)) }
        func options(_ values: [String]) -> F { F("options", .array(values.map { .string($0) })) }
        entity("sensor", "now_playing", "Now playing", [
            string("state_topic", t + "/state"),
            // A state is at most 255 characters in Home Assistant.
            string("value_template", "{{ (value_json.title or '')[:255] }}"),
            string("json_attributes_topic", t + "/state"),
            string("json_attributes_template", "{{ {'artist': value_json.artist, 'album': value_json.album, 'position': value_json.position, "
                                                 + "'duration': value_json.duration, 'phase': value_json.phase, 'file': value_json.file, "
                                                 + "'message': value_json.message} | tojson }}"),
            string("icon", "mdi:music")])
        for (object, label, command) in [("play_pause", "Play/pause", "toggle"), ("next", "Next", "next"),
                                         ("previous", "Previous", "prev"), ("stop", "Stop", "stop")] {
            entity("button", object, label, [string("command_topic", t + "/cmd/" + command), string("payload_press", "")])
        }
        entity("number", "volume", "Volume", [
            string("command_topic", t + "/cmd/volume"), string("command_template", "{{ value | int }}"),
            string("state_topic", t + "/volume"),
            F("min", .integer(volumeRange.lowerBound)), F("max", .integer(volumeRange.upperBound)), F("step", .integer(1)),
            string("mode", "slider"), string("icon", "mdi:volume-high")])
        // The playback speed (`cmd/speed` runs `speed X`); with nothing current the topic is empty,
        // which the template turns into Home Assistant's "None" (unknown, not an invalid number).
        entity("number", "speed", "Speed", [
            string("command_topic", t + "/cmd/speed"), string("state_topic", t + "/speed"),
            string("value_template", "{{ value if value else 'None' }}"),
            F("min", .number(Speed.range.lowerBound)), F("max", .number(Speed.range.upperBound)), F("step", .number(0.05)),
            string("mode", "slider"), string("icon", "mdi:speedometer")])
        entity("select", "repeat", "Repeat", [
            string("command_topic", t + "/cmd/repeat"), string("state_topic", t + "/repeat"),
            options(RepeatMode.allCases.map(\.rawValue)), string("icon", "mdi:repeat")])
        // The sleep timer: a select (`cmd/sleep` runs `sleep OPTION`) and the minutes left.
        entity("select", "sleep", "Sleep timer", [
            string("command_topic", t + "/cmd/sleep"), string("state_topic", t + "/sleep"),
            options(Self.sleepOptions), string("icon", "mdi:sleep")])
        entity("sensor", "sleep_left", "Sleep timer left", [
            string("state_topic", t + "/sleep_left"), string("unit_of_measurement", "min"), string("icon", "mdi:timer-sand")])
        if battery {
            entity("sensor", "battery", "Battery", [
                string("state_topic", t + "/battery"), string("device_class", "battery"), string("state_class", "measurement"),
                string("unit_of_measurement", "%")])
            entity("binary_sensor", "battery_charging", "Battery charging", [
                string("state_topic", t + "/battery_charging"), string("device_class", "battery_charging")])
        }
        if headphones {
            entity("binary_sensor", "headphones", "Headphones", [
                string("state_topic", t + "/headphones"), string("device_class", "plug"), string("icon", "mdi:headphones")])
        }
        if listeningLimit {
            entity("sensor", "listening_left", "Listening left today", [
                string("state_topic", t + "/listening_left"), string("device_class", "duration"),
                string("unit_of_measurement", "min"), string("icon", "mdi:timer-lock-outline")])
        }
        if !playlists.isEmpty {
            // No state topic: what plays may come from anywhere (a card, a button), so the select
            // shows the last one chosen in Home Assistant (its optimistic mode).
            entity("select", "playlist", "Playlist", [
                string("command_topic", t + "/cmd/playlist"), options(playlists), string("icon", "mdi:playlist-music")])
        }
        entity("switch", "shuffle", "Shuffle", [
            string("command_topic", t + "/cmd/shuffle"), string("state_topic", t + "/shuffle"),
            string("payload_on", "on"), string("payload_off", "off"), string("state_on", "on"), string("state_off", "off"),
            string("icon", "mdi:shuffle")])
        // A tag scanner: Home Assistant's tag integration takes the card id as the payload.
        configs.append(("\(prefix)/tag/\(nodeID)/card/config",
                        JSONValue.fields([string("topic", t + "/card"), string("value_template", "{{ value }}"), device]).text))
        for g in gestures {
            let button = g.button.rawValue
            configs.append(("\(prefix)/device_automation/\(nodeID)/\(button)_\(g.kind.rawValue)/config",
                            JSONValue.fields([string("automation_type", "trigger"), string("topic", t + "/button/" + button),
                                              string("payload", g.kind.rawValue), string("type", Self.triggerType(g.kind)),
                                              string("subtype", button), device]).text))
        }
        return configs
    }
}
