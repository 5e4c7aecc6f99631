// SPDX-License-Identifier: MIT

import JukeboxService

/// The version printed by `--version`.
let jukeboxVersion = "0.1.0"

enum Help {
    static let main = """
    jukebox \(jukeboxVersion): a small headless music player for Linux boards

    Usage:
      jukebox play [options] PATH...   play files, folders and M3U playlists in the foreground
      jukebox run --config FILE        run as the daemon: resume from the state file
      jukebox check-config [FILE]      check a config as run reads it, and say what it sets (no playing)
      jukebox demo [options]           make a few demo tunes and play them
      jukebox ctl COMMAND...           send a command to the running player (try: ctl help)
      jukebox yield -- CMD ARGS...     have the player release the sound device while CMD runs
      jukebox source begin|end NAME    for shairport-sync's hooks: another source takes the device
      jukebox probe SUBJECT [options]  bring-up tools: tone, gpio, i2c, display, input, rfid, replay-i2c
      jukebox mpd-tcp [--mqtt] --config FILE
                                       the MPD TCP listeners (or MQTT broker) FILE configures (for the service's drop-in)
      jukebox mqtt-forget --config FILE
                                       remove what the player announced over MQTT (for uninstalling)
      jukebox web [options]            the web face: the web app and its API, on the control socket
      jukebox web-pin [options]        sets the web face's PIN (on the box: the page cannot)
      jukebox snapcast-control         snapserver's stream plugin for a jukebox stream (its controlscript)
      jukebox --version | --help

    Run 'jukebox COMMAND --help' for a command's options.
    """

    static let play = """
    Usage: jukebox play [options] PATH...

    Plays audio files (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3, M4A/M4B with AAC or ALAC),
    folders (recursively, in disc/track/name order) and M3U/M3U8 playlists, then exits 0 when
    the queue has played.
    On a terminal: space pause/resume, n next, p previous, left/right seek 10 s, +/- volume,
    s shuffle, r repeat, q quit.

    Options:
      --device PCM        ALSA PCM to play to (default: "default"; e.g. hw:CARD=DAC, plughw:1,0)
      --audio alsa|null   null discards audio but keeps real time (default: alsa)
      --state FILE        save queue and position to FILE while playing (default: none); when
                          FILE's queue is the same paths (same files, same order), resume at
                          its track and position instead of starting over
      --volume N          start volume 0-100 (default: 100, bit-perfect)
      --shuffle           start shuffled
      --repeat MODE       off, one or all (default: off)
      --log-level LEVEL   error, warning, info or debug (default: warning)
      --socket PATH       control socket ("" for none; default: \(ControlSocket.defaultPath()))
    """

    static let snapcastControl = """
    Usage: jukebox snapcast-control [--socket PATH]

    snapserver's stream plugin ("controlscript") for a pipe source jukebox plays into: JSON-RPC on
    stdin and stdout, bridged to the player's control socket, so Snapcast clients show what plays
    and play, pause, skip, seek, set the volume, shuffle and repeat. snapserver starts it; its
    controlscript must name a file, so install.sh links /usr/local/lib/jukebox/snapcast-control
    (the .deb: /usr/lib/jukebox/snapcast-control) to this binary, which runs this command when
    called by that name. snapserver's own arguments (--stream=ID, --snapcast-port=N...) are ignored.

    Options:
      --socket PATH       the player's control socket (default: $JUKEBOX_SOCKET, else
                          /run/jukebox/control, else the usual default); asked again at every
                          connection, so the player may start later
    """

    static let run = """
    Usage: jukebox run --config FILE

    The daemon form: needs no terminal, resumes queue and position from the state file, saves
    them on every change and every few seconds while playing, and on SIGTERM. When the state
    file holds no queue it queues the config's "music" paths. Music whose folder is not there
    yet (a stick or share not mounted) is waited for, keeping the queue and the place; a state
    file that cannot be read is never written over; one player per state file. Keys of the
    JSON config file are listed in docs/CONFIGURATION.md.

    Options:
      --config FILE       the JSON configuration (required)
      --log-level LEVEL   overrides the config's logLevel
    """

