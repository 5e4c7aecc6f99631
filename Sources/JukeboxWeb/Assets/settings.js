// SPDX-License-Identifier: MIT
// The Settings page (#/settings, signed in): the settings the server offers (GET /api/settings),
// changed with POST /api/settings/change. No policy here: the server writes only the keys it
// lists, the config's own code checks the values and its words are shown. Every value and name
// from the box is set as DOM text.

import { factItems } from './dom.js';
import { spanKeys, spanEditors, spansShown, spanChanges } from './parental.js';
import { speedEditors, speedsShown, speedChanges } from './speed-settings.js';
import { showBluetooth } from './bluetooth.js';

let ctx = null;            // { api, text, showError } from app.js
let loaded = null;         // the last /api/settings answer
const $ = (id) => document.getElementById(id);

const labels = {
  volumeMin: ['Lowest volume', '0 to 100'],
  volumeMax: ['Highest volume', '0 to 100; the volume slider stops here'],
  volumeStep: ['Volume step', 'how much a button or the knob changes it'],
  bootVolume: ['Volume at start', 'empty: the volume it had'],
  idlePowerOff: ['Power off when idle, after minutes', 'empty: never'],
  'rfid.secondSwipe': ['The same card again', ''],
  'rfid.onRemove': ['A card taken off the reader', ''],
  'parental.dailyLimitMinutes': ['Listening a day, in minutes', 'empty: no limit; counted while sound plays'],
  'parental.warnMinutes': ['Warn before the end of the day\'s listening, minutes before', 'empty: 5'],
  'parental.resetAt': ['A new listening day begins at', 'empty: 06:00'],
  'parental.quietHours': ['Quiet hours', ''],
  'parental.caps': ['Volume caps by time of day', ''],
  'bluetooth.speaker': ['Bluetooth speaker\'s address', 'six pairs of hex digits, like AA:BB:CC:DD:EE:FF'],
  'bluetooth.whenGone': ['When the speaker goes', 'card: play on through the box; pause: pause until it is back'],
  'bluetooth.volumeMax': ['Highest volume on the speaker', 'empty: the same as the box\'s'],
};
/** Settings that are a time of day (HH:MM), sent as text. */
const timeKeys = ['parental.resetAt'];
/** Settings that are a word typed in (the speaker's address), sent as text. */
const textKeys = ['bluetooth.speaker'];
const applies = { now: 'applies at once', start: 'applies when the player next starts' };

export function setupSettings(context) {
  ctx = context;
  $('settings-form').addEventListener('submit', save);
}

function fieldId(key) { return `set-${key.replace('.', '-')}`; }

export async function loadSettings() {
  const { api, text } = ctx;
  text($('settings-message'), 'Loading…');
  let r;
  try { r = await api('GET', '/api/settings'); } catch { r = { ok: false, data: { error: 'The box did not answer' } }; }
  if (!r.ok) {
    loaded = null;
    $('settings-form').hidden = true;
    $('settings-facts-box').hidden = true;
    showBluetooth([]);
    text($('settings-message'), r.code === 401 ? 'Sign in to see and change the settings.' : (r.data.error || `The server answered ${r.code}`));
    return;
  }
  loaded = r.data;
  render();
  text($('settings-message'), '');
}

