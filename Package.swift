// swift-tools-version:6.0
// SPDX-License-Identifier: MIT
import PackageDescription

/// Module map (see README "How it is built" and docs/ARCHITECTURE.md): a pure core with every decision, adapter modules that do
/// I/O and report outcomes, a service that owns the state and runs the loop, one executable.
/// Linux only (Debian 12 and 13, glibc): it speaks to ALSA, the GPIO character device, i2c-dev and
/// systemd, so no other platform is declared and sources import Glibc without guards.
let package = Package(
    name: "jukebox",
    products: [
        .executable(name: "jukebox", targets: ["jukebox"]),
        // The fault-injecting ALSA test device (an ioplug plugin libasound loads by path; see README "Tests").
        .library(name: "JukeboxTestPCM", type: .dynamic, targets: ["JukeboxTestPCM"]),
        // Figures anyone can regenerate (README "Performance and reliability").
        .executable(name: "jukebox-bench", targets: ["JukeboxBench"]),
        // The parsers under libFuzzer (`-sanitize=fuzzer`) or, in a plain build, randomized.
        .executable(name: "jukebox-fuzz", targets: ["JukeboxFuzz"]),
    ],
    targets: [
        // C libraries from Debian -dev packages, seen through pkg-config.
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        // MP3 streams: libmpg123's feed API decodes bytes as they arrive (libsndfile scans an MP3 to its end).
        .systemLibrary(name: "CMpg123", path: "Sources/CMpg123", pkgConfig: "libmpg123",
                       providers: [.apt(["libmpg123-dev"])]),
        // Ogg Vorbis and Opus streams: libogg's page sync with libvorbis's and libopus's packet decoders
        // (vorbisfile, opusfile and libsndfile seek and scan their source, which a live stream cannot).
        .systemLibrary(name: "COgg", path: "Sources/COgg", pkgConfig: "vorbis",
                       providers: [.apt(["libogg-dev", "libvorbis-dev"])]),
        .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus",
                       providers: [.apt(["libopus-dev"])]),
        // Opus files: libopusfile (on libogg and libopus) decodes, seeks sample-exactly and trims,
        // for less work than libsndfile's Opus reader around the same libopus (issue 33).
        .systemLibrary(name: "COpusFile", path: "Sources/COpusFile", pkgConfig: "opusfile",
                       providers: [.apt(["libopusfile-dev"])]),
        // AAC (ADTS, HE-AAC) streams: libfaad2 decodes one frame at a time from bytes it is handed.
        .systemLibrary(name: "CFaad", path: "Sources/CFaad", pkgConfig: "faad2",
                       providers: [.apt(["libfaad-dev"])]),
        // Native FLAC streams: libFLAC's stream decoder (libsndfile's FLAC reader wants a seekable file).
        .systemLibrary(name: "CFLAC", path: "Sources/CFLAC", pkgConfig: "flac",
                       providers: [.apt(["libflac-dev"])]),
        // Untagged files' loudness: libebur128 measures integrated loudness and peak (EBU R128) off the loop.
        .systemLibrary(name: "CEbur128", path: "Sources/CEbur128", pkgConfig: "libebur128",
                       providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(name: "CTagLib", path: "Sources/CTagLib", pkgConfig: "taglib_c",
                       providers: [.apt(["libtagc0-dev", "libtag-c-dev"])]),
        // Podcast feeds (RSS, Atom): libexpat, a streaming XML parser that never loads external entities.
        .systemLibrary(name: "CExpat", path: "Sources/CExpat", pkgConfig: "expat",
                       providers: [.apt(["libexpat1-dev"])]),

        // Linux headers Glibc leaves out (eventfd, signalfd, timerfd).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),

        // The functional core: standard library only.
        .target(name: "JukeboxCore"),

        // The system helpers every adapter and the shell share (clocks, EINTR, files, directories,
        // `SystemError`, threads, a monitor): Glibc only, so the service needs no adapter for them.
        .target(name: "JukeboxSystem"),

        // libasound's own messages, routed to the log (its handler is variadic: C only).
        .target(name: "CAlsaMessages", dependencies: ["CALSA"], linkerSettings: [.linkedLibrary("asound")]),

        // dlopen and dlsym for the shims below: libcurl, libmosquitto, libmicrohttpd and libcrypt are
        // loaded when first used, not linked, so a player that plays no station, speaks no MQTT and
        // serves no page never maps them and what they pull in (OpenSSL, Kerberos, LDAP, GnuTLS…:
        // several MiB of its RSS, issue 33). Only their
        // headers are needed to build; glibc 2.34+ has dlopen in libc itself.
        .target(name: "CLibraryLoader"),

        // HTTP(S) for the radio streams: libcurl (libcurl4-openssl-dev's header; libcurl.so.4 loaded on the
        // first transfer) behind a C shim, its setopt being variadic.
        .target(name: "CHTTP", dependencies: ["CLibraryLoader"]),

        // The web face's HTTP server: libmicrohttpd (libmicrohttpd-dev) behind a C shim, its
        // MHD_start_daemon being variadic; and the PIN's yescrypt hash through libcrypt. Both loaded
        // on first use (libmicrohttpd.so.12, libcrypt.so.1): the player is the same binary.
        .target(name: "CWeb", dependencies: ["CLibraryLoader"]),

        // MQTT: libmosquitto (libmosquitto-dev's header; libmosquitto.so.1 loaded by the first client),
        // its functions as jb_mosquitto_X.
        .target(name: "CMosquitto", dependencies: ["CLibraryLoader"]),

        // Playback speed with the pitch kept: libSoundTouch (libsoundtouch-dev, LGPL) is C++, so a
        // small C++ shim gives it a C ABI (create, tempo, put, receive, flush, clear).
        .target(name: "CSoundTouch", linkerSettings: [.linkedLibrary("SoundTouch"), .linkedLibrary("stdc++")]),

        // Adapters.
        .target(name: "JukeboxAudio", dependencies: ["JukeboxSystem", "CALSA", "CSndfile", "CTagLib", "CAlsaMessages", "CLinux",
                                                     "CHTTP", "CMpg123", "COgg", "COpus", "COpusFile", "CFaad", "CFLAC", "CSoundTouch",
                                                     "CEbur128", "CExpat"]),
        // Buttons and keys: a uniform API over libgpiod 1.6 and 2.x (chosen at compile time), evdev.
        .target(name: "CInput", linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "JukeboxBoard", dependencies: ["JukeboxCore", "JukeboxSystem", "CInput", "CLinux"]),

        // The imperative shell: runtime loop, persistence, configuration, terminal. It reaches the
        // adapters only through its ports (Ports.swift): no ALSA, libsndfile, TagLib or libgpiod in
        // its build (board/check-modules.sh fails if one comes back).
        .target(name: "JukeboxService", dependencies: ["JukeboxCore", "JukeboxSystem", "CLinux"]),

        // The composition root's wiring: the adapters behind the service's ports (AudioEngine as
        // AudioPort, GPIO and input devices as EventSources, the panel as DisplaySink). Shared by the
        // executable, the benchmark and the tests that run the real adapters in a loop.
        .target(name: "JukeboxApp", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxAudio", "JukeboxBoard", "CLinux"]),

        // The MQTT face: a broker bridged to the control socket (libmosquitto on its own threads).
        .target(name: "JukeboxMQTT", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxSystem", "CMosquitto"]),

        // The web face: an HTTP server (its own process, `jukebox web`) speaking to the player
        // only through the control socket, like the MQTT face.
        .target(name: "JukeboxWeb", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxSystem", "CWeb"],
                exclude: ["Assets"]),

        .executableTarget(name: "jukebox", dependencies: [
            "JukeboxApp", "JukeboxMQTT", "JukeboxWeb", "CWeb", "JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxAudio", "JukeboxBoard"]),

        // The ALSA test device: C, built as libJukeboxTestPCM.so. -DPIC or libasound's dlsym check fails.
        .target(name: "JukeboxTestPCM", dependencies: ["CALSA"], cSettings: [.define("PIC")],
                linkerSettings: [.linkedLibrary("asound")]),

        // The polling wait of the tests and the benchmark: no C library, so the service's tests use it.
        .target(name: "JukeboxWaiting"),
        // Test audio, the test device's driver, and (re-exported) the wait: no XCTest, so the
        // benchmark uses them too.
        .target(name: "JukeboxFixtures", dependencies: ["JukeboxWaiting", "CSndfile", "CALSA"]),
        // Shared by the tests only: the core harness (XCTest), the manual clock and the service's
        // test doubles (a recording audio port and status sink). No C library, so the service's
        // tests use it; tests that need test audio import JukeboxFixtures as well.
        .target(name: "JukeboxTestSupport", dependencies: ["JukeboxCore", "JukeboxService", "JukeboxWaiting"]),

        .executableTarget(name: "JukeboxBench", dependencies: [
            "JukeboxApp", "JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxAudio", "JukeboxBoard", "JukeboxFixtures",
            "CLinux", "CSndfile"]),
        // JukeboxAudio for its pure stream parsers (HLS playlists, MPEG-TS, podcast feeds): the `hls`, `ts`
        // and `feed` harnesses.
        .executableTarget(name: "JukeboxFuzz", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxAudio"]),

        .testTarget(name: "JukeboxSystemTests", dependencies: ["JukeboxSystem"]),
        .testTarget(name: "JukeboxCoreTests", dependencies: ["JukeboxCore", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxAudioTests", dependencies: ["JukeboxAudio", "JukeboxFixtures", "JukeboxTestSupport", "CALSA", "CSndfile",
                                                             "CMpg123", "CFaad", "CFLAC"]),
        // No adapter and no C library but Linux's own headers: see JukeboxService.
        .testTarget(name: "JukeboxServiceTests", dependencies: [
            "JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxWaiting", "JukeboxTestSupport", "CLinux"]),
        // The wiring with the real adapters: GPIO edges through libgpiod's read path into a loop, panels.
        .testTarget(name: "JukeboxAppTests", dependencies: [
            "JukeboxApp", "JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxAudio", "JukeboxBoard", "JukeboxTestSupport",
            "JukeboxFixtures"]),
        // The MQTT bridge against a real mosquitto on 127.0.0.1 (and a player with the real engine
        // on the paced silent output, so positions move as they would).
        .testTarget(name: "JukeboxMQTTTests", dependencies: [
            "JukeboxMQTT", "JukeboxApp", "JukeboxAudio", "JukeboxService", "JukeboxCore", "JukeboxSystem", "JukeboxTestSupport",
            "JukeboxFixtures", "CMosquitto"]),
        // The web face's pure pieces (router, request guard, sessions, PIN back-off, which lines are open).
        .testTarget(name: "JukeboxWebTests", dependencies: ["JukeboxWeb", "JukeboxService", "JukeboxCore"]),
        .testTarget(name: "JukeboxBoardTests", dependencies: ["JukeboxBoard", "JukeboxCore"]),
        .testTarget(name: "JukeboxEndToEndTests", dependencies: ["JukeboxFixtures", "JukeboxCore", "JukeboxTestSupport"]),
        // Power-cut and fault-soak runs of the binary: minutes long, run once by board/test.sh.
        // The GPIO button soak runs a Runtime in-process (no uinput or GPIO chip reaches the binary).
        .testTarget(name: "JukeboxReliabilityTests", dependencies: [
            "JukeboxTestSupport", "JukeboxFixtures", "JukeboxCore", "JukeboxSystem", "JukeboxService", "JukeboxApp", "JukeboxBoard",
            "JukeboxAudio"]),
    ]
)
