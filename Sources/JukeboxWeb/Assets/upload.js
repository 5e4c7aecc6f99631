// SPDX-License-Identifier: MIT
// Upload into the library folder the page shows (docs/WEB.md, "Upload"): files picked, a folder
// picked (webkitdirectory) or files and folders dropped; one request per file
// (POST /api/upload?folder=…&name=…, the raw bytes, the session's CSRF token), one at a time,
// each with its progress bar, a Cancel button and, when refused, the server's reason. No policy
// here: what is audio, the limits and the names are the server's (the player's decoder decides).

const $ = (id) => document.getElementById(id);
let view = null;   // { folder(): string|null, session(): {signedIn, csrf}, reload(): void }
const waiting = []; // { file, name, row } not yet sent
let running = false;

function text(el, value) { el.textContent = value == null ? '' : String(value); }

/** Shows the upload box for the folder on screen (signed in: the pickers; else a link to sign in). */
export function uploadView() {
  if (!view) return;
  const folder = view.folder();
  $('upload').hidden = !folder;
  const signedIn = view.session().signedIn;
  $('upload-signin').hidden = signedIn;
  $('upload-form').hidden = !signedIn;
}

export function setupUpload(hooks) {
  view = hooks;
  $('upload-files').addEventListener('change', (ev) => {
    for (const file of ev.target.files) enqueue(file, file.name);
    ev.target.value = '';
  });
  $('upload-folder').addEventListener('change', (ev) => {
    for (const file of ev.target.files) enqueue(file, file.webkitRelativePath || file.name);
    ev.target.value = '';
  });
  const drop = $('upload-drop');
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const entries = [...ev.dataTransfer.items].map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry()).filter(Boolean);
    if (!entries.length) { for (const file of ev.dataTransfer.files) enqueue(file, file.name); return; }
    for (const entry of entries) await walk(entry);
  });
}

/** A dropped file, or every file of a dropped folder with its path relative to the drop. */
async function walk(entry) {
  if (entry.isFile) {
    const file = await new Promise((resolve) => entry.file(resolve, () => resolve(null)));
    if (file) enqueue(file, entry.fullPath.replace(/^\//, ''));
    return;
  }
  const reader = entry.createReader();
  for (;;) {
    const batch = await new Promise((resolve) => reader.readEntries(resolve, () => resolve([])));
    if (!batch.length) break;
    for (const child of batch) await walk(child);
  }
}

function enqueue(file, name) {
  const folder = view.folder();
  const row = document.createElement('li');
  const label = document.createElement('span');
  label.className = 'upload-name';
  text(label, name);
  const bar = document.createElement('progress');
  bar.max = 1;
  bar.value = 0;
  bar.setAttribute('aria-label', `Upload of ${name}`);
  const state = document.createElement('span');
  state.className = 'upload-state';
  text(state, 'Waiting');
  const cancel = document.createElement('button');
  cancel.type = 'button';
  text(cancel, 'Cancel');
  cancel.setAttribute('aria-label', `Cancel ${name}`);
  row.append(label, bar, state, cancel);
  $('upload-list').append(row);
  const job = { file, name, folder, row, bar, state, cancel, xhr: null, cancelled: false };
  cancel.addEventListener('click', () => {
    job.cancelled = true;
    if (job.xhr) job.xhr.abort();
    finish(job, 'cancelled', 'Cancelled');
  });
  waiting.push(job);
  if (!running) next();
}

function finish(job, kind, words) {
  job.row.dataset.state = kind;
  text(job.state, words);
  job.cancel.hidden = true;
}

async function next() {
  running = true;
  while (waiting.length) {
    const job = waiting.shift();
    if (job.cancelled) continue;
    text(job.state, 'Sending');
    const r = await send(job);
    if (job.cancelled) continue;
    if (r.code === 201) {
      job.bar.value = 1;
      finish(job, 'done', 'Done');
      view.reload();
    } else if (r.code === 0) {
      finish(job, 'refused', 'The box did not answer (the connection was closed)');
    } else {
      finish(job, 'refused', r.data.error || `The server answered ${r.code}`);
    }
  }
  running = false;
}

function send(job) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    job.xhr = xhr;
    xhr.open('POST', `/api/upload?folder=${encodeURIComponent(job.folder)}&name=${encodeURIComponent(job.name)}`);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    const csrf = view.session().csrf;
    if (csrf) xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.upload.addEventListener('progress', (ev) => { if (ev.lengthComputable && ev.total) job.bar.value = ev.loaded / ev.total; });
    xhr.addEventListener('load', () => {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch { data = {}; }
      resolve({ code: xhr.status, data });
    });
    xhr.addEventListener('error', () => resolve({ code: 0, data: {} }));
    xhr.addEventListener('abort', () => resolve({ code: -1, data: {} }));
    xhr.send(job.file);
  });
}
