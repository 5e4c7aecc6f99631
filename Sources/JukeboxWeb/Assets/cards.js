// SPDX-License-Identifier: MIT
// The Cards and Bookmarks pages. Every change is one control line the player decides
// (`card assign --next VALUE`, `card assign ID VALUE`, `card delete ID`, `bookmark reset PATH`);
// what a card got arrives through the event stream (`status.cardAssign`). Card ids, paths and
// errors are text from anywhere: set as DOM text only.

const commands = ['toggle', 'play', 'pause', 'stop', 'next', 'previous', 'vol+', 'vol-', 'shuffle', 'repeat',
  'seek+', 'seek-', 'sleep 15', 'sleep 30', 'sleep 60', 'sleep off', 'poweroff'];

export function setupCards({ $, text, control, showError }) {
  let shown = null;            // 'cards', 'bookmarks' or null
  let target = null;           // the card id being edited (null: the next card swiped)
  let lastStage = null;        // status.cardAssign's stage last seen
  let bookmarksAt = 0;

  /** One reading control line (`cards --json`): its JSON object, or null (the error is shown). */
  async function read(line) {
    const r = await control(line);
    if (!r.ok || !r.data || typeof r.data.reply !== 'string' || !r.data.reply.startsWith('ok ')) return null;
    try { return JSON.parse(r.data.reply.slice(3)); } catch { return null; }
  }

  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content != null) text(e, content);
    return e;
  }

  function button(label, handler, cls) {
    const b = el('button', cls, label);
    b.type = 'button';
    b.addEventListener('click', handler);
    return b;
  }

  // ---- what a card plays: a folder, a station URL or a command

  for (const c of commands) {
    const o = document.createElement('option');
    o.value = c; text(o, c);
    $('card-command').append(o);
  }

  function kind() { return document.querySelector('input[name="card-kind"]:checked').value; }

  function renderKind() {
    const k = kind();
    $('card-folder-row').hidden = k !== 'folder';
    $('card-url-row').hidden = k !== 'url';
    $('card-command-row').hidden = k !== 'command';
  }
  for (const r of document.querySelectorAll('input[name="card-kind"]')) r.addEventListener('change', renderKind);

  async function loadFolders() {
    try {
      const r = await fetch('/api/library', { credentials: 'same-origin', cache: 'no-store' });
      const data = await r.json();
      if (!r.ok || !Array.isArray(data.folders)) return;
      const select = $('card-folder');
      const keep = select.value;
      select.replaceChildren();
      for (const f of data.folders) {
        const o = document.createElement('option');
        o.value = f.path; text(o, f.name);
        select.append(o);
      }
      if (keep) select.value = keep;
    } catch { /* offline: the banner says so */ }
  }

  function chosen() {
    switch (kind()) {
      case 'folder': return $('card-folder').value;
      case 'url': return $('card-url').value.trim();
      default: return $('card-command').value;
    }
  }

  function describe(card) {
    if (Array.isArray(card.paths)) return card.paths.join(', ');
    return card.command == null ? '' : String(card.command);
  }

  function setTarget(id) {
    target = id;
    text($('card-assign'), id == null ? 'Assign to the next card' : `Assign to card ${id}`);
    $('card-target-cancel').hidden = id == null;
    text($('card-form-heading'), id == null ? 'Assign a card' : `Change card ${id}`);
  }

  $('card-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = chosen();
    if (!value) { showError('Choose what the card plays first'); return; }
    if (target == null) {
      await control(`card assign --next ${value}`);
    } else {
      const r = await control(`card assign ${target} ${value}`);
      if (r.ok) { text($('cards-message'), r.data.reply.replace(/^ok /, '')); setTarget(null); loadCards(); }
    }
  });
  $('card-target-cancel').addEventListener('click', () => setTarget(null));
  $('card-wait-cancel').addEventListener('click', () => control('card assign --cancel'));

  // ---- the swipe: waiting, then which card got it (status.cardAssign, live)

  function renderAssign(assign) {
    const box = $('card-wait');
    const cancel = $('card-wait-cancel');
    if (!assign) { box.hidden = true; return; }
    box.hidden = false;
    cancel.hidden = assign.stage !== 'waiting';
    box.dataset.stage = assign.stage;
    switch (assign.stage) {
      case 'waiting': text($('card-wait-text'), `Swipe a card now: it will play ${assign.value}`); break;
      case 'writing': text($('card-wait-text'), `Card ${assign.card}: saving…`); break;
      case 'done': text($('card-wait-text'), `Card ${assign.card} now plays ${assign.value}`); break;
      default: text($('card-wait-text'), `Card ${assign.card} was not assigned: ${assign.error || 'unknown error'}`);
    }
  }

  // ---- the list

  async function loadCards() {
    const data = await read('cards --json');
    if (!data) return;
    text($('cards-second'), data.secondSwipe);
    text($('cards-remove'), data.onRemove);
    text($('cards-delay'), `${data.sameCardDelay} s`);
    const unknown = $('cards-new');
    unknown.hidden = !data.newCard;
    if (data.newCard) {
      text($('cards-new-text'), `An unknown card was swiped: ${data.newCard}`);
      $('cards-new-assign').onclick = () => { setTarget(data.newCard); $('card-folder').focus(); };
    }
    renderAssign(data.assignNext);
    const list = $('cards');
    list.replaceChildren();
    $('cards-empty').hidden = data.cards.length > 0;
    $('cards-truncated').hidden = !data.truncated;
    for (const card of data.cards) {
      const li = document.createElement('li');
      const body = el('div', 'entry');
      body.append(el('span', 'card-id', card.id), el('span', 'sub', describe(card)));
      li.append(body,
        button('Change', () => { setTarget(card.id); $('card-form-heading').scrollIntoView(); $('card-form-heading').focus(); }, 'tool'),
        button('Delete', async () => {
          const r = await control(`card delete ${card.id}`);
          if (r.ok) { text($('cards-message'), r.data.reply.replace(/^ok /, '')); loadCards(); }
        }, 'tool'));
      li.lastChild.setAttribute('aria-label', `Delete card ${card.id}`);
      li.children[1].setAttribute('aria-label', `Change card ${card.id}`);
      list.append(li);
    }
  }

  // ---- bookmarks

  function fileName(path) { const s = String(path); return s.slice(s.lastIndexOf('/') + 1); }

  function clock(seconds) {
    const s = Math.max(0, Math.floor(Number(seconds) || 0));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = String(s % 60).padStart(2, '0');
    return h ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
  }

  async function loadBookmarks() {
    bookmarksAt = performance.now();
    const data = await read('bookmarks --json');
    if (!data) return;
    text($('bookmarks-mode'), data.mode);
    const list = $('bookmarks');
    list.replaceChildren();
    $('bookmarks-empty').hidden = data.bookmarks.length > 0;
    $('bookmarks-all').hidden = data.bookmarks.length === 0;
    $('bookmarks-truncated').hidden = !data.truncated;
    for (const mark of data.bookmarks) {
      const first = mark.paths[0];
      const li = document.createElement('li');
      const body = el('div', 'entry');
      const more = mark.paths.length > 1 ? ` and ${mark.paths.length - 1} more` : '';
      body.append(el('span', 'bookmark-folder', first + more),
        el('span', 'sub', `${fileName(mark.track)} at ${clock(mark.position)}`));
      const reset = button('Reset', async () => {
        const r = await control(`bookmark reset ${first}`);
        if (r.ok) { text($('bookmarks-message'), r.data.reply.replace(/^ok /, '')); loadBookmarks(); }
      }, 'tool');
      reset.setAttribute('aria-label', `Reset the bookmark of ${first}`);
      li.append(body, reset);
      list.append(li);
    }
  }
  $('bookmarks-all').addEventListener('click', async () => {
    const r = await control('bookmark reset --all');
    if (r.ok) { text($('bookmarks-message'), r.data.reply.replace(/^ok /, '')); loadBookmarks(); }
  });

  renderKind();
  setTarget(null);

  return {
    /** The route shows `name` (any page). */
    show(name) {
      shown = name === 'cards' || name === 'bookmarks' ? name : null;
      if (shown === 'cards') { text($('cards-message'), ''); loadFolders(); loadCards(); }
      if (shown === 'bookmarks') { text($('bookmarks-message'), ''); loadBookmarks(); }
    },
    /** A status from the event stream. */
    status(s) {
      const assign = s.cardAssign || null;
      const stage = assign ? `${assign.stage} ${assign.card}` : null;
      if (shown === 'cards') {
        renderAssign(assign);
        // A card got its value, or an unknown card was swiped: the list changed.
        if (stage !== lastStage && (assign == null || assign.stage === 'done')) loadCards();
        else if (s.newCard && $('cards-new').hidden) loadCards();
      }
      lastStage = stage;
      if (shown === 'bookmarks' && performance.now() - bookmarksAt > 1000) loadBookmarks();
    },
  };
}
