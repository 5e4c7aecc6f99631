// SPDX-License-Identifier: MIT
// The jukebox page: a view of the player's status and queue (from /api/events), and buttons that
// send control lines (/api/control). No policy here: what is allowed, the limits and what happens
// are the player's and the server's. Everything from outside is set as DOM text, never as markup.

import { text, toolButton } from './dom.js';
import { setupLibraryExtras, showCover } from './library-extras.js';
import { setupRadio, loadRadio } from './radio.js';
import { setupPodcasts } from './podcasts.js';
import { setupUpload, uploadView } from './upload.js';
import { setupCards } from './cards.js';
import { setupSleep } from './sleep.js';
import { setupSpeed } from './speed.js';
import { renderBattery } from './battery.js';
import { setupSettings, loadSettings } from './settings.js';
import { renderParental } from './parental.js';
import { setupBluetooth, renderBluetooth } from './bluetooth.js';
import { setupSystem, loadSystem } from './system.js';
import { appendPages } from './paging.js';

const $ = (id) => document.getElementById(id);
const pages = ['now', 'queue', 'library', 'radio', 'cards', 'bookmarks', 'podcasts', 'settings', 'system', 'signin'];
let status = null;          // the player's status --json object
let statusAt = 0;           // performance.now() when it came
let queue = { entries: [], current: null };
let queueDirty = true;      // the queue changed since its page was last built
let queueGen = 0;           // counts the queue's answers: a page asked for an older one is dropped
let session = { pinSet: false, signedIn: false, csrf: null };
let dragging = { position: false, volume: false };

// ---- helpers


function clock(seconds) {
  if (seconds == null || !isFinite(seconds)) return '–:––';
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
}

