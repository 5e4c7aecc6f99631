// SPDX-License-Identifier: MIT

/// What the headphone jack does (`headphones` in the config). The jack's state comes from the
/// sound card (an ALSA jack control) as `Event.headphones`; these are the rules.
public struct HeadphoneSettings: Equatable, Sendable {
    /// Whether pulling the headphones out while sound plays pauses it (as a phone does), so a
    /// story meant for headphones does not go on through the speaker.
    public var pauseOnUnplug = true
    /// The highest volume while headphones are in (nil: the same as the speaker's,
    /// `Settings.volumeMax`). Plugging them in turns a louder volume down to it.
    public var volumeMax: Int?
    /// Whether the headphones have a sound device of their own (`headphones.device`): the output
    /// follows the jack (`Command.routeOutput`).
    public var routes: Bool

    public init(pauseOnUnplug: Bool = true, volumeMax: Int? = nil, routes: Bool = false) {
        self.pauseOnUnplug = pauseOnUnplug
        self.volumeMax = volumeMax
        self.routes = routes
    }
}

