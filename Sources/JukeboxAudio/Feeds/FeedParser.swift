// SPDX-License-Identifier: MIT
import CExpat
import Glibc

/// Reads a podcast feed, RSS 2.0 (with the `itunes:` namespace's duration, season and episode) or
/// Atom (RFC 4287), into a `FeedDocument`. Pure (bytes in, a value out) over libexpat, and bounded
/// whatever the server sends (`FeedLimits`): at most 8 MiB read in one `XML_Parse`, a DOCTYPE that
/// declares any entity stops the parse before the entity is used (no entity expansion, no external
/// file: expat loads none without a handler, and none is set), elements nested deeper than 64 stop
/// it, every text kept is cut and made inert while it is gathered (`FeedText`), at most 5,000
/// episodes kept, and only http(s) enclosures. RSS 1.0 (RDF), Media RSS's `media:content` and
/// `xml:base` are not read.
public enum FeedParser {
    static let atomNamespace = "http://www.w3.org/2005/Atom"
    /// Compared without case: feeds in the wild write `DTDs/Podcast-1.0.dtd` too.
    static let itunesNamespace = "http://www.itunes.com/dtds/podcast-1.0.dtd"

    static let windows1252Names: Set<String> = ["windows-1252", "cp1252", "x-cp1252"]

    /// The Unicode scalar Windows-1252 gives `byte`: Latin-1 but for 0x80–0x9F (€, quotes,
    /// dashes...); its five unassigned bytes become U+FFFD.
    static func windows1252(_ byte: UInt8) -> UInt32 {
        guard (0x80...0x9F).contains(byte) else { return UInt32(byte) }
        let high: [UInt32] = [0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD,
                              0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161,
                              0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178]
        return high[Int(byte - 0x80)]
    }

    /// Reads `bytes`, fetched from `url` (enclosure URLs are resolved against it).
    public static func parse(_ bytes: [UInt8], url: String, limits: FeedLimits = FeedLimits()) -> Result<FeedDocument, FeedFailure> {
        guard bytes.count <= limits.maxBytes else { return .failure(.tooLarge(limit: limits.maxBytes)) }
        // '\n' separates a namespace from the local name (expat's advice: no URI or name holds one).
        guard let parser = XML_ParserCreateNS(nil, 0x0A) else { return .failure(.malformed(line: 0, column: 0, reason: "out of memory")) }
        defer { XML_ParserFree(parser) }
        let reader = FeedReader(parser: parser, base: url, limits: limits)
        let context = Unmanaged.passUnretained(reader).toOpaque()
        XML_SetUserData(parser, context)
        XML_SetElementHandler(parser, { context, name, attributes in
            FeedReader.from(context).start(name, attributes)
        }, { context, name in
            FeedReader.from(context).end(name)
        })
        XML_SetCharacterDataHandler(parser) { context, text, length in
            FeedReader.from(context).characters(text, Int(length))
        }
        // Windows-1252, which old feeds declare, mapped byte for byte (expat knows only UTF-8,
        // UTF-16, ISO-8859-1 and US-ASCII itself); any other unknown encoding stays refused.
        XML_SetUnknownEncodingHandler(parser, { _, name, info in
            guard let name, let info, FeedParser.windows1252Names.contains(String(cString: name).lowercased()) else { return 0 }
            withUnsafeMutableBytes(of: &info.pointee.map) { raw in
                let map = raw.bindMemory(to: Int32.self)
                for byte in 0..<256 { map[byte] = Int32(FeedParser.windows1252(UInt8(byte))) }
            }
            info.pointee.data = nil
            info.pointee.convert = nil
            info.pointee.release = nil
            return 1
        }, nil)
        XML_SetEntityDeclHandler(parser) { context, name, _, _, _, _, _, _, _ in
            FeedReader.from(context).stop(.entityDeclared(name: FeedReader.string(name, maxBytes: 64)))
        }
        let status = withExtendedLifetime(reader) {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { XML_Parse(parser, $0.baseAddress, Int32(buffer.count), 1) }
            }
        }
        if let failure = reader.failure { return .failure(failure) }
        guard status == XML_STATUS_OK else {
            let code = XML_GetErrorCode(parser)
            let reason = XML_ErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
            return .failure(.malformed(line: Int(XML_GetCurrentLineNumber(parser)), column: Int(XML_GetCurrentColumnNumber(parser)),
                                       reason: reason))
        }
        guard let kind = reader.kind else { return .failure(.notAFeed(root: "")) }
        return .success(FeedDocument(kind: kind, title: reader.feedTitle, episodes: reader.episodes, skipped: reader.skipped))
    }
}

