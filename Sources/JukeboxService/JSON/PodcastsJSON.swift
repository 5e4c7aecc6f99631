// SPDX-License-Identifier: MIT
import JukeboxCore

/// `podcasts --json`: `{"podcasts":[{"name":…,"title":…,"episodes":N,"unplayed":N,"downloaded":N,
/// "next":…,"downloading":{"episode":…,"bytes":N,"total":N,"percent":N},"lastError":…}]}`, each
/// configured podcast in the config's order (at most 100, so the reply stays small); `next` is the
/// episode `podcast NAME` would start with, absent when none; `downloading` the episode being
/// downloaded once the downloader said how far it is (`total` and `percent` null without a length).
public enum PodcastsJSON {
    public static func text(_ state: State) -> String {
        let q = JSONText.quoted
        let entries = state.podcasts.map { feed -> String in
            let unplayed = feed.episodes.filter { feed.places[$0.id]?.played != true }.count
            var fields: [String] = ["\"name\":" + q(DisplayText.inert(feed.name)), "\"title\":" + q(DisplayText.inert(feed.title)),
                                    "\"episodes\":\(feed.episodes.count)", "\"unplayed\":\(unplayed)", "\"downloaded\":\(feed.downloads.count)"]
            if let next = feed.nextUp().episodes.first { fields.append("\"next\":" + q(DisplayText.inert(next.title))) }
            if let key = state.podcastDownloading, key.name == feed.name, let progress = state.podcastDownloadProgress {
                let title = feed.episode(id: key.id)?.title ?? key.id
                let total: String = progress.total.map { String($0) } ?? "null"
                let percent: String = progress.percent.map { String($0) } ?? "null"
                fields.append("\"downloading\":{\"episode\":" + q(DisplayText.inert(title)) + ",\"bytes\":\(progress.bytes),\"total\":"
                              + total + ",\"percent\":" + percent + "}")
            }
            if let error = feed.lastError { fields.append("\"lastError\":" + q(DisplayText.inert(error, maxBytes: 200))) }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "{\"podcasts\":[" + entries.joined(separator: ",") + "]}"
    }
}
