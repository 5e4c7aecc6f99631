// SPDX-License-Identifier: MIT

/// The appliance image's boot-time problems (`jukebox-setup` checks the boot partition's
/// settings and writes one line per setting it did not apply to `/run/jukebox-setup/problems`):
/// the lines as the player keeps them. The file is text from anywhere (a builder's PC wrote
/// what it quotes), so every line is made inert and bounded here, where it enters the core.
public enum SetupProblems {
    /// Lines kept at most; a longer file's rest is said by one more line (`moreText`).
    public static let maxLines = 20
    /// Bytes of UTF-8 a line keeps at most (jukebox-setup writes at most 400 characters).
    public static let maxLineBytes = 400
    /// Bytes of the file read at most (a tmpfs file of a few lines; the rest is not read).
    public static let maxFileBytes = 16 << 10
    /// Seconds the display's notice shows after the splash.
    public static let noticeSeconds = 12.0
    /// The line that says the file held more than was kept.
    public static let moreText = "… more problems in the file than are shown"

    /// The lines of a problems file's first bytes: split at line ends (a CR before one is part
    /// of it), blank lines left out, bytes that are not UTF-8 and control characters shown as
    /// U+FFFD, each cut at `maxLineBytes`, at most `maxLines` (then `moreText`). `cut`: the file
    /// went on past the bytes given.
    public static func lines(_ bytes: [UInt8], cut: Bool) -> [String] {
        // Split as bytes: a String splits "\r\n" as one character, not at "\n".
        let raw = bytes.prefix(maxFileBytes).split(separator: 0x0A, omittingEmptySubsequences: true)
        var kept: [String] = []
        var more = cut || bytes.count > maxFileBytes
        for line in raw {
            let body = line.last == 0x0D ? line.dropLast() : line
            if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            if kept.count == maxLines { more = true; break }
            kept.append(DisplayText.inert(String(decoding: body, as: UTF8.self), maxBytes: maxLineBytes))
        }
        if more { kept.append(moreText) }
        return kept
    }

    /// The line said when the file is there but cannot be read: itself a problem to show.
    public static func unreadable(_ reason: String) -> String {
        "the setup problems file cannot be read: " + DisplayText.inert(reason, maxBytes: maxLineBytes)
    }

    /// The display's first row of the notice: "1 setup problem", "3 setup problems", "20+ setup
    /// problems" (`lines` ends with `moreText`); 16 characters for up to 9, a 16x2's row.
    static func heading(_ lines: [String]) -> String {
        let more = lines.last == moreText
        let count = lines.count - (more ? 1 : 0)
        // In typed parts: Swift 6.0's type checker gives up on long sums of ternaries.
        let number: String = more ? "\(count)+" : "\(count)"
        let noun: String = count == 1 && !more ? " setup problem" : " setup problems"
        return number + noun
    }
}

extension State {
    /// `Event.setupProblems`: the lines kept (bounded again: the core trusts no event's size),
    /// and the notice shown for `SetupProblems.noticeSeconds` after the splash when they
    /// changed and are not none. Nothing else changes.
    mutating func setupProblemsRead(_ lines: [String]) {
        let capped = lines.prefix(SetupProblems.maxLines + 1).map { DisplayText.inert($0, maxBytes: SetupProblems.maxLineBytes) }
        guard capped != setupProblems else { return }
        setupProblems = capped
        if capped.isEmpty {
            setupNoticeUntil = 0
        } else {
            setupNoticeSince = max(now, splashUntil)
            setupNoticeUntil = setupNoticeSince + SetupProblems.noticeSeconds
        }
    }
}
