// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// `jukebox probe gpio|i2c|display|input`: see what the board has before writing a config.
enum ProbeBoard {
    static func run(_ what: String, _ args: [String]) throws(UsageError) -> Int32 {
        switch what {
        case "gpio": return try gpio(args)
        case "i2c": return try i2c(args)
        case "display": return try display(args)
        case "input": return try input(args)
        case "rfid": return try rfid(args)
        default: throw UsageError(message: "unknown probe '\(what)' (\(Probe.subjects))")
        }
    }

    static func gpio(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--lines", "--chip"], flags: ["--watch"], command: "probe gpio")
        if a.wantsHelp { return Probe.subjectHelp("gpio") }
        writeAll(1, "libgpiod \(GPIOChips.libgpiodVersion) (raw edges; jukebox debounces from their timestamps)\n")
        if !a.flags.contains("--watch") {
            let chips = GPIOChips.list()
            if chips.isEmpty { writeAll(1, "no GPIO chips in /dev (a board needs gpiochip devices; see board/WIRING.md)\n") }
            for chip in chips {
                say("\(chip.path)  \(chip.label)  \(chip.lineCount) lines" + (chip.error.map { "  (\($0))" } ?? ""))
                for line in chip.lines where !line.name.isEmpty || line.used {
                    say("  \(line.offset)  \(line.name)" + (line.used ? "  used by \(line.consumer)" : ""))
                }
            }
            return 0
        }
        guard let list = a.options["--lines"] else { throw UsageError(message: "probe gpio --watch needs --lines GPIO17,GPIO27,...") }
        let names = list.split(separator: ",").map(String.init)
        let specs = names.map { GPIOLineSpec(chip: a.options["--chip"], name: $0) }
        let lines: GPIOLines
        do { lines = try GPIOLines.open(specs, consumer: "jukebox-probe") } catch {
            writeAll(2, "jukebox: \(error)\n")
            return 1
        }
        writeAll(1, "watching \(names.joined(separator: ", ")) (pull-up, active-low); Ctrl-C ends\n")
        var last: [Int: UInt64] = [:]
        while true {
            var fds = lines.fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), -1) > 0 || errno == EINTR else { return 1 }
            let edges: [GPIOEdge]
            do { edges = try lines.readEdges() } catch {
                writeAll(2, "jukebox: \(error)\n")
                return 1
            }
            for edge in edges {
                // The gap since the line's previous edge: bounce shows as gaps of a few ms or less.
                let gap = last[edge.line].map { "  +" + fixed(Double(edge.timestampNs &- $0) / 1e6, 3) + " ms" } ?? ""
                last[edge.line] = edge.timestampNs
                writeAll(1, fixed(edge.time, 6) + "  " + "\(names[edge.line]) \(edge.rising ? "pressed " : "released")\(gap)\n")
            }
        }
    }

    static func i2c(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--bus"], flags: [], command: "probe i2c")
        if a.wantsHelp { return Probe.subjectHelp("i2c") }
        let adapters = I2CBus.adapters()
        guard let bus = a.options["--bus"] else {
            if adapters.isEmpty { writeAll(1, "no I2C buses (/dev/i2c-N); on a Pi: dtparam=i2c_arm=on in config.txt and the i2c-dev module\n") }
            for adapter in adapters { say("\(adapter.path)  \(adapter.name)") }
            if !adapters.isEmpty { writeAll(1, "scan one with: jukebox probe i2c --bus /dev/i2c-N\n") }
            return 0
        }
        do {
            let i2c = try Int(bus).map { n throws(DeviceError) in try I2CBus(number: n) } ?? I2CBus(path: bus)
            defer { i2c.close() }
            let result = try i2c.scan()
            if result.answering.isEmpty { writeAll(1, "no device answers on \(i2c.path)\n") }
            for address in result.answering {
                let hint: String
                switch address {
                case 0x27, 0x3F: hint = "  (an HD44780 backpack: PCF8574 / PCF8574A)"
                case 0x3C, 0x3D: hint = "  (an SSD1306 / SH1106 OLED)"
                default: hint = ""
                }
                writeAll(1, "0x" + (address < 16 ? "0" : "") + String(address, radix: 16, uppercase: true) + hint + "\n")
            }
            return 0
        } catch {
            writeAll(2, "jukebox: \(error)\n")
            return 1
        }
    }

    static func display(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--type", "--bus", "--address"], flags: [], command: "probe display")
        if a.wantsHelp { return Probe.subjectHelp("display") }
        let type = try a.choice("--type", DisplayType.panels.map(\.rawValue)) ?? DisplayType.hd44780x16x2.rawValue
        let address = try a.int("--address", in: 3...119)
        let log = Log(level: .warning)
        let config = BoardConfig.Display(type: type, bus: a.options["--bus"], address: address)
        guard let sink = PanelSink.make(config, log: log) else { return 1 }
        let layout = config.kind?.layout ?? .lcd16x2
        let pattern = ["jukebox probe", "0123456789ABCDEFGHIJ", "▶⏸■🔀🔁🔂♪ äöüß é", String(repeating: "█", count: layout.columns)]
        let rows = (0..<layout.rows).map { DisplayFrame.fit(pattern[$0 % pattern.count], width: layout.columns) }
        let frame = DisplayFrame(rows: rows, progress: layout.graphic ? 0.5 : nil, progressRow: layout.graphic ? 5 : nil)
        // The init sequence has waits: tick until the frame is out or a few seconds have passed.
        let end = monotonicNow() + 3
        sink.show(frame)
        while monotonicNow() < end && sink.link.framesSent == 0 {
            usleep(10_000)
            sink.tick(now: monotonicNow())
            sink.show(frame)
        }
        if sink.link.framesSent == 0 {
            writeAll(2, "jukebox: the display did not take the test pattern (\(sink.link.state))\n")
            return 1
        }
        writeAll(1, "test pattern sent (\(sink.link.bytesSent) bytes); it should read:\n" + rows.joined(separator: "\n") + "\n")
        return 0
    }

    static func input(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: [], flags: ["--watch"], command: "probe input")
        if a.wantsHelp { return Probe.subjectHelp("input") }
        let devices = InputDevices.list()
        if devices.isEmpty { writeAll(1, "no input devices readable in /dev/input (group input?)\n") }
        for d in devices {
            say("\(d.path)  \(d.name)" + (d.hasMediaKeys ? "  [media keys]" : "") + (d.error.map { "  (\($0))" } ?? ""))
        }
        guard a.flags.contains("--watch") else { return 0 }
        let watched = InputDevices([.anyWithMediaKeys])
        watched.rescan()
        writeAll(1, "watching \(watched.opened.count) device(s) with media keys; Ctrl-C ends\n")
        while true {
            var fds = watched.fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 1000)
            for key in watched.read().keys {
                writeAll(1, fixed(key.time, 6) + "  key \(key.code) \(["up", "down", "repeat"][min(2, max(0, key.value))])\n")
            }
            watched.rescan()
        }
    }

    /// A keyboard-style card reader: grabbed as the player grabs it, each id printed as it is read.
    static func rfid(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--device", "--name", "--reader", "--bus", "--address"], flags: [], command: "probe rfid")
        if a.wantsHelp { return Probe.subjectHelp("rfid") }
        switch a.options["--reader"] {
        case nil, "keyboard"?: break
        case "rc522"?, "pn532"?: return try polledReader(a)
        case let other?: throw UsageError(message: "probe rfid: --reader must be keyboard, rc522 or pn532, not \(other)")
        }
        let selector: InputSelector
        if let path = a.options["--device"] {
            selector = .path(path)
        } else if let name = a.options["--name"] {
            selector = .name(name)
        } else {
            for d in InputDevices.list() { say("\(d.path)  \(d.name)" + (d.error.map { "  (\($0))" } ?? "")) }
            writeAll(1, "name the reader: jukebox probe rfid --device /dev/input/by-id/…-event-kbd (or --name NAME)\n")
            return 2
        }
        let devices: InputDevices
        do throws(DeviceError) { devices = try InputDevices.open([selector], grab: true) } catch {
            writeAll(2, "jukebox: \(error.message)\n")
            return 1
        }
        if let failed = devices.grabFailures.first {
            writeAll(2, "jukebox: \(failed.path): \(failed.error ?? "cannot grab it")\n")
        }
        for d in devices.opened { say("reading \(d.name) (\(d.path)), grabbed: its keys reach nothing else; Ctrl-C ends") }
        var keys = CardKeys()
        while true {
            var fds = devices.fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 1000)
            let batch = devices.read()
            for key in batch.keys {
                for output in keys.feed(key) {
                    switch output {
                    case .card(let id, let at): writeAll(1, fixed(at, 6) + "  card \(id)\n")
                    case .refused(let why): say("ignored: " + why)
                    }
                }
            }
            for gone in batch.lost {
                say("\(gone.name) went away (\(gone.error ?? "closed")); waiting for it")
                keys.reset()
            }
            for added in devices.rescan() { say("reading \(added.name) (\(added.path)), grabbed") }
        }
    }

    /// An RC522 (SPI) or PN532 (I2C): started as the player starts it, then looked at every
    /// 0.1 s, printing each card placed and removed and each problem (the chip is started again
    /// after one). Ctrl-C ends.
    static func polledReader(_ a: Arguments) throws(UsageError) -> Int32 {
        let looker: any CardLooker
        let what: String
        if a.options["--reader"] == "rc522" {
            let path = a.options["--device"] ?? "/dev/spidev0.0"
            do throws(DeviceError) { looker = MFRC522(try SPIDevice(path: path)) } catch {
                writeAll(2, "jukebox: \(error.message)\n")
                return 1
            }
            what = "rc522 on \(path)"
        } else {
            let bus = a.options["--bus"] ?? "/dev/i2c-1"
            let address = try a.int("--address", in: 0x08...0x77) ?? 0x24
            do throws(DeviceError) { looker = PN532(try I2CBus(path: bus), address: UInt8(address)) } catch {
                writeAll(2, "jukebox: \(error.message)\n")
                return 1
            }
            what = "pn532 on \(bus) at 0x\(String(address, radix: 16))"
        }
        do throws(DeviceError) { try looker.start() } catch {
            writeAll(2, "jukebox: \(what): \(error.message)\n")
            return 1
        }
        if let chip = looker as? MFRC522, let version = chip.version { say("\(what): MFRC522 version 0x\(String(version, radix: 16)); Ctrl-C ends") }
        if let chip = looker as? PN532, let fw = chip.firmware { say("\(what): PN5\(String(fw[0], radix: 16)) firmware \(fw[1]).\(fw[2]); Ctrl-C ends") }
        let watch = CardWatch(looker)
        while true {
            let at = monotonicNow()
            for output in watch.poll() {
                switch output {
                case .placed(let id): writeAll(1, fixed(at, 3) + "  card \(id)\n")
                case .removed(let id): writeAll(1, fixed(at, 3) + "  removed \(id)\n")
                case .problem(let why): say("problem: " + why)
                case .recovered(let what): say(what)
                }
            }
            sleepSeconds(max(0, 0.1 - (monotonicNow() - at)))
        }
    }

    /// Prints one line of names the kernel got from hardware (a USB device names itself), inert.
    static func say(_ line: String) {
        writeAll(1, DisplayText.inert(line) + "\n")
    }

    /// `value` with `digits` decimals (no Foundation formatting in the shipped binary).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let n = Int((abs(value) * scale).rounded())
        let whole = n / Int(scale), fraction = String(n % Int(scale))
        return (value < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
