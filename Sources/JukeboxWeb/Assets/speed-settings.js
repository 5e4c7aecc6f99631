// SPDX-License-Identifier: MIT
// Per-folder playback speeds on the Settings page (the config's `speeds`: folder → speed, the
// innermost folder wins): a row per folder, a speed from the player's range, added and removed.
// settings.js shows it when the server offers `speeds`. No policy here: the config's own code
// checks the folders and speeds, and its words are shown.

import { editRow, labelledField } from './dom.js';

const $ = (id) => document.getElementById(id);
const speeds = ['0.75', '1', '1.25', '1.5', '1.75', '2'];
let setText = null;
let rowCount = 0;      // numbers the rows' ids
let was = '';          // the value as rendered, as JSON text

function speedRow(folder, speed) {
  rowCount += 1;
  const n = rowCount;
  const { row, remove } = editRow(`Folder speed ${n}`, `Remove folder speed ${n}`);
  const path = document.createElement('input');
  path.type = 'text';
  path.required = true;
  path.placeholder = '/srv/music/Audiobooks';
  path.value = folder;
  const select = document.createElement('select');
  const value = String(speed);
  for (const s of speeds.includes(value) ? speeds : [...speeds, value]) {
    const o = document.createElement('option');
    o.value = s;
    setText(o, `${s}×`);
    select.append(o);
  }
  select.value = value;
  row.append(labelledField(`set-speed-${n}-folder`, 'Folder', path), labelledField(`set-speed-${n}-speed`, 'Speed', select), remove);
  row.dataset.speed = String(n);
  return row;
}

function speedsValue() {
  const list = $('set-speeds');
  if (!list) return undefined;
  const out = {};
  for (const row of list.querySelectorAll('[data-speed]')) {
    const n = row.dataset.speed;
    out[$(`set-speed-${n}-folder`).value.trim()] = Number($(`set-speed-${n}-speed`).value);
  }
  return out;
}

/** The editor when the server offers `speeds` (else none), its rows from the value in effect. */
export function speedEditors(settings, text) {
  setText = text;
  const entry = settings.find((s) => s.key === 'speeds');
  if (!entry) return [];
  const set = document.createElement('fieldset');
  set.className = 'span-box';
  const legend = document.createElement('legend');
  setText(legend, 'Playback speed by folder');
  const note = document.createElement('p');
  note.className = 'hint';
  setText(note, 'audiobooks faster, with the pitch kept; the innermost folder listed wins; elsewhere 1×; applies at once');
  const list = document.createElement('div');
  list.id = 'set-speeds';
  list.append(...Object.entries(entry.value || {}).map(([folder, speed]) => speedRow(folder, speed)));
  const add = document.createElement('button');
  add.type = 'button';
  add.id = 'set-speeds-add';
  setText(add, 'Add a folder');
  add.addEventListener('click', () => list.append(speedRow('', '1.25')));
  set.append(legend, note, list, add);
  return [set];
}

/** Notes what the editor shows once it is in the page: only a change from it is sent. */
export function speedsShown() { was = JSON.stringify(speedsValue()); }

/** `{speeds: {...}}` when the rows changed since they were shown (none left: the key goes). */
export function speedChanges() {
  const now = speedsValue();
  if (now === undefined || JSON.stringify(now) === was) return {};
  return { speeds: Object.keys(now).length ? now : null };
}
