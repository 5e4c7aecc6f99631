// SPDX-License-Identifier: MIT
// The Podcasts page (#/podcasts): each configured feed from `podcasts --json` (its name, the
// feed's own title, its counts, the episode that plays next, the last fetch's error) with a Play
// button that sends `podcast NAME` (a session command: without one the page says to sign in, and
// the server's 401 leads there). Everything in the list comes from feeds on the internet: set as
// DOM text only, never as markup.

let app = null;        // { $, text, control, session } from app.js
let shown = false;     // the page is the one showing
let loadedAt = 0;      // performance.now() of the last ask

function el(tag, cls, content) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (content != null) app.text(e, content);
  return e;
}

function say(message) { app.text(app.$('podcasts-message'), message); }

/** Asks `podcasts --json` and shows the feeds (an error is said on the page). */
export async function loadPodcasts() {
  const { $ } = app;
  loadedAt = performance.now();
  $('podcasts-signin').hidden = app.session().signedIn;
  const r = await app.control('podcasts --json');
  if (!r.ok || !r.data || typeof r.data.reply !== 'string' || !r.data.reply.startsWith('ok ')) return;
  let data = null;
  try { data = JSON.parse(r.data.reply.slice(3)); } catch { data = null; }
  if (!data || !Array.isArray(data.podcasts)) { say('The player sent no list of podcasts.'); return; }
  render(data.podcasts);
}

function counts(p) {
  const parts = [`${p.episodes} episode${p.episodes === 1 ? '' : 's'}`, `${p.unplayed} not played`];
  if (p.downloaded) parts.push(`${p.downloaded} downloaded`);
  return parts.join(' · ');
}

function render(list) {
  const { $ } = app;
  $('podcasts-empty').hidden = list.length > 0;
  $('podcasts').replaceChildren(...list.map((p) => {
    const li = document.createElement('li');
    const body = el('div', 'entry');
    body.append(el('span', 'podcast-name', p.name));
    if (p.title && p.title !== p.name) body.append(el('span', 'sub podcast-title', p.title));
    body.append(el('span', 'sub podcast-counts', counts(p)));
    if (p.next) body.append(el('span', 'sub podcast-next', `Next: ${p.next}`));
    if (p.lastError) body.append(el('span', 'sub podcast-error', `Last fetch: ${p.lastError}`));
    const play = el('button', 'tool podcast-play', 'Play');
    play.type = 'button';
    play.setAttribute('aria-label', `Play ${p.name}`);
    play.addEventListener('click', async () => {
      const r = await app.control(`podcast ${p.name}`);
      if (r.ok) say(`Playing ${p.name}.`);
    });
    li.append(body, play);
    return li;
  }));
}

export function setupPodcasts(helpers) {
  app = helpers;
  return {
    /** The route shows `name` (any page). */
    show(name) {
      shown = name === 'podcasts';
      if (shown) { say(''); loadPodcasts(); }
    },
    /** A status from the event stream: what plays next may have changed. */
    status() {
      if (shown && performance.now() - loadedAt > 2000) loadPodcasts();
    },
    /** The session changed (signed in or out). */
    session() {
      if (shown) app.$('podcasts-signin').hidden = app.session().signedIn;
    },
  };
}
