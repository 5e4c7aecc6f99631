// SPDX-License-Identifier: MIT
// Covers (now playing, a library folder) and the library's search. Imported by app.js, which
// hands over its helpers. Everything from outside is DOM text; a cover is an <img> whose bytes
// the server sniffed (JPEG or PNG), with the placeholder note shown until it loads or when none.

import { toolButton } from './dom.js';

let app = null;   // { api, control, text, clock, $ } from app.js

/** Shows the cover of `path` (a track or a folder; nothing: the placeholder) in the `.cover` box. */
export function showCover(box, path) {
  if (!box) return;
  const want = path || '';
  if (box.dataset.path === want) return;
  box.dataset.path = want;
  let img = box.querySelector('img');
  box.classList.remove('has-image');
  if (!want) { if (img) img.remove(); return; }
  if (!img) {
    img = document.createElement('img');
    img.alt = '';
    img.className = 'cover-image';
    img.decoding = 'async';
    img.addEventListener('load', () => box.classList.add('has-image'));
    img.addEventListener('error', () => box.classList.remove('has-image'));
    box.append(img);
  }
  img.src = `/api/cover?path=${encodeURIComponent(want)}`;
}

function row(label, sub, actions, href) {
  const li = document.createElement('li');
  const main = document.createElement(href ? 'a' : 'span');
  main.className = href ? 'entry folder' : 'entry';
  if (href) main.href = href;
  const t = document.createElement('span');
  app.text(t, label);
  main.append(t);
  if (sub) {
    const s = document.createElement('span');
    s.className = 'sub';
    app.text(s, sub);
    main.append(s);
  }
  li.append(main, ...actions);
  return li;
}

function tool(label, name, glyph, line) { return toolButton(label, name, glyph, () => app.control(line)); }

function renderResults(r) {
  const { text, $ } = app;
  const items = (r.folders || []).map((f) => row(`${f.name}/`, null, [
    tool('Play', f.name, '▶', `load ${f.path}`), tool('Add to queue', f.name, '+', `add ${f.path}`),
  ], `#/library/${encodeURIComponent(f.path)}`)).concat((r.files || []).map((f) => {
    const name = f.title || f.name;
    const sub = [f.artist, f.album].filter(Boolean).join(' · ') + (f.seconds != null ? ` ${app.clock(f.seconds)}` : '');
    return row(name, sub, [tool('Play', name, '▶', `load ${f.path}`), tool('Add to queue', name, '+', `add ${f.path}`)]);
  }));
  $('search-results').replaceChildren(...items);
  const n = items.length;
  let message = n === 0 ? 'Nothing found.' : `${n} found`;
  if (r.truncated) message += ' (the first ones: say more to find fewer)';
  if (r.incomplete) message += `; the search stopped after ${r.scanned} files (a large library): say more`;
  text($('search-message'), message);
  $('library-browse').hidden = true;
}

async function search(q) {
  const { api, text, $ } = app;
  if (!q.trim()) { clearSearch(); return; }
  text($('search-message'), 'Searching…');
  try {
    const r = await api('GET', `/api/search?q=${encodeURIComponent(q)}`);
    if (!r.ok) { text($('search-message'), r.data.error || `The server answered ${r.code}`); return; }
    renderResults(r.data);
  } catch { text($('search-message'), 'The box did not answer'); }
}

function clearSearch() {
  const { text, $ } = app;
  $('search-results').replaceChildren();
  text($('search-message'), '');
  $('library-browse').hidden = false;
}

export function setupLibraryExtras(helpers) {
  app = helpers;
  const { $ } = app;
  $('search-form').addEventListener('submit', (ev) => { ev.preventDefault(); search($('search').value); });
  $('search').addEventListener('input', () => { if (!$('search').value) clearSearch(); });
  window.addEventListener('hashchange', () => { if ($('search').value) { $('search').value = ''; clearSearch(); } });
}
