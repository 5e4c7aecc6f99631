// SPDX-License-Identifier: MIT
// The System page (#/system, signed in): GET /api/system (the player's `system --json` and its
// last log lines, the image's boot-time problems) shown as DOM text; "Restart the player" sends the control line `restart` (the
// player saves and exits for systemd to start it again; the page reconnects by itself).

import { factItems } from './dom.js';

let ctx = null;            // { api, text, control } from app.js
const $ = (id) => document.getElementById(id);

export function setupSystem(context) {
  ctx = context;
  $('system-refresh').addEventListener('click', loadSystem);
  $('system-restart').addEventListener('click', async () => {
    const r = await ctx.control('restart');
    if (r.ok) ctx.text($('system-message'), 'The player is restarting; this page reconnects by itself.');
  });
}

function duration(seconds) {
  if (seconds == null) return 'unknown';
  const d = Math.floor(seconds / 86400), h = Math.floor((seconds % 86400) / 3600), m = Math.floor((seconds % 3600) / 60);
  return [d ? `${d} d` : '', h ? `${h} h` : '', `${m} min`].filter(Boolean).join(' ');
}

function size(bytes) {
  if (bytes == null) return '?';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes, i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i += 1; }
  return `${v.toFixed(v < 10 && i ? 1 : 0)} ${units[i]}`;
}

export async function loadSystem() {
  const { api, text } = ctx;
  text($('system-message'), 'Loading…');
  let r;
  try { r = await api('GET', '/api/system'); } catch { r = { ok: false, data: { error: 'The box did not answer' } }; }
  if (!r.ok) {
    $('system-box').hidden = true;
    text($('system-message'), r.code === 401 ? 'Sign in to see the system.' : (r.data.error || `The server answered ${r.code}`));
    return;
  }
  const s = r.data.system || {};
  const mem = s.memory || {};
  const facts = [
    ['Version', s.version],
    ['Host name', s.host],
    ['This page reached it at', location.host],
    ['Addresses', (s.addresses || []).join(', ') || 'none the player sees (its sandbox has no network)'],
    ['Up for', duration(s.uptime)],
    ['Player running for', duration(s.playerUptime)],
    ['Memory', mem.totalKiB ? `${size(mem.availableKiB * 1024)} free of ${size(mem.totalKiB * 1024)}` : 'unknown'],
    ['Player memory', s.playerMemoryKiB ? size(s.playerMemoryKiB * 1024) : 'unknown'],
  ];
  for (const d of s.disks || []) facts.push(['Disk', `${size(d.freeBytes)} free of ${size(d.bytes)} (${d.folder})`]);
  for (const t of s.temperatures || []) facts.push([`Temperature (${t.zone})`, `${Number(t.celsius).toFixed(1)} °C`]);
  $('system-facts').replaceChildren(...factItems(facts));
  // The appliance image's boot-time problems (jukebox-setup), as DOM text.
  const problems = s.setupProblems || [];
  $('system-setup-problems').replaceChildren(...problems.map((line) => {
    const li = document.createElement('li');
    text(li, line);
    return li;
  }));
  $('system-setup').hidden = problems.length === 0;
  $('system-log').replaceChildren(...(r.data.log || []).map((line) => {
    const li = document.createElement('li');
    text(li, line);
    return li;
  }));
  $('system-box').hidden = false;
  text($('system-message'), '');
}