function render() {
  const { text } = ctx;
  const fields = (loaded.settings || []).filter((s) => !spanKeys.includes(s.key) && s.key !== 'speeds').map((s) => {
    const row = document.createElement('div');
    row.className = 'field';
    const id = fieldId(s.key);
    const [name, hint] = labels[s.key] || [s.key, ''];
    const label = document.createElement('label');
    label.htmlFor = id;
    text(label, name);
    const choices = (loaded.choices || {})[s.key];
    let input;
    if (choices) {
      input = document.createElement('select');
      for (const c of choices) {
        const o = document.createElement('option');
        o.value = c;
        text(o, c);
        input.append(o);
      }
    } else if (timeKeys.includes(s.key)) {
      input = document.createElement('input');
      input.type = 'time';
      input.required = !s.optional;
    } else if (textKeys.includes(s.key)) {
      input = document.createElement('input');
      input.type = 'text';
      input.autocomplete = 'off';
      input.spellcheck = false;
      input.maxLength = 64;
    } else {
      input = document.createElement('input');
      input.type = 'number';
      input.inputMode = 'decimal';
      input.step = 'any';
      input.required = !s.optional;
    }
    input.id = id;
    input.dataset.key = s.key;
    input.value = s.value == null ? '' : String(s.value);
    input.dataset.was = input.value;
    const note = document.createElement('p');
    note.className = 'hint';
    note.id = `${id}-hint`;
    text(note, [hint, applies[s.applies] || ''].filter(Boolean).join('; '));
    input.setAttribute('aria-describedby', note.id);
    row.append(label, input, note);
    return row;
  });
  $('settings-fields').replaceChildren(...fields, ...spanEditors(loaded.settings || [], loaded.choices || {}, text),
    ...speedEditors(loaded.settings || [], text));
  spansShown();
  speedsShown();
  showBluetooth(loaded.settings);
  $('settings-form').hidden = false;

  const facts = [['Config file', loaded.file], ['Board', loaded.board || 'none named'],
    ['Display', loaded.display || 'none'], ['MPD', loaded.mpd ? 'on' : 'off'], ['MQTT', loaded.mqtt ? 'on' : 'off'],
    ['Card reader', loaded.rfid ? 'on' : 'off']];
  const buttons = Object.entries(loaded.buttons || {});
  facts.push(['Buttons', buttons.length ? buttons.map(([role, line]) => `${role}: ${line}`).join(', ') : 'none in the config']);
  $('settings-facts').replaceChildren(...factItems(facts));
  $('settings-facts-box').hidden = false;
}

async function save(ev) {
  ev.preventDefault();
  const { api, text } = ctx;
  const changes = {};
  for (const input of $('settings-fields').querySelectorAll('[data-key]')) {
    if (input.value === input.dataset.was) continue;
    if (input.tagName === 'SELECT') changes[input.dataset.key] = input.value;
    else if (input.type === 'time') changes[input.dataset.key] = input.value === '' ? null : input.value;
    else if (input.type === 'text') changes[input.dataset.key] = input.value.trim() === '' ? null : input.value.trim();
    else changes[input.dataset.key] = input.value.trim() === '' ? null : Number(input.value);
  }
  Object.assign(changes, spanChanges(), speedChanges());
  if (!Object.keys(changes).length) { text($('settings-message'), 'Nothing changed.'); return; }
  text($('settings-message'), 'Saving…');
  let r;
  try { r = await api('POST', '/api/settings/change', { changes }); } catch { r = { ok: false, data: { error: 'The box did not answer' } }; }
  if (!r.ok) {
    text($('settings-message'), r.code === 401 ? 'Sign in first.' : (r.data.error || `The server answered ${r.code}`));
    return;
  }
  const reload = String(r.data.reload || '');
  let message = 'Saved to the config file.';
  // "ok configuration reloaded; at the next start: KEY, KEY": applied, but for what the
  // running player only takes when it next starts (a new speaker and its rules, a device).
  const waiting = reload.startsWith('ok') ? reload.split('; at the next start: ')[1] : undefined;
  if (waiting) message += ` The player applied it, but for what waits for its next start: ${waiting}.`;
  else if (reload.startsWith('ok')) message += ' The player applied it.';
  else message += ` The player did not apply it: ${reload.replace(/^error: /, '')}`;
  if ((r.data.atStart || []).length) message += ` ${r.data.atStart.map((k) => (labels[k] || [k])[0]).join(', ')}: when the player next starts.`;
  await loadSettings();
  text($('settings-message'), message);
}
