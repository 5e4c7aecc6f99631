// SPDX-License-Identifier: MIT

/// RFC 3986 reference resolution (section 5.2), for the URIs in HLS playlists, which are relative
/// to the playlist's own URL ("seg1.ts", "../audio/index.m3u8", "/live/a.aac?token=1").
/// Pure; written here because FoundationEssentials has no URL resolution and the strings come from
/// the network: nothing is decoded or normalised besides the dot segments the RFC removes.
public enum URIReference {
    /// The parts of a URI reference (section 3), each nil when absent (an empty part is "").
    struct Parts: Equatable {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?
    }

    /// `reference` resolved against the absolute `base` (section 5.2.2, strict). The fragment is
    /// dropped: it is never sent to a server.
    public static func resolve(_ reference: String, against base: String) -> String {
        resolve(reference, against: split(base))
    }

    /// `reference` resolved against a base already split (a playlist's thousands of segments).
    static func resolve(_ reference: String, against b: Parts) -> String {
        let r = split(reference)
        var t = Parts(scheme: nil, authority: nil, path: "", query: nil, fragment: nil)
        if let scheme = r.scheme {
            t = Parts(scheme: scheme, authority: r.authority, path: removeDotSegments(r.path), query: r.query)
        } else if r.authority != nil {
            t = Parts(scheme: b.scheme, authority: r.authority, path: removeDotSegments(r.path), query: r.query)
        } else if r.path.isEmpty {
            t = Parts(scheme: b.scheme, authority: b.authority, path: b.path, query: r.query ?? b.query)
        } else if r.path.hasPrefix("/") {
            t = Parts(scheme: b.scheme, authority: b.authority, path: removeDotSegments(r.path), query: r.query)
        } else {
            t = Parts(scheme: b.scheme, authority: b.authority, path: removeDotSegments(merge(b, r.path)), query: r.query)
        }
        return compose(t)
    }

    /// Section 3's regular expression `^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`.
    static func split(_ text: String) -> Parts {
        var rest = Substring(text)
        var parts = Parts(scheme: nil, authority: nil, path: "", query: nil, fragment: nil)
        if let hash = rest.firstIndex(of: "#") {
            parts.fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            parts.query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), colon != rest.startIndex,
           !rest[..<colon].contains(where: { $0 == "/" }) {
            parts.scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            parts.authority = String(rest[..<end])
            rest = rest[end...]
        }
        parts.path = String(rest)
        return parts
    }

    /// Section 5.2.3.
    private static func merge(_ base: Parts, _ path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    /// Section 5.2.4, on whole segments.
    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let absolute = path.hasPrefix("/")
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(absolute ? 1 : 0)
        var trailingSlash = false
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            trailingSlash = false
            switch segment {
            case ".":
                trailingSlash = last
            case "..":
                if !output.isEmpty { output.removeLast() }
                trailingSlash = last
            default:
                output.append(segment)
            }
        }
        var result = (absolute ? "/" : "") + output.joined(separator: "/")
        if trailingSlash && !result.hasSuffix("/") { result += "/" }
        return result
    }

    private static func compose(_ t: Parts) -> String {
        var result = ""
        if let scheme = t.scheme { result += scheme + ":" }
        if let authority = t.authority { result += "//" + authority }
        result += t.path
        if let query = t.query { result += "?" + query }
        return result
    }
}