function showError(message) {
  const el = $('error');
  text(el, message);
  el.hidden = !message;
  clearTimeout(showError.timer);
  if (message) showError.timer = setTimeout(() => { el.hidden = true; }, 6000);
}

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && session.csrf) headers['X-CSRF-Token'] = session.csrf;
  const response = await fetch(path, {
    method, headers, credentials: 'same-origin', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch { data = {}; }
  return { ok: response.ok, code: response.status, data };
}

/** Sends one control line; the player's reply or error is what the page shows. */
async function control(line) {
  try {
    const r = await api('POST', '/api/control', { line });
    if (r.code === 401) {
      showError(r.data.error || 'Sign in first');
      location.hash = '#/signin';
    } else if (!r.ok) {
      showError(r.data.error || `The server answered ${r.code}`);
    } else {
      showError('');
    }
    return r;
  } catch (e) {
    showError('The box did not answer');
    return { ok: false };
  }
}

// ---- now playing

function shownPosition() {
  if (!status || status.position == null) return null;
  let p = status.position;
  // Positions are in the file's time: at 1.25× it moves 1.25 s a second.
  if (status.phase === 'playing') p += (performance.now() - statusAt) / 1000 * (status.speed ?? 1);
  if (status.duration != null) p = Math.min(p, status.duration);
  return p;
}

function renderPosition() {
  const p = shownPosition();
  text($('elapsed'), p == null ? '0:00' : clock(p));
  const pos = $('position');
  if (!dragging.position) pos.value = p == null ? 0 : Math.floor(p);
  pos.setAttribute('aria-valuetext', `${clock(Number(pos.value))} of ${clock(status && status.duration)}`);
}

function renderStatus() {
  const s = status;
  if (!s) return;
  const idle = !s.path && !s.title;
  text($('title'), s.title || (s.path ? s.path.split('/').pop() : 'Nothing playing'));
  text($('artist'), s.artist);
  text($('album'), s.album);
  text($('message'), s.message);
  showCover($('now-cover'), s.stream ? null : s.path);
  const buffering = s.stream && s.message ? /buffering\D*(\d+)/i.exec(s.message) : null;
  $('buffering').hidden = !buffering;
  if (buffering) $('buffering').value = Number(buffering[1]);
  const seekable = s.duration != null && !s.stream && !idle;
  const pos = $('position');
  pos.disabled = !seekable;
  pos.max = seekable ? Math.floor(s.duration) : 0;
  text($('duration'), s.duration == null ? (s.stream ? 'live' : '–:––') : clock(s.duration));
  renderPosition();
  const playing = s.phase === 'playing';
  $('toggle').setAttribute('aria-label', playing ? 'Pause' : 'Play');
  const vol = $('volume');
  vol.min = s.volumeMin ?? 0;
  vol.max = s.volumeMax ?? 100;
  if (!dragging.volume) { vol.value = s.volume; text($('volume-value'), s.volume); }
  $('shuffle').setAttribute('aria-pressed', String(!!s.shuffle));
  if (document.activeElement !== $('repeat')) $('repeat').value = s.repeat;
  document.title = s.title ? `${s.title} · Jukebox` : 'Jukebox';
  document.body.dataset.phase = s.phase;
  renderSleep(s);
  renderSpeed(s);
  renderBattery($('battery'), text, s);
  renderParental(s);
  renderBluetooth(s);
  renderQueueCurrent();
}

// ---- queue

function renderQueue() {
  const list = $('queue');
  const entries = queue.entries || [];
  $('queue-empty').hidden = entries.length > 0;
  $('queue-more').hidden = !queue.next;
  const focused = document.activeElement && list.contains(document.activeElement)
    ? [document.activeElement.closest('li')?.dataset.position, document.activeElement.dataset.role] : null;
  const items = entries.map((e, i) => {
    const li = document.createElement('li');
    li.dataset.position = e.position;
    const name = e.title || (e.path || '').split('/').pop() || `Track ${e.position}`;
    const jump = document.createElement('button');
    jump.type = 'button';
    jump.className = 'entry';
    jump.dataset.role = 'play';
    const t = document.createElement('span');
    text(t, `${e.position}. ${name}`);
    const sub = document.createElement('span');
    sub.className = 'sub';
    text(sub, [e.artist, e.album].filter(Boolean).join(' · ') + (e.seconds != null ? ` ${clock(e.seconds)}` : ''));
    jump.append(t, sub);
    jump.setAttribute('aria-label', `Play ${name}`);
    jump.addEventListener('click', () => control(`play ${e.position}`));
    const up = toolButton('Move up', name, '↑', () => control(`move ${e.position} ${e.position - 1}`));
    up.dataset.role = 'up';
    up.disabled = i === 0;
    const down = toolButton('Move down', name, '↓', () => control(`move ${e.position} ${e.position + 1}`));
    down.dataset.role = 'down';
    down.disabled = e.position === (queue.total ?? entries.length);
    const remove = toolButton('Remove', name, '✕', () => control(`delete ${e.position}`));
    remove.dataset.role = 'remove';
    li.append(jump, up, down, remove);
    return li;
  });
  list.replaceChildren(...items);
  renderQueueCurrent();
  if (focused) {
    const again = list.querySelector(`li[data-position="${CSS.escape(focused[0] || '')}"] [data-role="${CSS.escape(focused[1] || '')}"]`);
    if (again && !again.disabled) again.focus();
  }
}

function renderQueueCurrent() {
  const current = status ? status.index : queue.current;
  for (const li of $('queue').children) {
    if (Number(li.dataset.position) === current) li.setAttribute('aria-current', 'true');
    else li.removeAttribute('aria-current');
  }
}

// ---- session

function renderSession() {
  $('setpin-form').hidden = session.pinSet;
  $('login-form').hidden = !session.pinSet || session.signedIn;
  $('signed-in').hidden = !session.signedIn;
  text($('nav-signin'), session.signedIn ? 'Signed in' : 'Sign in');
  text($('signin-heading'), session.signedIn ? 'Signed in' : session.pinSet ? 'Sign in' : 'No PIN yet');
  if (session.signedIn && $('error').textContent === 'sign in first') showError('');
  podcasts.session();
}

async function loadSession() {
  try {
    const r = await api('GET', '/api/session');
    if (r.ok) { session = r.data; renderSession(); }
  } catch { /* the events stream shows the box offline */ }
}

function signinMessage(r) {
  const wait = r.data.retryAfter ? ` (try again in ${r.data.retryAfter} s)` : '';
  text($('signin-message'), (r.data.error || `The server answered ${r.code}`) + wait);
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const r = await api('POST', '/api/login', { pin: $('pin').value });
  if (r.ok) {
    $('pin').value = '';
    text($('signin-message'), 'Signed in.');
    await loadSession();
  } else signinMessage(r);
});

$('logout').addEventListener('click', async () => {
  await api('POST', '/api/logout', {});
  text($('signin-message'), 'Signed out.');
  await loadSession();
});

