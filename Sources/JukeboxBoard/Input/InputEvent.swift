// SPDX-License-Identifier: MIT
import CInput

/// One key event from an evdev device. The raw code is kept: which code means what is the core's
/// business (`MediaKey`, in JukeboxCore, names the media keys).
public struct InputKeyEvent: Sendable, Equatable, CustomStringConvertible {
    /// The key code (`KEY_*` in linux/input-event-codes.h).
    public var code: Int
    /// 1 down, 0 up, 2 autorepeat.
    public var value: Int
    /// The event's time in seconds: CLOCK_MONOTONIC for devices `InputDevices` opened (it sets the
    /// device's clock), whatever the record says otherwise.
    public var time: Double

    public init(code: Int, value: Int, time: Double) {
        self.code = code
        self.value = value
        self.time = time
    }

    public var description: String { "key \(code) \(["up", "down", "repeat"][min(max(value, 0), 2)]) at \(time)" }
}

/// Turns the bytes of an evdev fd into key events: whole `struct input_event` records (a partial
/// record waits for the rest), EV_KEY only, and after SYN_DROPPED (the kernel's buffer overflowed)
/// nothing until the next SYN_REPORT, as the evdev documentation asks.
struct InputEventParser {
    static let recordSize = jb_input_event_size()
    static let evSyn: UInt16 = 0, evKey: UInt16 = 1
    static let synReport: UInt16 = 0, synDropped: UInt16 = 3

    private var pending: [UInt8] = []
    private var dropping = false

    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [InputKeyEvent] {
        pending += bytes
        let size = Self.recordSize
        let whole = pending.count / size * size
        var keys: [InputKeyEvent] = []
        var record = jb_input_record()
        pending.withUnsafeBytes { raw in
            for start in stride(from: 0, to: whole, by: size) {
                jb_input_decode(raw.baseAddress! + start, &record)
                if record.type == Self.evSyn {
                    if record.code == Self.synDropped { dropping = true }
                    else if record.code == Self.synReport { dropping = false }
                    continue
                }
                guard record.type == Self.evKey, !dropping else { continue }
                keys.append(InputKeyEvent(code: Int(record.code), value: Int(record.value),
                                          time: Double(record.sec) + Double(record.usec) / 1e6))
            }
        }
        pending.removeFirst(whole)
        return keys
    }

    /// The bytes of one record (tests).
    static func encode(type: UInt16, code: UInt16, value: Int32, time: Double) -> [UInt8] {
        let sec = time.rounded(.down)
        var record = jb_input_record(sec: Int64(sec), usec: Int64(((time - sec) * 1e6).rounded()), type: type, code: code, value: value)
        var bytes = [UInt8](repeating: 0, count: recordSize)
        jb_input_encode(&record, &bytes)
        return bytes
    }
}
