// SPDX-License-Identifier: MIT
// The pages of the long lists. /api/queue and /api/library answer as many entries as fit one reply
// of the player, from `from` (1-based), and `next` while more follow; the page asks for the next
// one when "More" is pressed (and loads again what was shown when the list changes).

/** The URL of the page starting at `from` (1: the first page, no argument). */
export function pageURL(path, from) {
  return from > 1 ? `${path}${path.includes('?') ? '&' : '?'}from=${from}` : path;
}

/**
 * Appends to `list` (an answer) the next pages until it holds `upTo` entries of `keys` (or one page
 * when `upTo` is null), as long as `stale()` is false; returns false when a request failed or the
 * list went stale (then nothing is appended).
 */
export async function appendPages(api, path, list, keys, upTo, stale) {
  do {
    if (!list.next) return true;
    const r = await api('GET', pageURL(path, list.next));
    if (stale() || !r.ok) return false;
    for (const k of keys) list[k] = (list[k] || []).concat(r.data[k] || []);
    for (const [k, v] of Object.entries(r.data)) if (!keys.includes(k)) list[k] = v;
    if (r.data.next == null) delete list.next;
  } while (upTo != null && keys.reduce((n, k) => n + list[k].length, 0) < upTo);
  return true;
}
