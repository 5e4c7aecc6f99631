// SPDX-License-Identifier: MIT

/// The version printed by `--version`.
let jukeboxVersion = "0.1.0"

enum Help {
    static let main = """
    jukebox \(jukeboxVersion): a small headless music player for Linux boards

    Usage:
      jukebox play [options] PATH...   play files, folders and M3U playlists in the foreground
      jukebox run --config FILE        run as the daemon: resume from the state file
      jukebox demo [options]           make a few demo tunes and play them
      jukebox --version | --help

    Run 'jukebox COMMAND --help' for a command's options.
    """

    static let play = """
    Usage: jukebox play [options] PATH...

    Plays audio files (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3), folders (recursively, in
    disc/track/name order) and M3U/M3U8 playlists, then exits 0 when the queue has played.
    On a terminal: space pause/resume, n next, p previous, left/right seek 10 s, +/- volume,
    s shuffle, r repeat, q quit.

    Options:
      --device PCM        ALSA PCM to play to (default: "default"; e.g. hw:CARD=DAC, plughw:1,0)
      --audio alsa|null   null discards audio but keeps real time (default: alsa)
      --state FILE        save queue and position to FILE while playing (default: none)
      --volume N          start volume 0-100 (default: 100, bit-perfect)
      --shuffle           start shuffled
      --repeat MODE       off, one or all (default: off)
      --log-level LEVEL   error, warning, info or debug (default: warning)
    """

    static let run = """
    Usage: jukebox run --config FILE

    The daemon form: needs no terminal, resumes queue and position from the state file, saves
    them on every change and every few seconds while playing, and on SIGTERM. When the state
    file holds no queue it queues the config's "music" paths. Keys of the JSON config file
    are listed in the README ("Configuration").

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
      --dir DIR           where to write the tunes (default: /tmp/jukebox-demo)
    """
}