// ---- controls

$('toggle').addEventListener('click', () => control('toggle'));
$('prev').addEventListener('click', () => control('prev'));
$('next').addEventListener('click', () => control('next'));
$('stop').addEventListener('click', () => control('stop'));
$('shuffle').addEventListener('click', () =>
  control(`shuffle ${$('shuffle').getAttribute('aria-pressed') === 'true' ? 'off' : 'on'}`));
$('repeat').addEventListener('change', () => control(`repeat ${$('repeat').value}`));
// A status that came while the select had the focus (it is not overwritten under the user's hand)
// shows when the select loses it: no other status may follow.
$('repeat').addEventListener('blur', () => { if (status) $('repeat').value = status.repeat; });

for (const [id, send] of [['position', (v) => `seek ${v}`], ['volume', (v) => `vol ${v}`]]) {
  const input = $(id);
  input.addEventListener('input', () => {
    dragging[id] = true;
    if (id === 'volume') text($('volume-value'), input.value);
    else text($('elapsed'), clock(Number(input.value)));
  });
  input.addEventListener('change', async () => {
    await control(send(input.value));
    dragging[id] = false;
    renderStatus();
  });
}

// ---- library: #/library/<path, URI-encoded>; folders are links, so Back goes up again

let library = null;        // the last /api/library answer
let libraryRoot = null;    // the music folder (the listing without a path), for the breadcrumbs

function libraryURL(path) { return path ? `/api/library?path=${encodeURIComponent(path)}` : '/api/library'; }

function libraryHref(path) { return path ? `#/library/${encodeURIComponent(path)}` : '#/library'; }

async function loadLibrary() {
  const m = location.hash.match(/^#\/library\/(.+)$/);
  let path = null;
  try { path = m ? decodeURIComponent(m[1]) : null; } catch { path = null; }
  text($('library-message'), 'Loading…');
  try {
    const r = await api('GET', libraryURL(path));
    if (!r.ok) { library = null; text($('library-message'), r.data.error || `The server answered ${r.code}`); }
    else { library = r.data; if (library.parent == null) libraryRoot = library.path; text($('library-message'), ''); }
  } catch { library = null; text($('library-message'), 'The box did not answer'); }
  renderLibrary();
}

function crumb(label, href, current) {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = href;
  text(a, label);
  if (current) a.setAttribute('aria-current', 'location');
  li.append(a);
  return li;
}

function renderLibrary() {
  const l = library || { folders: [], files: [] };
  const crumbs = [crumb('Music', '#/library', l.parent == null && l.path != null)];
  if (l.path && libraryRoot && l.path.startsWith(libraryRoot + '/')) {
    let at = libraryRoot;
    const parts = l.path.slice(libraryRoot.length + 1).split('/');
    parts.forEach((part, i) => { at += '/' + part; crumbs.push(crumb(part, libraryHref(at), i === parts.length - 1)); });
  } else if (l.parent != null) {
    crumbs.push(crumb('Up', libraryHref(l.parent), false), crumb(l.path.split('/').pop(), libraryHref(l.path), true));
  }
  $('crumbs').replaceChildren(...crumbs);
  showCover($('library-cover'), l.path);
  $('folder-actions').hidden = !l.path;
  const items = (l.folders || []).map((f) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.className = 'entry folder';
    a.href = libraryHref(f.path);
    text(a, `${f.name}/`);
    li.append(a);
    return li;
  }).concat((l.files || []).map((f) => {
    const li = document.createElement('li');
    const s = document.createElement('span');
    s.className = 'entry';
    const t = document.createElement('span');
    text(t, f.title || f.name);
    const sub = document.createElement('span');
    sub.className = 'sub';
    text(sub, [f.artist, f.album].filter(Boolean).join(' · ') + (f.seconds != null ? ` ${clock(f.seconds)}` : ''));
    s.append(t, sub);
    li.append(s);
    return li;
  }));
  $('library').replaceChildren(...items);
  $('library-more').hidden = !l.next;
  if (library && !items.length) text($('library-message'), 'Nothing to play here.');
  if (l.truncated) text($('library-message'), 'This folder has more entries than the player lists: the first 1000 are shown.');
  uploadView();
}

setupUpload({ folder: () => library && library.path, session: () => session, reload: loadLibrary });

