// SPDX-License-Identifier: MIT
// jukebox-bench: the figures of docs/TESTING.md "Performance and reliability". Usually run through
// board/bench.sh, which builds the binary the way board/install.sh does and passes it here.
import Foundation
import Glibc

let usage = """
usage: jukebox-bench [--jukebox PATH] [--test-pcm PATH] [--json FILE] [--quick]
                     [--build TEXT] [--toolchain TEXT] [--only SECTION,...] [--day-hour SECONDS]

Runs the jukebox binary without a sound card and prints a table, then one JSON object.
  --jukebox PATH   the binary to measure (default: jukebox next to this program)
  --test-pcm PATH  libJukeboxTestPCM.so (default: next to this program, or $JUKEBOX_TEST_PCM_LIB)
  --json FILE      also write the JSON object to FILE
  --quick          shorter runs and fewer repeats (a smoke test, about a minute)
  --build TEXT     how the binary was built, for the report (e.g. "release, --static-swift-stdlib")
  --toolchain TEXT the Swift toolchain, for the report
  --only LIST      some of: playback,resume,button,latency,library,usb,state,loop,gapless,idle,web,faces,day
  --day-hour SECONDS  wall seconds per "hour" of the day section (default 1.75 with --quick, else 6;
                   180 plays a whole day of audio at 20x real time in 72 minutes, twice)
Exit status: 0 when every section ran, 1 when one failed, 2 on a usage error.
"""

/// Parsed command line.
struct Options {
    var jukebox: String?
    var testPCM: String?
    var json: String?
    var quick = false
    var build = "unknown"
    var toolchain = ""
    var onlyGiven = false
    var dayHour: Double?
    var only: Set<String> = ["playback", "resume", "button", "latency", "library", "usb", "state", "loop", "gapless", "idle", "web", "faces", "day"]

    init(_ args: [String]) throws {
        var rest = args[...]
        func value(_ name: String) throws -> String {
            guard let v = rest.popFirst() else { throw BenchError("\(name) needs a value") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--jukebox": jukebox = try value(arg)
            case "--test-pcm": testPCM = try value(arg)
            case "--json": json = try value(arg)
            case "--quick": quick = true
            case "--build": build = try value(arg)
            case "--toolchain": toolchain = try value(arg)
            case "--day-hour":
                guard let seconds = Double(try value(arg)), seconds >= 1, seconds <= 3600 else {
                    throw BenchError("--day-hour needs seconds, 1-3600")
                }
                dayHour = seconds
            case "--only":
                let names = Set(try value(arg).split(separator: ",").map(String.init))
                let unknown = names.subtracting(only)
                guard unknown.isEmpty else { throw BenchError("unknown section(s): \(unknown.sorted().joined(separator: ", "))") }
                only = names
                onlyGiven = true
            case "-h", "--help":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument \(arg)")
            }
        }
        // The web section (a browser, about 20 s) stays out of --quick unless asked for by name.
        if quick && !onlyGiven { only.remove("web") }
    }
}