/// One parse's state, expat's user data. Only `FeedParser.parse` makes one; it lives for one call.
final class FeedReader {
    /// The fields an item's child elements fill.
    enum Field {
        case title, itunesTitle, id, published, updated, duration, season, episode, feedTitle
    }

    /// An item being read.
    struct Item {
        var title = ""
        var itunesTitle = ""
        var id = ""
        var url: String?
        var mimeType = ""
        var bytes: Int64?
        var published: Int64?
        var updated: Int64?
        var duration: Double?
        var season: Int?
        var number: Int?
    }

    let parser: XML_Parser
    let base: String
    let limits: FeedLimits
    var failure: FeedFailure?
    var kind: FeedDocument.Kind?
    var feedTitle = ""
    var episodes: [FeedEpisode] = []
    var skipped = 0
    var seen: Set<String> = []

    /// How deep the parse is (the root is 1), and the depth of the item being read (0: none).
    var depth = 0
    var itemDepth = 0
    var item = Item()
    /// The field being gathered, the depth its element opened at, whether its markup is to be
    /// dropped (Atom `type="html"`), and its bytes so far (white space collapsed, bounded).
    var field: Field?
    var fieldDepth = 0
    var fieldIsHTML = false
    var text: [UInt8] = []
    var textLimit = 0