$('library-more').addEventListener('click', async () => {
  const shown = library;
  if (!shown || !shown.next) return;
  const ok = await appendPages(api, libraryURL(shown.path), shown, ['folders', 'files'], null, () => library !== shown);
  if (library === shown) { if (!ok) text($('library-message'), 'The next entries did not come: try More again.'); renderLibrary(); }
});

$('lib-play').addEventListener('click', () => { if (library && library.path) control(`load ${library.path}`); });
$('lib-add').addEventListener('click', () => { if (library && library.path) control(`add ${library.path}`); });

// ---- routes

function route() {
  let name = (location.hash.match(/^#\/(\w+)/) || [])[1];
  if (!pages.includes(name)) name = 'now';
  for (const p of pages) {
    $(`page-${p}`).hidden = p !== name;
    const link = $(`nav-${p}`);
    if (p === name) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
  }
  // On a phone the row of pages scrolls: the current one is brought into it.
  const current = $(`nav-${name}`);
  const row = current.closest('ul');
  if (row.scrollWidth > row.clientWidth) {
    row.scrollLeft = Math.max(0, current.offsetLeft - row.offsetLeft - (row.clientWidth - current.offsetWidth) / 2);
  }
  document.body.dataset.page = name;
  if (name === 'signin') loadSession();
  if (name === 'queue' && queueDirty) { queueDirty = false; renderQueue(); }
  if (name === 'library') loadLibrary();
  if (name === 'radio') loadRadio();
  cards.show(name);
  podcasts.show(name);
  if (name === 'settings') loadSettings();
  if (name === 'system') loadSystem();
}
window.addEventListener('hashchange', () => { route(); $('main').focus({ preventScroll: true }); });

// ---- live

function setOffline(offline) {
  $('offline').hidden = !offline;
  document.body.dataset.online = offline ? 'no' : 'yes';
}

function onStatus(data) {
  status = data;
  statusAt = performance.now();
  setOffline(false);
  renderStatus();
  cards.status(data);
  podcasts.status();
}

function onQueue(data) {
  const shown = queue.entries ? queue.entries.length : 0;
  queue = data;
  queueGen += 1;
  // A long queue is many elements: built only while its page shows (and when it is opened).
  queueDirty = true;
  if (document.body.dataset.page === 'queue') {
    queueDirty = false;
    renderQueue();
    // The pages the user had opened are asked again (the first page came with the change).
    if (shown > data.entries.length) moreQueue(shown);
  }
}

/** The queue's next page (or pages, until `upTo` entries show), appended and shown. */
async function moreQueue(upTo) {
  const gen = queueGen;
  if (await appendPages(api, '/api/queue', queue, ['entries'], upTo, () => gen !== queueGen)) renderQueue();
}

function connect() {
  const events = new EventSource('/api/events');
  events.addEventListener('status', (ev) => { try { onStatus(JSON.parse(ev.data)); } catch { /* not JSON: ignored */ } });
  events.addEventListener('queue', (ev) => { try { onQueue(JSON.parse(ev.data)); } catch { /* ignored */ } });
  events.addEventListener('offline', () => setOffline(true));
  events.addEventListener('open', () => { loadQueue(); });
  events.addEventListener('error', () => {
    setOffline(true);
    // EventSource retries by itself unless the answer was not a stream (then it is closed).
    if (events.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
  });
}

$('queue-more').addEventListener('click', async () => {
  const shown = queue.entries.length;
  await moreQueue(null);
  // The button may go with the last page: the focus goes to the first entry that came.
  $('queue').children[shown]?.querySelector('.entry')?.focus();
});

async function loadQueue() {
  try {
    const r = await api('GET', '/api/queue');
    if (r.ok) onQueue(r.data);
  } catch { /* offline: the stream says so */ }
}

setInterval(() => {
  if (status && status.phase === 'playing' && document.body.dataset.online === 'yes') renderPosition();
}, 250);
setupLibraryExtras({ api, control, text, clock, $ });
setupRadio({ api, control, text, showError, $ });
const cards = setupCards({ $, text, control, showError });
const podcasts = setupPodcasts({ $, text, control, session: () => session });
const renderSleep = setupSleep({ $, text, control });
const renderSpeed = setupSpeed({ $, text, control });
setupSettings({ api, text, showError });
setupBluetooth({ api, text });
setupSystem({ api, text, control });
route();
renderSession();
loadSession();
connect();
