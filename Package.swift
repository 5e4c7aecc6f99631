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
        .systemLibrary(name: "CTagLib", path: "Sources/CTagLib", pkgConfig: "taglib_c",
                       providers: [.apt(["libtagc0-dev", "libtag-c-dev"])]),

        // Linux headers Glibc leaves out (eventfd, signalfd, timerfd).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),

        // The functional core: standard library only.
        .target(name: "JukeboxCore"),

        // libasound's own messages, routed to the log (its handler is variadic: C only).
        .target(name: "CAlsaMessages", dependencies: ["CALSA"], linkerSettings: [.linkedLibrary("asound")]),

        // Adapters.
        .target(name: "JukeboxAudio", dependencies: ["CALSA", "CSndfile", "CTagLib", "CAlsaMessages"]),
        // Buttons and keys: a uniform API over libgpiod 1.6 and 2.x (chosen at compile time), evdev.
        .target(name: "CInput", linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "JukeboxBoard", dependencies: ["JukeboxCore", "CInput", "CLinux"]),

        // The imperative shell: runtime loop, persistence, configuration, terminal.
        .target(name: "JukeboxService", dependencies: ["JukeboxCore", "JukeboxAudio", "JukeboxBoard", "CLinux"]),

        .executableTarget(name: "jukebox", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxAudio", "JukeboxBoard"]),

        // The ALSA test device: C, built as libJukeboxTestPCM.so. -DPIC or libasound's dlsym check fails.
        .target(name: "JukeboxTestPCM", dependencies: ["CALSA"], cSettings: [.define("PIC")],
                linkerSettings: [.linkedLibrary("asound")]),

        // Test audio, the test device's driver, polling waits: no XCTest, so the benchmark uses them too.
        .target(name: "JukeboxFixtures", dependencies: ["CSndfile"]),
        // Shared by the tests only: the core harness (XCTest) plus the fixtures.
        .target(name: "JukeboxTestSupport", dependencies: ["JukeboxCore", "JukeboxFixtures"]),

        .executableTarget(name: "JukeboxBench", dependencies: [
            "JukeboxService", "JukeboxCore", "JukeboxAudio", "JukeboxBoard", "JukeboxFixtures", "CLinux", "CSndfile"]),
        .executableTarget(name: "JukeboxFuzz", dependencies: ["JukeboxService", "JukeboxCore"]),

        .testTarget(name: "JukeboxCoreTests", dependencies: ["JukeboxCore", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxAudioTests", dependencies: ["JukeboxAudio", "JukeboxTestSupport", "CALSA", "CSndfile"]),
        .testTarget(name: "JukeboxServiceTests", dependencies: ["JukeboxService", "JukeboxCore", "JukeboxBoard", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxBoardTests", dependencies: ["JukeboxBoard", "JukeboxCore", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxCLITests", dependencies: ["JukeboxTestSupport", "JukeboxCore"]),
        // Power-cut and fault-soak runs of the binary: minutes long, run once by board/test.sh.
        // The GPIO button soak runs a Runtime in-process (no uinput or GPIO chip reaches the binary).
        .testTarget(name: "JukeboxReliabilityTests", dependencies: [
            "JukeboxTestSupport", "JukeboxCore", "JukeboxService", "JukeboxBoard", "JukeboxAudio"]),
    ]
)
