// SPDX-License-Identifier: MIT

/// Policy knobs the core obeys. Built by the shell from the configuration file and command line.
public struct Settings: Equatable, Sendable {
    /// The most position a power cut may lose while playing (seconds). The place is saved
    /// `placeSaveSpacing` apart, a little more often, so that a save which is still being written
    /// when the power goes does not push the loss past this bound.
    public var saveInterval: Double = 5
    /// Seconds between position saves while playing: `saveInterval` less what a write may take
    /// (a fifth of it, at most 1 s). The power-cut test found 4.71 s lost against 5 s when the save
    /// started only at 5 s: the write (an fsync on a loaded SD card) and the kill landed together.
    public var placeSaveSpacing: Double { saveInterval - min(1, saveInterval / 5) }
    /// `previous` restarts the current track when more than this many seconds were heard.
    public var previousRestartThreshold: Double = 3
    /// Seconds moved by one seek-forward/seek-back intent.
    public var seekStep: Double = 10
    /// Volume points moved by one volume-up/volume-down intent.
    public var volumeStep: Int = 5
    /// The lowest volume a user can set (so a box turned "off" by volume still sounds).
    public var volumeMin: Int = 0
    /// The highest volume a user can set.
    public var volumeMax: Int = 100
    /// First wait (seconds) before probing a device that could not be opened; doubles per failure.
    /// A probe only opens and closes the device (no decoding), so its cost does not grow with the wait.
    public var deviceRetryInitial: Double = 0.125
    /// The longest wait between device probes (seconds): a device freed by another program is
    /// noticed within this time (plus the open).
    public var deviceRetryMax: Double = 0.25
    /// The longest wait between probes of a lost device whose return the kernel announces
    /// (`State.deviceReturnAnnounced`): the announcement finds the return, so this is only a net
    /// for one missed (seconds).
    public var deviceRetryAnnouncedMax: Double = 10
    /// Whether the program ends (exit code 0) when the queue has played to its end.
    public var exitWhenQueueEnds: Bool = false
    /// On restore: play if the saved state was playing (true), or always come back paused.
    public var resumePlaying: Bool = true

    /// Seconds in pause before the device is released for other programs (0: at once).
    public var releaseDelay: Double = 3
    /// Whether playback resumes by itself when a lost device (unplugged DAC, HDMI sink off)
    /// comes back; when off, a lost device pauses the player.
    public var resumeAfterDeviceLoss = true
    /// Volume set at start-up, whatever was saved; nil keeps the saved volume.
    public var bootVolume: Int?
    /// A sound file played once before the first playback after start (a "ready" sound); nil: none.
    public var chime: String?
    /// A short sound for a warning given while sound plays (the battery runs low, the day's
    /// listening nearly ends): the track stops where it is heard, the chime sounds, and the track
    /// goes on from there. nil: the warning is a message only.
    public var warningChime: String?
    /// Seconds to go back when resuming at start-up (to pick up the thread of an audiobook).
    public var resumeRewind: Double = 0

    /// What each button's gestures do.
    public var buttons: [Button: ButtonBinding] = ButtonBinding.defaults
    /// Two-button chords.
    public var chords: [Chord] = []
    /// Seconds after an accepted edge during which a button's bounces are ignored.
    public var debounce: Double = 0.02
    /// Seconds within which a second press makes a double press (for buttons with one).
    public var doublePressWindow: Double = 0.35
    /// The battery's rules; nil: no battery monitor (readings are kept, nothing is done).
    public var battery: BatterySettings?
    /// The headphone jack's rules; nil: no jack watched (`Event.headphones` is then only kept).
    public var headphones: HeadphoneSettings?
    /// The Bluetooth speaker's rules; nil: no speaker configured (`Event.bluetoothSpeaker` is
    /// then only kept, and nothing moves to it).
    public var bluetooth: BluetoothSettings?
    /// What the power button's long press runs (an argument vector, no shell); also what idle
    /// power-off runs.
    public var powerCommand: [String] = ["systemctl", "poweroff"]
    /// Seconds stopped or paused with no input before `powerCommand` runs; nil: never. The last
    /// `State.powerOffCountdown` seconds count down on the display and the status.
    public var idlePowerOff: Double?
    /// Quadrature transitions per encoder detent (1, 2 or 4, by encoder model).
    public var encoderStepsPerDetent = 4
    /// Faster turns move the volume further per detent.
    public var encoderAcceleration = true
    /// What card swipes do.
    public var cards = CardSettings()
    /// Quiet hours, the daily listening limit, volume caps by time (config `parental`).
    public var parental = ParentalSettings()
    /// The sleep timer's fade and what follows it (config `sleep`).
    public var sleep = SleepSettings()
    /// ReplayGain: which gain a play gets (config `loudness`).
    public var loudness = LoudnessSettings()
    /// Folder → playback speed (config `speeds`): tracks in the folder or under it play at that
    /// speed with the pitch kept (the innermost folder wins); elsewhere 1. See `Speed`.
    public var speeds: [String: Double] = [:]
    /// Which sources (a card's folders, a `load`) remember their place and resume there.
    public var bookmarks: BookmarkMode = .always
    /// The most bookmarks kept; beyond it the one touched longest ago goes.
    public var bookmarkLimit = 500
    /// Folders whose sources (they or anything under them) are audiobooks for `bookmarks: audiobooks`.
    public var audiobookFolders: [String] = []
    /// Whether a USB stick inserted under a watched mount root is queued and played at once
    /// (config `usb.autoplay`); off: it is only there to be loaded.
    public var usbAutoplay = false

    /// The panel to draw frames for; nil: no panel.
    public var display: PanelLayout?
    /// Seconds the volume overlay stays after a change.
    public var volumeOverlaySeconds: Double = 2
    /// Seconds a message (a skipped file...) stays on the panel.
    public var messageSeconds: Double = 6
    /// Seconds the boot splash shows.
    public var splashSeconds: Double = 1.5

    /// Seconds a stream may go on reconnecting before it is skipped like an unplayable file
    /// (the config's `radio.giveUpSeconds`).
    public var streamGiveUp: Double = 120
    /// The podcasts (config `podcasts`): the feeds, how often they are fetched, the disk budget.
    public var podcasts = PodcastSettings()
    /// What other programs that play through the box may do (config `sources`).
    public var sources = SourceSettings()

    /// Default settings.
    public init() {}
}
