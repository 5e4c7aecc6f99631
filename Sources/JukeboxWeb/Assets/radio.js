// SPDX-License-Identifier: MIT
// The radio page (#/radio): the stations list the server keeps (stations.m3u beside the PIN),
// added, edited, deleted (the whole list is sent; the server validates it and needs a session)
// and played with the control line `load URL`. Names and URLs are shown as DOM text only.

import { toolButton } from './dom.js';

let app = null;        // { api, control, text, showError, $ } from app.js
let stations = [];
let editing = null;    // the index of the station in the form, null: a new one

function say(message) { app.text(app.$('radio-message'), message); }

export async function loadRadio() {
  try {
    const r = await app.api('GET', '/api/stations');
    if (r.ok) { stations = r.data.stations || []; render(); } else say(r.data.error || `The server answered ${r.code}`);
  } catch { say('The box did not answer'); }
}

function render() {
  const { $, text } = app;
  $('stations-empty').hidden = stations.length > 0;
  $('stations').replaceChildren(...stations.map((s, i) => {
    const li = document.createElement('li');
    const play = document.createElement('button');
    play.type = 'button';
    play.className = 'entry';
    play.dataset.role = 'play';
    const t = document.createElement('span');
    text(t, s.name);
    const sub = document.createElement('span');
    sub.className = 'sub';
    text(sub, s.url);
    play.append(t, sub);
    play.setAttribute('aria-label', `Play ${s.name}`);
    play.addEventListener('click', () => app.control(`load ${s.url}`));
    const edit = toolButton('Edit', s.name, '✎', () => startEdit(i));
    edit.dataset.role = 'edit';
    const remove = toolButton('Delete', s.name, '✕', () => save(stations.filter((_, j) => j !== i), `Deleted ${s.name}.`));
    remove.dataset.role = 'delete';
    li.append(play, edit, remove);
    return li;
  }));
}

function startEdit(i) {
  const { $, text } = app;
  editing = i;
  $('station-name').value = stations[i].name;
  $('station-url').value = stations[i].url;
  text($('station-form-heading'), 'Edit the station');
  text($('station-save'), 'Save station');
  $('station-cancel').hidden = false;
  $('station-name').focus();
}

function resetForm() {
  const { $, text } = app;
  editing = null;
  $('station-name').value = $('station-url').value = '';
  text($('station-form-heading'), 'Add a station');
  text($('station-save'), 'Add station');
  $('station-cancel').hidden = true;
}

async function save(list, done) {
  try {
    const r = await app.api('POST', '/api/stations/save', { stations: list });
    if (r.code === 401) { app.showError(r.data.error || 'Sign in first'); location.hash = '#/signin'; return false; }
    if (!r.ok) { say(r.data.error || `The server answered ${r.code}`); return false; }
    stations = r.data.stations || [];
    render();
    say(done);
    return true;
  } catch { say('The box did not answer'); return false; }
}

export function setupRadio(helpers) {
  app = helpers;
  const { $ } = app;
  $('station-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const station = { name: $('station-name').value, url: $('station-url').value.trim() };
    const list = stations.slice();
    if (editing == null) list.push(station); else list[editing] = station;
    if (await save(list, editing == null ? `Added ${station.name}.` : `Saved ${station.name}.`)) resetForm();
  });
  $('station-cancel').addEventListener('click', resetForm);
}