    static let demo = """
    Usage: jukebox demo [options]

    Makes three short tagged tunes (FLAC, Ogg Vorbis, WAV) and plays them with the terminal
    status line and keys. With no sound card it says so and plays through a silent output
    that keeps real time.

    Options:
      --device PCM        ALSA PCM to play to (default: "default")
      --audio alsa|null   null discards audio but keeps real time (default: alsa)
      --dir DIR           where to write the tunes (default: a new private folder
                          $TMPDIR/jukebox-demo-XXXXXX, removed at the end)
      --panel 16x2|20x4|oled   also show a simulated display (the exact bytes a real
                          HD44780 or SSD1306 would get, decoded) above the status line
      --socket PATH       control socket ("" for none)
    """

    static let ctl = """
    Usage: jukebox ctl [--socket PATH] [--timeout S] COMMAND...

    Sends one command to the running player and prints its reply; exit 1 on an error reply or
    when no player answers. Commands: status [--json], play, pause, toggle, stop, next, prev,
    seek [+|-]m:ss, vol [+|-]N, shuffle on|off, repeat off|one|all, queue [page], add PATH,
    load PATH, clear, save, interrupt begin [reason] (replies once the sound device is free),
    interrupt end, diag, log [N], version, help, card assign [ID] PATH|COMMAND (puts the last
    new card, or card ID, on the cards map; replies once the map is written), card assign --next
    PATH|URL|COMMAND (the next card swiped gets it instead of playing), card assign --cancel,
    card delete ID, cards --json, bookmarks --json, bookmark reset PATH|--all. `events` prints a line per event
    (`event 04:47:43.250 button next down → playing`, local time) until you press Enter (a line
    on stdin) or the player stops; `events --json` prints each as a JSON object, with the card id
    or the button and its gesture as fields of their own. Text from files and tags is shown with control characters
    replaced by U+FFFD; `status --json` escapes them instead.

    Options:
      --socket PATH       the player's control socket (default: \(ControlSocket.defaultPath()))
      --timeout S         seconds to wait for the reply (default: 10; bluetooth: \(BluetoothControl.longest))
    """

    static let source = """
    Usage: jukebox source begin NAME [--sender TEXT] [--watch PID] [--socket PATH] [--timeout S]
           jukebox source end NAME [--socket PATH] [--timeout S]

    For the hooks of another program that plays through the box (NAME: airplay for
    shairport-sync, bluetooth for bluez-alsa; see docs/SOURCES.md). `begin` asks the player to
    release the sound device and returns once it is free (exit status 0), or 1 when the config
    forbids the source (the player keeps the device). A small process it leaves behind holds the
    source until `end`, the player's exit, or the end of the watched program (by default this
    command's parent: shairport-sync itself), so a program that crashes never leaves the player
    waiting. `end` gives the device back: the player resumes, or stays paused, as the config's
    `sources` says. With no player running, both do nothing and exit 0.

    Options:
      --sender TEXT       who sends (an AirPlay sender's name), shown in the status
      --watch PID         the program the source lives with (default: the parent process)
      --socket PATH       the player's control socket (default: \(ControlSocket.defaultPath()))
      --timeout S         seconds to wait for the release (default: 10)
    """

    static let yield = """
    Usage: jukebox yield [--socket PATH] [--reason TEXT] -- CMD ARGS...

    Asks the running player to release the sound device, runs CMD (an argument vector, no
    shell) once it is free, waits for it, and lets the player resume where it was. Exits with
    CMD's status. Overlapping yields and interruptions end when the last one ends; if this
    process dies, the player resumes anyway. With no player running, CMD just runs.

    Options:
      --socket PATH       the player's control socket (default: \(ControlSocket.defaultPath()))
      --reason TEXT       shown in the status while CMD runs (default: CMD's name)
      --timeout S         seconds to wait for the release (default: 10)
    """

    /// One `probe` subject: its options and what it does (its own `--help`, and a line of `probe --help`).
    struct ProbeSubject {
        var name: String
        var options: String
        var summary: String
        var details: String
    }

