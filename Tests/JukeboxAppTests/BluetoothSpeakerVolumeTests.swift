// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// The speaker's own volume through the Bluetooth source (issue 31), with real children: a shell
/// script stands in for `bluealsa-cli` (Debian 12 has none) and writes down each argument vector;
/// the monitor is fed through a FIFO. Its PCM's soft volume is turned off and the level set
/// before the answer; levels asked for while one is being set wait, the newest only; a refusal
/// comes back with what bluealsa-cli said; the monitor's `Volume` lines become the core's facts.
final class BluetoothSpeakerVolumeTests: XCTestCase {
    private static let sink = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink"

    private var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-btvolume-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The stand-in: notes its arguments; `soft-volume` refuses as an old bluez-alsa would
        // when `refuse` exists; `volume` waits for a line on the FIFO `gate` when there is one.
        let script = """
        #!/bin/sh
        echo "$*" >> '\(dir)/args'
        case "$1" in
        soft-volume) if [ -e '\(dir)/refuse' ]; then echo "bluealsa-cli: Invalid command: $1" >&2; exit 1; fi ;;
        volume) if [ -p '\(dir)/gate' ]; then read line < '\(dir)/gate'; fi ;;
        esac
        exit 0
        """
        try script.write(toFile: dir + "/bluealsa-cli", atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(dir + "/bluealsa-cli", 0o755), 0)
        XCTAssertEqual(mkfifo(dir + "/monitor", 0o600), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// The speaker connected (listed at the start), the stand-in as bluealsa-cli.
    private func source(_ log: Log) -> BluetoothSpeakerSource {
        let programs = BluetoothSpeakerSource.Programs(
            monitor: ["/bin/sh", "-c", "echo ServiceRunning org.bluealsa; exec cat '\(dir)/monitor'"],
            list: ["/bin/sh", "-c", "printf '\(Self.sink)\\n'"],
            control: [dir + "/bluealsa-cli"])
        return BluetoothSpeakerSource(address: "AA:BB:CC:DD:EE:FF", programs: programs, log: log)
    }

    private func events(_ source: BluetoothSpeakerSource, count: Int, within seconds: Double = 10) -> [Event] {
        polledEvents(source, count: count, within: seconds)
    }

    private func args() -> [String] {
        ((try? String(contentsOfFile: dir + "/args", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func testTheSoftVolumeIsTurnedOffTheLevelSetAndTheSpeakersChangesReported() throws {
        let writer = open(dir + "/monitor", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        let log = Log(level: .info)
        let source = source(log)
        defer { source.close() }
        XCTAssertEqual(events(source, count: 1), [.bluetoothSpeaker(connected: true)], "\(log.recent)")
        // Taken: soft volume off, then the level, then the answer.
        XCTAssertNil(source.setVolume(level: 51, take: true))
        XCTAssertEqual(events(source, count: 1), [.bluetoothVolumeControl(taken: true, reason: "")], "\(log.recent)")
        XCTAssertEqual(args(), ["soft-volume \(Self.sink) off", "volume \(Self.sink) 51"])
        // A level: set, no answer.
        XCTAssertNil(source.setVolume(level: 76, take: false))
        XCTAssertTrue(waitFor(10) { _ = events(source, count: 1, within: 0.1); return args().count == 3 }, "\(args())")
        XCTAssertEqual(args().last, "volume \(Self.sink) 76")
        // The speaker's keys, seen by the monitor (another PCM's are not the speaker's).
        func say(_ line: String) { _ = (line + "\n").withCString { write(writer, $0, strlen($0)) } }
        say("PropertyChanged /org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink Volume 0x0A0A")
        say("PropertyChanged \(Self.sink) Volume 0x1E1E")
        XCTAssertEqual(events(source, count: 1), [.bluetoothVolume(level: 30, muted: false)])
        say("PropertyChanged \(Self.sink) Volume 0xDADA")
        XCTAssertEqual(events(source, count: 1), [.bluetoothVolume(level: 90, muted: true)])
        XCTAssertFalse(log.recent.contains { $0.contains("cannot set") }, "\(log.recent)")
    }

    /// Levels asked for while one is being set wait for it, and only the newest is set.
    func testLevelsWaitingForTheOneBeingSetAreTheNewestOnly() throws {
        let writer = open(dir + "/monitor", O_RDWR | O_CLOEXEC)
        defer { close(writer) }
        XCTAssertEqual(mkfifo(dir + "/gate", 0o600), 0)
        let gate = open(dir + "/gate", O_RDWR | O_CLOEXEC)
        defer { close(gate) }
        let log = Log(level: .info)
        let source = source(log)
        defer { source.close() }
        XCTAssertEqual(events(source, count: 1), [.bluetoothSpeaker(connected: true)], "\(log.recent)")
        XCTAssertNil(source.setVolume(level: 60, take: false))
        XCTAssertTrue(waitFor(10) { args().count == 1 }, "\(args())")
        for level in [61, 62, 63] { XCTAssertNil(source.setVolume(level: level, take: false)) }
        _ = "go\n".withCString { write(gate, $0, 3) }
        XCTAssertTrue(waitFor(10) { _ = events(source, count: 1, within: 0.1); return args().count == 2 }, "\(args())")
        _ = "go\n".withCString { write(gate, $0, 3) }
        XCTAssertEqual(events(source, count: 1, within: 1), [])
        XCTAssertEqual(args(), ["volume \(Self.sink) 60", "volume \(Self.sink) 63"])
    }

    /// An old bluez-alsa refuses the soft-volume switch: the answer says so with its words, and
    /// no level is set; without bluealsa-cli to set it, the answer comes at once.
    func testARefusalComesBackWithWhatBluealsaCLISaid() throws {
        let writer = open(dir + "/monitor", O_RDWR | O_CLOEXEC)
        defer { close(writer) }
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/refuse", contents: nil))
        let log = Log(level: .info)
        let source = source(log)
        defer { source.close() }
        XCTAssertEqual(events(source, count: 1), [.bluetoothSpeaker(connected: true)], "\(log.recent)")
        XCTAssertNil(source.setVolume(level: 51, take: true))
        XCTAssertEqual(events(source, count: 1), [.bluetoothVolumeControl(taken: false, reason: "bluealsa-cli: Invalid command: soft-volume")])
        XCTAssertEqual(args(), ["soft-volume \(Self.sink) off"])

        let without = BluetoothSpeakerSource(address: "AA:BB:CC:DD:EE:FF",
                                             programs: .init(monitor: ["/bin/sh", "-c", "exec cat '\(dir)/monitor'"], list: ["/bin/true"]),
                                             log: log)
        defer { without.close() }
        XCTAssertEqual(without.setVolume(level: 51, take: true), .bluetoothVolumeControl(taken: false, reason: "the speaker's PCM is not known"))
        XCTAssertNil(without.setVolume(level: 51, take: false))
    }

    /// Through a running loop, wired as the player wires it: at the connect the speaker's soft
    /// volume goes off and the player's volume is set on it, then the samples go to 100; the
    /// speaker's keys become the status's volume; the player's volume goes to the speaker, the
    /// samples untouched.
    func testThroughALoopTheSpeakersVolumeIsThePlayers() throws {
        let writer = open(dir + "/monitor", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        let log = Log(level: .info)
        let source = source(log)
        defer { source.close() }
        let mailbox = Mailbox()
        let audio = RecordingAudio(mailbox: mailbox)
        var state = State()
        state.settings.bluetooth = BluetoothSettings()
        state.volume = 40
        let runtime = Runtime(state: state, audio: audio, store: nil, status: RecordingStatus(), log: log, mailbox: mailbox, sources: [source])
        runtime.bluetoothVolume = { level, take in source.setVolume(level: level, take: take) }
        runtime.start(initial: [])
        func until(_ what: @escaping () -> Bool) -> Bool { waitFor(10) { _ = runtime.step(wait: false); return what() } }
        XCTAssertTrue(until { runtime.state.bluetoothVolume.taken == true }, "\(log.recent)")
        XCTAssertEqual(args(), ["soft-volume \(Self.sink) off", "volume \(Self.sink) 51"])
        XCTAssertTrue(until { audio.calls.contains(.volume(100)) }, "\(audio.calls)")
        func say(_ line: String) { _ = (line + "\n").withCString { write(writer, $0, strlen($0)) } }
        // Its echo, then the speaker's keys.
        say("PropertyChanged \(Self.sink) Volume 0x3333")
        say("PropertyChanged \(Self.sink) Volume 0x1E1E")
        XCTAssertTrue(until { runtime.state.volume == 24 }, "\(runtime.state.volume) \(log.recent)")
        runtime.dispatch(.setVolume(60))
        XCTAssertTrue(until { self.args().count == 3 }, "\(args())")
        XCTAssertEqual(args().last, "volume \(Self.sink) 76")
        XCTAssertFalse(audio.calls.contains(.volume(60)), "the samples stay untouched: \(audio.calls)")
    }

    func testTheMonitorWatchesTheVolumeWithASpeaker() {
        let cli = "/usr/bin/bluealsa-cli"
        XCTAssertEqual(BluetoothSpeakerSource.Programs.bluealsaCLI(cli).monitor, [cli, "monitor"])
        XCTAssertNil(BluetoothSpeakerSource.Programs.bluealsaCLI(cli).control)
        XCTAssertEqual(BluetoothSpeakerSource.Programs.bluealsaCLI(cli, volume: true).monitor, [cli, "monitor", "--properties=Volume"])
        XCTAssertEqual(BluetoothSpeakerSource.Programs.bluealsaCLI(cli, volume: true).control, [cli])
        XCTAssertEqual(BluetoothSpeakerSource.Programs.bluealsaCLI(cli, phone: true, volume: true).monitor,
                       [cli, "monitor", "--properties=Running,Volume"])
    }
}
