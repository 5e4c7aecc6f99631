// SPDX-License-Identifier: MIT
import JukeboxCore

/// What the serial console reports to the loop.
public enum ConsoleInput: Equatable, Sendable {
    /// Enter on a line that is not blank: at most `ControlCommand.maxLineLength` bytes of valid
    /// UTF-8 without control characters, newline not included.
    case line(String)
    /// Ctrl-C: the line being typed was abandoned (the console already printed `^C` and a prompt).
    case interrupt
    /// A key pressed in streaming mode; streaming has ended (`streaming` is false again).
    case anyKey
}

/// The line editor behind the serial console: bytes as a terminal sends them in, echo and
/// finished lines out. Pure (no I/O), bounded whatever arrives: the line never exceeds
/// `ControlCommand.maxLineLength` bytes and always holds valid UTF-8.
struct LineEditor {
    /// What one byte did.
    enum Effect: Equatable {
        /// Bytes to show on the terminal.
        case echo([UInt8])
        /// Enter on this line (the `\r\n` echo came first).
        case submit(String)
        /// Ctrl-C (the `^C\r\n` echo came first); a prompt is due.
        case interrupt
        /// Enter on a line that grew past the limit; an error and a prompt are due.
        case refuse
        /// Enter on an empty or blank line; a prompt is due.
        case blank
    }

    /// The line so far (valid UTF-8).
    private(set) var line: [UInt8] = []
    /// Whether input past the limit was dropped; Enter then refuses the line, Ctrl-U or Ctrl-C
    /// start over.
    private(set) var overflowed = false
    /// Where an ANSI escape sequence (arrow keys, function keys, Alt+key) stands; its bytes are
    /// swallowed, and a control byte inside one is itself (`EscapeRecognizer`).
    private var escape = EscapeRecognizer()
    /// An incomplete UTF-8 sequence and how many continuation bytes it still needs.
    private var pending: [UInt8] = []
    private var needed = 0
    /// The previous byte was CR, so an LF right after it is the same Enter.
    var afterCR = false
    let limit: Int

    init(limit: Int = ControlCommand.maxLineLength) {
        self.limit = limit
    }

    /// Feeds one byte, appending what it did to `effects` (echo bytes coalesced).
    mutating func feed(_ input: UInt8, into effects: inout [Effect]) {
        let wasCR = afterCR
        afterCR = false
        guard case .byte(let byte) = escape.feed(input) else {
            dropPending()  // an escape sequence (or its ESC) ends a half-typed UTF-8 character
            return
        }
        switch byte {
        case 0x0D:
            submit(into: &effects)
            afterCR = true
        case 0x0A:
            if !wasCR { submit(into: &effects) }
        case 0x03:
            echo(Array("^C\r\n".utf8), into: &effects)
            reset()
            effects.append(.interrupt)
        case 0x15:
            echo(erase(count: characterCount), into: &effects)
            reset()
        case 0x7F, 0x08:
            dropPending()
            guard !line.isEmpty else { return }
            // One character: its continuation bytes and its lead byte.
            while let last = line.popLast(), last & 0xC0 == 0x80 {}
            echo(erase(count: 1), into: &effects)
        case 0x00..<0x20:
            dropPending()  // other control keys (Tab, Ctrl-D, Ctrl-S …) do nothing
        default:
            decode(byte, into: &effects)
        }
    }

    /// Adds a byte of UTF-8 text; invalid sequences and C1 control characters are dropped.
    private mutating func decode(_ byte: UInt8, into effects: inout [Effect]) {
        if byte < 0x80 {
            dropPending()
            insert([byte], into: &effects)
        } else if byte & 0xC0 == 0x80 {
            guard needed > 0 else { return }  // a stray continuation byte
            if pending.count == 1 {
                // The second byte's narrower ranges rule out overlong forms and surrogates.
                let valid: Bool
                switch pending[0] {
                case 0xE0: valid = byte >= 0xA0
                case 0xED: valid = byte <= 0x9F
                case 0xF0: valid = byte >= 0x90
                case 0xF4: valid = byte <= 0x8F
                default: valid = true
                }
                guard valid else { dropPending(); return }
            }
            pending.append(byte)
            needed -= 1
            if needed == 0 {
                let sequence = pending
                pending = []
                if sequence[0] == 0xC2 && sequence[1] < 0xA0 { return }  // C1 controls (U+0080...U+009F)
                insert(sequence, into: &effects)
            }
        } else {
            switch byte {
            case 0xC2...0xDF: pending = [byte]; needed = 1
            case 0xE0...0xEF: pending = [byte]; needed = 2
            case 0xF0...0xF4: pending = [byte]; needed = 3
            default: dropPending()  // 0xC0, 0xC1, 0xF5...0xFF never start valid UTF-8
            }
        }
    }

    private mutating func insert(_ bytes: [UInt8], into effects: inout [Effect]) {
        guard !overflowed else { return }
        guard line.count + bytes.count <= limit else {
            overflowed = true
            echo([0x07], into: &effects)  // a bell, once, says "no more"
            return
        }
        line += bytes
        echo(bytes, into: &effects)
    }

    private mutating func submit(into effects: inout [Effect]) {
        echo(Array("\r\n".utf8), into: &effects)
        if overflowed {
            effects.append(.refuse)
        } else if line.allSatisfy({ $0 == UInt8(ascii: " ") }) {
            effects.append(.blank)
        } else {
            effects.append(.submit(String(decoding: line, as: UTF8.self)))
        }
        reset()
    }

    private mutating func reset() {
        line.removeAll(keepingCapacity: true)
        overflowed = false
        dropPending()
        escape.reset()
    }

    private mutating func dropPending() {
        pending.removeAll(keepingCapacity: true)
        needed = 0
    }

    /// Characters on the line (one column each, as far as the editor knows).
    var characterCount: Int { line.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    /// What a tty driver echoes to erase characters: back, blank, back.
    private func erase(count: Int) -> [UInt8] {
        Array(repeating: [0x08, 0x20, 0x08] as [UInt8], count: count).flatMap { $0 }
    }

    private func echo(_ bytes: [UInt8], into effects: inout [Effect]) {
        guard !bytes.isEmpty else { return }
        if case .echo(let before)? = effects.last {
            effects[effects.count - 1] = .echo(before + bytes)
        } else {
            effects.append(.echo(bytes))
        }
    }
}