    static let probeSubjects = [
        ProbeSubject(name: "tone", options: "[--device PCM] [--seconds N] [--frequency HZ]",
                     summary: "a test tone on the sound device",
                     details: """
                     Options:
                       --device PCM        ALSA PCM to play to (default: "default")
                       --seconds N         1-60 (default: 2)
                       --frequency HZ      20-20000 (default: 440)
                     """),
        ProbeSubject(name: "gpio", options: "[--watch] [--chip CHIP] [--lines L,L...]",
                     summary: "list GPIO chips and lines; watch edges with timestamps to see bounce",
                     details: """
                     Without --watch: the chips, their lines' names and who uses them.
                     Options:
                       --watch             print each edge of --lines with its time and the gap to
                                           the line's previous edge (pull-up, active-low); Ctrl-C ends
                       --lines L,L...      line names (GPIO17) or CHIP:OFFSET, for --watch
                       --chip CHIP         the chip's label or path (default: found by line name)
                     """),
        ProbeSubject(name: "i2c", options: "[--bus BUS]",
                     summary: "list I2C buses; scan one for devices",
                     details: """
                     Options:
                       --bus BUS           a bus number, path (/dev/i2c-1) or adapter name to scan
                                           for answering addresses (like i2cdetect)
                     """),
        ProbeSubject(name: "display", options: "[--type T] [--bus BUS] [--address A]",
                     summary: "a test pattern and text on the display",
                     details: """
                     Options:
                       --type T            hd44780-16x2 (default), hd44780-20x4, ssd1306 or sh1106
                       --bus BUS           the I2C bus (number, path or adapter name)
                       --address A         the panel's address in decimal (39 = 0x27, 60 = 0x3C)
                     """),
        ProbeSubject(name: "input", options: "[--watch]",
                     summary: "list input devices; watch key events",
                     details: """
                     Options:
                       --watch             print the keys of every device with media keys; Ctrl-C ends
                     """),
        ProbeSubject(name: "rfid", options: "--device PATH | --name NAME | --reader rc522|pn532 [...]",
                     summary: "read a card reader as the player does (USB keyboard, RC522, PN532); print each id",
                     details: """
                     Without options: the input devices, to find a USB reader.
                     Options:
                       --device PATH       the reader's evdev device (/dev/input/by-id/…-event-kbd);
                                           with --reader rc522 its spidev node (/dev/spidev0.0)
                       --name NAME         (part of) its name, as probe input lists it
                       --reader R          keyboard (default), rc522 (SPI) or pn532 (I2C)
                       --bus PATH          pn532: the I2C bus (/dev/i2c-1)
                       --address A         pn532: its address in decimal (36 = 0x24)
                     A USB reader's ids are printed with the kernel's time of its Enter; keys that make
                     no id are printed as ignored. An RC522 or PN532 is looked at every 0.1 s: each
                     card placed and removed is printed, with the chip's problems. Ctrl-C ends.
                     """),
        ProbeSubject(name: "replay-i2c", options: "[--panel P] [--address A] [--pins standard|mjkdz] FILE",
                     summary: "show the screen a recorded I2C byte log draws",
                     details: """
                     FILE has one message a line: `27 W 0c 08 ...` (address, W or R, bytes in hex).
                     Options:
                       --panel P           hd44780-16x2 (default), hd44780-20x4, ssd1306 or sh1106
                       --address A         the panel's address in decimal (default: 39 or 60)
                       --pins P            the HD44780 backpack's wiring: standard (default) or mjkdz
                     """),
    ]

    static var probe: String {
        "Usage: jukebox probe SUBJECT [options]\n\nBring-up tools for a new box:\n\n"
            + probeSubjects.map { "  \($0.name) \($0.options)\n      \($0.summary)" }.joined(separator: "\n")
            + "\n\nRun 'jukebox probe SUBJECT --help' for one subject's options."
    }

    /// The help of `probe NAME`, nil for an unknown subject.
    static func probe(_ name: String) -> String? {
        probeSubjects.first { $0.name == name }.map { "Usage: jukebox probe \($0.name) \($0.options)\n\n\($0.summary.prefix(1).uppercased() + $0.summary.dropFirst()).\n\n\($0.details)" }
    }
}
