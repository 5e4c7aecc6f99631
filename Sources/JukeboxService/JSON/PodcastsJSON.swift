// SPDX-License-Identifier: MIT
import JukeboxCore

/// `podcasts --json`: `{"podcasts":[{"name":…,"title":…,"episodes":N,"unplayed":N,"downloaded":N,
/// "next":…,"lastError":…}]}`, each configured podcast in the config's order (at most 100, so the
/// reply stays small); `next` is the episode `podcast NAME` would start with, absent when none.
public enum PodcastsJSON {
    public static func text(_ state: State) -> String {
        let q = JSONText.quoted
        let entries = state.podcasts.map { feed -> String in
            let unplayed = feed.episodes.filter { feed.places[$0.id]?.played != true }.count
            var fields: [String] = ["\"name\":" + q(DisplayText.inert(feed.name)), "\"title\":" + q(DisplayText.inert(feed.title)),
                                    "\"episodes\":\(feed.episodes.count)", "\"unplayed\":\(unplayed)", "\"downloaded\":\(feed.downloads.count)"]
            if let next = feed.nextUp().episodes.first { fields.append("\"next\":" + q(DisplayText.inert(next.title))) }
            if let error = feed.lastError { fields.append("\"lastError\":" + q(DisplayText.inert(error, maxBytes: 200))) }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "{\"podcasts\":[" + entries.joined(separator: ",") + "]}"
    }
}