/// What the machine is, for the report.
func machineDescription(_ o: Options, binary: String) -> [String: Any] {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
    let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
    let os = osRelease.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
        .map { String($0.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "unknown"
    var name = utsname()
    uname(&name)
    func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    let memory = ProcessInfo.processInfo.physicalMemory
    return ["cpu": model, "cores": ProcessInfo.processInfo.activeProcessorCount, "os": os,
            "kernel": text(name.release), "arch": text(name.machine), "memoryMiB": Int(memory >> 20),
            "binary": binary, "build": o.build, "toolchain": o.toolchain]
}

/// The 1-, 5- and 15-minute load averages: other work on the machine shows in the latency figures.
func loadAverage() -> [Double] {
    var loads = [Double](repeating: .nan, count: 3)
    _ = getloadavg(&loads, 3)
    return loads.map { round($0, 2) }
}

func executableDirectory() -> String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (exe as NSString).deletingLastPathComponent
}

func main() -> Int32 {
    let options: Options
    do { options = try Options(Array(CommandLine.arguments.dropFirst())) } catch {
        FileHandle.standardError.write(Data("jukebox-bench: \(error)\n\(usage)\n".utf8))
        return 2
    }
    let started = Date()
    let binary = options.jukebox ?? executableDirectory() + "/jukebox"
    let library = options.testPCM ?? ProcessInfo.processInfo.environment["JUKEBOX_TEST_PCM_LIB"]
        ?? executableDirectory() + "/libJukeboxTestPCM.so"
    for (what, path) in [("jukebox binary", binary), ("test device", library)] where !FileManager.default.fileExists(atPath: path) {
        FileHandle.standardError.write(Data("jukebox-bench: no \(what) at \(path) (build it, or see --help)\n".utf8))
        return 2
    }
    let ws: Workspace
    do { ws = try Workspace(binary: binary, testPCMLibrary: library) } catch {
        FileHandle.standardError.write(Data("jukebox-bench: \(error)\n".utf8))
        return 1
    }
    defer { ws.remove() }

    var report = Report()
    report.quick = options.quick
    report.machine = machineDescription(options, binary: binary)
    report.machine["testDevice"] = library
    report.machine["loadAverageAtStart"] = loadAverage()
    // A plugin built by SwiftPM as a dynamic library product links libswiftCore.so even though it is
    // C: loading it would add a second Swift runtime to the player's memory. board/bench.sh builds it with cc.
    let pluginLinksSwift = ((try? Data(contentsOf: URL(fileURLWithPath: library))) ?? Data()).range(of: Data("libswiftCore.so".utf8)) != nil
    report.machine["testDeviceLinksSwiftRuntime"] = pluginLinksSwift
    if pluginLinksSwift {
        let warning = "jukebox-bench: warning: \(library) links libswiftCore.so, which inflates the player's "
            + "resident memory; build it with cc as board/bench.sh does\n"
        FileHandle.standardError.write(Data(warning.utf8))
    }
    let q = options.quick
    func section(_ name: String, _ body: () throws -> Void) {
        guard options.only.contains(name) else { return }
        FileHandle.standardError.write(Data("jukebox-bench: \(name)...\n".utf8))
        do { try body() } catch { report.failures.append("\(name): \(error)") }
    }
    section("playback") {
        let plan = q ? PlaybackPlan(rssSeconds: 2, shortSeconds: 1, longSeconds: 11, repeats: 1)
            : PlaybackPlan(rssSeconds: 4, shortSeconds: 2, longSeconds: 62, repeats: 3)
        for format in BenchFormat.allCases { report.playback.append(try PlaybackBench.measure(format, plan: plan, in: ws)) }
    }
    section("resume") {
        for format in BenchFormat.allCases { report.resume.append((format, try ResumeBench.measure(format, runs: q ? 2 : 11, in: ws))) }
        report.processFloor = try ResumeBench.processFloor(runs: q ? 3 : 11, in: ws)
    }
    section("button") {
        report.button = try ButtonBench.measure(presses: q ? 10 : 40).port
        report.buttonToSound = try ButtonBench.measure(presses: q ? 10 : 40, engineFile: try ws.audio(.flac, seconds: 30)).started
    }
    section("latency") {
        for (device, rewinds) in [(ws.recordingDevice, false), (ws.rewindingDevice, true)] {
            report.commandLatency.append(try CommandLatencyBench.measure(reps: q ? 3 : 10, device: device, rewinds: rewinds, in: ws))
        }
    }
    section("library") {
        for count in q ? [200] : [200, 2000] { report.library.append(try LibraryBench.measure(tracks: count, repeats: q ? 1 : 3, in: ws)) }
    }
    section("usb") {
        report.usbStick = try USBStickBench.measure(files: q ? 2000 : 20_000, repeats: q ? 1 : 3, in: ws)
    }
    section("state") {
        for length in q ? [16] : [16, 2000] {
            // The layout before the sidecar, for the comparison (left out of the quick run).
            if !q { report.stateWrites.append(try StateWritesBench.measure(queueLength: length, singleFile: true, in: ws)) }
            report.stateWrites.append(try StateWritesBench.measure(queueLength: length, in: ws))
        }
        if !q { report.liveStateWrites = try StateWritesBench.live(seconds: 12, in: ws) }
        report.placeUnderLoad = try PlaceSaveUnderLoadBench.measure(saves: q ? 10 : 40, in: ws)
    }
    section("loop") {
        report.loopStall = try LoopStallBench.measure(presses: q ? 12 : 60, fsyncDelay: 0.5, in: ws)
    }
    section("gapless") {
        for format in BenchFormat.allCases { report.gapless.append(try GaplessBench.measure(format, in: ws)) }
    }
    section("idle") {
        // Every format in the full run (the decoders refill differently); FLAC alone in the quick one.
        report.idle = try IdleBench.measure(seconds: q ? 3 : 10, formats: q ? [.flac] : BenchFormat.allCases, in: ws)
    }
    section("web") {
        report.web = try WebBench.measure(changes: q ? 5 : 20, in: ws)
    }
    section("faces") {
        // `jukebox run` on the test device and `plug` over it, without faces and with MPD, MQTT and
        // the web app on: 4 runs of the five formats in turn (about 40 s quick), 6 in full (160 s).
        let devices: [(name: String, kind: String)] = [(ws.realTimeDevice, "the test device (an ALSA ioplug plugin inside the player, written to directly as hw is)"),
                       (ws.realTimePlugDevice, "plug over the test device (as plughw)")]
        // MPD and the web app without MQTT only in the full run (they cost the player little; 40 s more).
        let sets: [FaceSet] = q ? [.none, .all] : [.none, .mpdAndWeb, .all]
        report.faces = try FacesBench.measure(devices: devices, sets: sets, settle: q ? 0.75 : 1, window: q ? 0.75 : 4, in: ws)
    }
    section("day") {
        // 24 "hours" of 1.75 s in the quick run (about 50 s in CI), 6 s in the full one (about 2.5 min).
        report.day = try DayBench.measure(hourSeconds: options.dayHour ?? (q ? 1.75 : 6), in: ws)
    }
    report.seconds = Date().timeIntervalSince(started)
    report.machine["loadAverageAtEnd"] = loadAverage()

    print(report.table)
    print("")
    do {
        let text = try report.jsonText()
        print(text)
        if let path = options.json { try (text + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
    } catch {
        FileHandle.standardError.write(Data("jukebox-bench: JSON: \(error)\n".utf8))
        return 1
    }
    return report.failures.isEmpty ? 0 : 1
}

exit(main())
