// SPDX-License-Identifier: MIT

/// What a request asks for, from its method and path (pure: a table of tests pins it).
public enum WebRoute: Equatable, Sendable {
    /// A file of the assets folder, by its name (`/` is `index.html`).
    case asset(String)
    case status, queue, library, events, session
    case pin, login, logout, control, upload
    case settings, changeSettings, system
    case cover, search, stations, saveStations
    /// Known path, other method.
    case methodNotAllowed
    case notFound

    /// The route of `method` and `path` (percent-decoded, without the query).
    public static func route(method: String, path: String) -> WebRoute {
        let api: [String: (method: String, route: WebRoute)] = [
            "/api/status": ("GET", .status), "/api/queue": ("GET", .queue), "/api/library": ("GET", .library), "/api/events": ("GET", .events),
            "/api/session": ("GET", .session), "/api/pin": ("POST", .pin), "/api/login": ("POST", .login),
            "/api/logout": ("POST", .logout), "/api/control": ("POST", .control), "/api/upload": ("POST", .upload),
            "/api/settings": ("GET", .settings), "/api/settings/change": ("POST", .changeSettings),
            "/api/system": ("GET", .system),
            "/api/cover": ("GET", .cover), "/api/search": ("GET", .search), "/api/stations": ("GET", .stations),
            "/api/stations/save": ("POST", .saveStations),
        ]
        if let known = api[path] {
            return method == known.method || (method == "HEAD" && known.method == "GET" && known.route != .events)
                ? known.route : .methodNotAllowed
        }
        guard let name = assetName(path) else { return .notFound }
        return method == "GET" || method == "HEAD" ? .asset(name) : .methodNotAllowed
    }

    /// The file name a path names in the assets folder: one plain name (letters, digits, `-`,
    /// `_`, `.`), not starting with a dot, no slash; nil for anything else (`/../etc/passwd`,
    /// `/sub/x.js`, `/.hidden`, `/api/...` not listed).
    public static func assetName(_ path: String) -> String? {
        if path == "/" { return "index.html" }
        guard path.hasPrefix("/") else { return nil }
        let name = path.dropFirst()
        guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix("."),
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                  || $0 == "-" || $0 == "_" || $0 == "." }) else { return nil }
        return String(name)
    }

    /// The Content-Type of an asset by its extension.
    public static func contentType(of name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "html": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json": return "application/json; charset=utf-8"
        case "webmanifest": return "application/manifest+json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }
}