    init(parser: XML_Parser, base: String, limits: FeedLimits) {
        self.parser = parser
        self.base = base
        self.limits = limits
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> FeedReader {
        Unmanaged<FeedReader>.fromOpaque(context!).takeUnretainedValue()
    }

    /// Ends the parse with `failure` (expat returns at once, with XML_ERROR_ABORTED).
    func stop(_ failure: FeedFailure) {
        if self.failure == nil { self.failure = failure }
        XML_StopParser(parser, 0)
    }

    /// A C string from expat as inert text of at most `maxBytes` bytes.
    static func string(_ pointer: UnsafePointer<XML_Char>?, maxBytes: Int) -> String {
        guard let pointer else { return "" }
        return FeedText.clean(String(cString: pointer), maxBytes: maxBytes)
    }

    /// An expanded name split at expat's separator: (namespace, local name).
    static func split(_ pointer: UnsafePointer<XML_Char>?) -> (namespace: String, local: String) {
        guard let pointer else { return ("", "") }
        let name = String(cString: pointer)
        guard let cut = name.utf8.lastIndex(of: 0x0A) else { return ("", name) }
        return (String(name[..<cut]), String(name[name.index(after: cut)...]))
    }

    func start(_ rawName: UnsafePointer<XML_Char>?, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>?) {
        guard failure == nil else { return }
        depth += 1
        guard depth <= limits.maxDepth else { return stop(.tooDeep(limit: limits.maxDepth)) }
        let (namespace, name) = Self.split(rawName)
        if depth == 1 {
            if namespace.isEmpty, name == "rss" {
                kind = .rss
            } else if namespace == FeedParser.atomNamespace, name == "feed" {
                kind = .atom
            } else {
                let shown = namespace.isEmpty ? name : name + " in " + namespace
                return stop(.notAFeed(root: FeedText.clean(shown, maxBytes: 100)))
            }
            return
        }
        // Inside a field's element (an Atom xhtml title's <div>): its text is gathered, no more.
        guard field == nil, let kind else { return }
        let isAtom = namespace == FeedParser.atomNamespace
        let isITunes = namespace.lowercased() == FeedParser.itunesNamespace
        let plain = namespace.isEmpty
        if itemDepth == 0 {
            if (kind == .rss && plain && name == "item" && depth == 3) || (kind == .atom && isAtom && name == "entry" && depth == 2) {
                itemDepth = depth
                item = Item()
            } else if ((kind == .rss && plain && depth == 3) || (kind == .atom && isAtom && depth == 2)) && name == "title" {
                begin(.feedTitle, html: isHTML(attributes), limit: limits.maxTitleBytes)
            }
            return
        }
        guard depth == itemDepth + 1 else { return }
        switch (kind, name) {
        case (.rss, "title") where plain, (.atom, "title") where isAtom:
            begin(.title, html: kind == .atom && isHTML(attributes), limit: limits.maxTitleBytes)
        case (.rss, "guid") where plain, (.atom, "id") where isAtom:
            begin(.id, html: false, limit: limits.maxIDBytes)
        case (.rss, "pubDate") where plain, (.atom, "published") where isAtom:
            begin(.published, html: false, limit: 64)
        case (.atom, "updated") where isAtom:
            begin(.updated, html: false, limit: 64)
        case (.rss, "enclosure") where plain:
            enclosure(attributes, urlKey: "url")
        case (.atom, "link") where isAtom:
            if Self.attribute("rel", in: attributes) == "enclosure" { enclosure(attributes, urlKey: "href") }
        case (_, "duration") where isITunes:
            begin(.duration, html: false, limit: 32)
        case (_, "season") where isITunes:
            begin(.season, html: false, limit: 32)
        case (_, "episode") where isITunes:
            begin(.episode, html: false, limit: 32)
        case (_, "title") where isITunes:
            begin(.itunesTitle, html: false, limit: limits.maxTitleBytes)
        default:
            break
        }
    }

    func end(_ rawName: UnsafePointer<XML_Char>?) {
        guard failure == nil else { return }
        defer { depth -= 1 }
        if let field, depth == fieldDepth {
            finish(field)
            self.field = nil
        }
        if itemDepth != 0, depth == itemDepth {
            itemDepth = 0
            keep(item)
        }
    }

    func characters(_ pointer: UnsafePointer<XML_Char>?, _ length: Int) {
        guard failure == nil, field != nil, let pointer, length > 0 else { return }
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            for i in 0..<length {
                guard text.count < textLimit else { return }
                let byte = bytes[i]
                // White space collapsed as it comes, so a megabyte of spaces costs nothing.
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                    if let last = text.last, last != 0x20 { text.append(0x20) }
                } else {
                    text.append(byte)
                }
            }
        }
    }

    /// Starts gathering `field`'s text: a few bytes beyond its bound, so the cut falls on a whole
    /// character (`FeedText.clean` cuts at `limit`, after the last whole one).
    func begin(_ field: Field, html: Bool, limit: Int) {
        self.field = field
        fieldDepth = depth
        fieldIsHTML = html
        text.removeAll(keepingCapacity: true)
        // Markup dropped later takes room now: an html title may gather four times its bound.
        textLimit = (html ? limit * 4 : limit) + 8
    }

    func finish(_ field: Field) {
        var raw = String(decoding: text, as: UTF8.self)
        if fieldIsHTML { raw = FeedText.withoutMarkup(raw) }
        switch field {
        case .feedTitle: feedTitle = FeedText.clean(raw, maxBytes: limits.maxTitleBytes)
        case .title: item.title = FeedText.clean(raw, maxBytes: limits.maxTitleBytes)
        case .itunesTitle: item.itunesTitle = FeedText.clean(raw, maxBytes: limits.maxTitleBytes)
        case .id: item.id = FeedText.clean(raw, maxBytes: limits.maxIDBytes)
        case .published: item.published = FeedDate.parse(raw)
        case .updated: item.updated = FeedDate.parse(raw)
        case .duration: item.duration = Self.duration(raw)
        case .season: item.season = Self.count(raw)
        case .episode: item.number = Self.count(raw)
        }
    }

    /// An enclosure's attributes: an http(s) URL resolved against the feed's, its type and length.
    /// The first playable enclosure of an item wins (a feed may offer a second format).
    func enclosure(_ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>?, urlKey: String) {
        guard item.url == nil, let raw = Self.attribute(urlKey, in: attributes, maxBytes: limits.maxURLBytes * 3) else { return }
        let trimmed = FeedText.collapsed(raw)
        guard !trimmed.isEmpty, trimmed.utf8.count <= limits.maxURLBytes,
              !trimmed.unicodeScalars.contains(where: { $0 == FeedText.replacement || TagText.isControl($0) }) else { return }
        // Spaces inside a URL are written by hand-made feeds; a browser sends them as %20.
        let spaced = trimmed.contains(" ") ? trimmed.split(separator: " ", omittingEmptySubsequences: false).joined(separator: "%20") : trimmed
        let resolved = URIReference.resolve(spaced, against: base)
        let head = resolved.prefix(8).lowercased()
        guard head.hasPrefix("http://") || head.hasPrefix("https://"), resolved.utf8.count <= limits.maxURLBytes else { return }
        item.url = resolved
        item.mimeType = FeedText.clean(Self.attribute("type", in: attributes, maxBytes: 256) ?? "", maxBytes: 100)
        if let length = Self.attribute("length", in: attributes, maxBytes: 64).flatMap({ Int64(FeedText.collapsed($0)) }), length > 0 {
            item.bytes = length
        }
    }

    /// An item read whole: kept as an episode when it has a playable enclosure, a new id and room.
    func keep(_ item: Item) {
        guard let url = item.url else { skipped += 1; return }
        let id = item.id.isEmpty ? FeedText.clean(url, maxBytes: limits.maxIDBytes) : item.id
        guard episodes.count < limits.maxItems, !seen.contains(id) else { skipped += 1; return }
        seen.insert(id)
        let title = item.title.isEmpty ? item.itunesTitle : item.title
        episodes.append(FeedEpisode(id: id, title: title, url: url, mimeType: item.mimeType, bytes: item.bytes,
                                    published: item.published ?? item.updated, duration: item.duration,
                                    season: item.season, number: item.number))
    }

    /// Whether an Atom text construct's `type` is `html` (its markup is then dropped).
    func isHTML(_ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>?) -> Bool {
        Self.attribute("type", in: attributes) == "html"
    }

    /// The value of the unqualified attribute `key`, or nil (longer than `maxBytes`: nil too).
    static func attribute(_ key: String, in attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>?,
                          maxBytes: Int = 64) -> String? {
        guard let attributes else { return nil }
        var i = 0
        while let name = attributes[i] {
            guard let value = attributes[i + 1] else { return nil }
            if strcmp(name, key) == 0 {
                guard strnlen(value, maxBytes + 1) <= maxBytes else { return nil }
                return String(cString: value)
            }
            i += 2
        }
        return nil
    }

    /// `itunes:duration`: `H:MM:SS`, `MM:SS` or seconds (fractions allowed in the last part).
    static func duration(_ text: String) -> Double? {
        let parts = FeedText.collapsed(text).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (i, part) in parts.enumerated() {
            let isLast = i == parts.count - 1
            guard !part.isEmpty, part.count <= 12, part.allSatisfy({ ("0"..."9").contains($0) || (isLast && $0 == ".") }),
                  let value = Double(part), value.isFinite else { return nil }
            seconds = seconds * 60 + value
        }
        // Longer than a year is a mistake, not an episode.
        return seconds > 0 && seconds < 366 * 86_400 ? seconds : nil
    }

    /// A positive whole number of at most six digits (a season, an episode's number).
    static func count(_ text: String) -> Int? {
        let trimmed = FeedText.collapsed(text)
        guard trimmed.count <= 6, let value = Int(trimmed), value >= 0 else { return nil }
        return value
    }
}
