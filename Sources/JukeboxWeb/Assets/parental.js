// SPDX-License-Identifier: MIT
// The parental rules on the Settings page: quiet hours and the volume caps, spans of the day edited
// as fields (settings.js shows them when the server offers `parental.quietHours` and
// `parental.caps`), and what the rules hold now, from status --json's `parental`. No policy here:
// the page sends what the fields say and the config's own code checks it (its words are shown).

import { editRow, factItems, labelledField } from './dom.js';

const $ = (id) => document.getElementById(id);
/** The keys whose values are spans, edited here rather than as one field. */
export const spanKeys = ['parental.quietHours', 'parental.caps'];
let setText = null;
let capOutputs = [];
let capCount = 0;      // numbers the cap rows' ids
let was = {};          // each span key's value as rendered, as JSON text

/** A labelled field: `input` with its label (and a hint tied to it). */
const field = labelledField;

function input(type, value) {
  const e = document.createElement('input');
  e.type = type;
  e.value = value == null ? '' : String(value);
  return e;
}

function volumeInput(value, required) {
  const e = input('number', value);
  e.min = '0';
  e.max = '100';
  e.step = '1';
  e.inputMode = 'numeric';
  e.required = required;
  return e;
}

function box(legendText) {
  const set = document.createElement('fieldset');
  set.className = 'span-box';
  const legend = document.createElement('legend');
  setText(legend, legendText);
  set.append(legend);
  return set;
}

function quietEditor(quiet) {
  const set = box('Quiet hours');
  const on = input('checkbox');
  on.checked = !!quiet;
  const q = quiet || { from: '19:30', to: '07:00', folders: [], volumeMax: null };
  const folders = document.createElement('textarea');
  folders.rows = 3;
  folders.value = (q.folders || []).join('\n');
  set.append(
    field('set-quiet-on', 'Quiet hours every day', on, 'nothing starts then but the folders below; applies at once'),
    field('set-quiet-from', 'Quiet from', input('time', q.from)),
    field('set-quiet-to', 'Quiet until', input('time', q.to)),
    field('set-quiet-folders', 'Folders that may still play, one a line', folders, 'absolute paths, e.g. /srv/music/lullabies'),
    field('set-quiet-volume', 'Highest volume in quiet hours', volumeInput(q.volumeMax, false), 'empty: the caps below only'),
  );
  return set;
}

function quietValue() {
  if (!$('set-quiet-on')) return undefined;
  if (!$('set-quiet-on').checked) return null;
  const v = { from: $('set-quiet-from').value, to: $('set-quiet-to').value };
  const folders = $('set-quiet-folders').value.split('\n').map((s) => s.trim()).filter(Boolean);
  if (folders.length) v.folders = folders;
  const max = $('set-quiet-volume').value.trim();
  if (max !== '') v.volumeMax = Number(max);
  return v;
}

function capRow(cap) {
  capCount += 1;
  const n = capCount;
  const { row, remove } = editRow(`Volume cap ${n}`, `Remove volume cap ${n}`);
  const output = document.createElement('select');
  for (const [value, name] of [['', 'both'], ...capOutputs.map((o) => [o, o])]) {
    const o = document.createElement('option');
    o.value = value;
    setText(o, name);
    output.append(o);
  }
  output.value = cap.output || '';
  const from = input('time', cap.from), to = input('time', cap.to);
  from.required = true;
  to.required = true;
  row.append(field(`set-cap-${n}-from`, 'From', from), field(`set-cap-${n}-to`, 'Until', to),
    field(`set-cap-${n}-volume`, 'Highest volume', volumeInput(cap.volumeMax, true)),
    field(`set-cap-${n}-output`, 'Output', output), remove);
  row.dataset.cap = String(n);
  return row;
}

function capsEditor(caps) {
  const set = box('Volume caps by time of day');
  const list = document.createElement('div');
  list.id = 'set-caps';
  list.append(...caps.map(capRow));
  const add = document.createElement('button');
  add.type = 'button';
  add.id = 'set-caps-add';
  setText(add, 'Add a cap');
  add.addEventListener('click', () => list.append(capRow({ from: '', to: '', volumeMax: '', output: null })));
  const note = document.createElement('p');
  note.className = 'hint';
  setText(note, 'at most 24; the lowest cap that holds wins; applies at once');
  set.append(note, list, add);
  return set;
}

function capsValue() {
  const list = $('set-caps');
  if (!list) return undefined;
  return [...list.querySelectorAll('[data-cap]')].map((row) => {
    const n = row.dataset.cap;
    const v = { from: $(`set-cap-${n}-from`).value, to: $(`set-cap-${n}-to`).value, volumeMax: Number($(`set-cap-${n}-volume`).value) };
    const output = $(`set-cap-${n}-output`).value;
    if (output) v.output = output;
    return v;
  });
}

/** The editors for the span settings the server offers (none: an empty list). */
export function spanEditors(settings, choices, text) {
  setText = text;
  capOutputs = choices['parental.caps.output'] || [];
  const byKey = Object.fromEntries(settings.map((s) => [s.key, s.value]));
  const out = [];
  if ('parental.quietHours' in byKey) out.push(quietEditor(byKey['parental.quietHours']));
  if ('parental.caps' in byKey) out.push(capsEditor(byKey['parental.caps'] || []));
  return out;
}

/** Notes what the editors show once they are in the page: only a change from it is sent. */
export function spansShown() {
  was = { 'parental.quietHours': JSON.stringify(quietValue()), 'parental.caps': JSON.stringify(capsValue()) };
}

/** The span settings changed since they were shown, as {key: value} (null: the rule goes). */
export function spanChanges() {
  const now = { 'parental.quietHours': quietValue(), 'parental.caps': capsValue() };
  const out = {};
  for (const [key, value] of Object.entries(now)) {
    if (value !== undefined && JSON.stringify(value) !== was[key]) out[key] = value;
  }
  return out;
}

/** What the rules hold now, from `status.parental` (none configured: the box is hidden). */
export function renderParental(status) {
  const p = status && status.parental;
  const boxEl = $('settings-parental-box');
  if (!boxEl) return;
  boxEl.hidden = !p;
  if (!p) return;
  const quiet = p.quiet == null ? 'not known: the wall clock is not synchronised' : (p.quiet ? 'now' : 'not now');
  const facts = [
    ['Wall clock', p.clockSynchronized ? 'synchronised' : 'not synchronised: every volume cap holds'],
    ['Quiet hours', quiet],
    ['Listening left today', p.limitLeft == null ? 'no daily limit' : `${p.limitLeft} min`],
    ['A new listening day at', p.resetAt || '–'],
    ['Highest volume now', status.volumeMax == null ? '–' : String(status.volumeMax)],
  ];
  $('settings-parental').replaceChildren(...factItems(facts));
}
