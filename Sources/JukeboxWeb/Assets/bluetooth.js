// SPDX-License-Identifier: MIT
// The Settings page's Bluetooth speaker (docs/BLUETOOTH.md): whether the configured speaker is
// connected and which output plays (from status.speakerConnected and status.output), and Pair,
// Trust and Forget for the address in the speaker field, each one control line
// (`bluetooth pair ADDRESS`, with the PIN field: `bluetooth pair ADDRESS pin DIGITS`) through
// POST /api/control, with a session. The address and the PIN are checked by the player's
// language (the config's rule; 1 to 16 digits), never here. What bluetoothctl said comes back
// as the reply: text from a device, set as DOM text only and cut to `maxShown` characters.

import { factItems } from './dom.js';

let ctx = null;        // { api, text } from app.js
let status = null;     // the last status seen
let offered = false;   // whether the page offers the speaker (not with `"bluetooth": null`)
let saved = null;      // the address the config has (null: no `bluetooth` section yet)
const $ = (id) => document.getElementById(id);
const maxShown = 300;
const doing = { pair: 'Pairing', trust: 'Trusting', forget: 'Forgetting' };
const outputs = { card: 'the box\'s own sound card', headphones: 'the headphones', bluetooth: 'the Bluetooth speaker' };

export function setupBluetooth(context) {
  ctx = context;
  for (const action of ['pair', 'trust', 'forget']) {
    $(`bluetooth-${action}`).addEventListener('click', () => send(action));
  }
}

/** Shown with the settings when they offer the speaker's address (a section written null: not). */
export function showBluetooth(settings) {
  const speaker = (settings || []).find((s) => s.key === 'bluetooth.speaker');
  offered = !!speaker;
  saved = speaker ? speaker.value : null;
  $('settings-bluetooth-box').hidden = !offered;
  if (offered) renderBluetooth(status);
}

/** What the speaker and the output are now, from a status. */
export function renderBluetooth(s) {
  status = s;
  if (!offered || !ctx) return;
  if (saved == null) {
    $('bluetooth-facts').replaceChildren(...factItems([['Speaker', 'none in the config yet: type its address above and '
      + 'Save; the player watches it from its next start']]));
    return;
  }
  const connected = !s || s.speakerConnected == null ? 'not known (the player does not watch bluez-alsa)'
    : (s.speakerConnected ? 'yes' : 'no');
  const playing = s && s.output ? (outputs[s.output] || String(s.output).slice(0, 40)) : 'not known';
  $('bluetooth-facts').replaceChildren(...factItems([['Connected now', connected], ['Plays through', playing]]));
}

/** Cut to what the page shows of text from a device. */
function bounded(value) {
  const t = String(value == null ? '' : value);
  return t.length > maxShown ? `${t.slice(0, maxShown)}…` : t;
}

async function send(action) {
  const { api, text } = ctx;
  const field = $('set-bluetooth-speaker');
  const address = field ? field.value.trim() : '';
  const out = $('bluetooth-outcome');
  const buttons = ['pair', 'trust', 'forget'].map((a) => $(`bluetooth-${a}`));
  const pinField = $('bluetooth-pin');
  const pin = action === 'pair' && pinField ? pinField.value.trim() : '';
  const line = `bluetooth ${action} ${address}` + (pin ? ` pin ${pin}` : '');
  text(out, `${doing[action]}… (up to 25 s)`);
  for (const b of buttons) b.disabled = true;
  let r;
  try { r = await api('POST', '/api/control', { line }); } catch { r = { ok: false, data: { error: 'The box did not answer' } }; }
  for (const b of buttons) b.disabled = false;
  if (r.code === 401) { text(out, 'Sign in first.'); return; }
  if (!r.ok) { text(out, bounded(r.data.error || `The server answered ${r.code}`)); return; }
  text(out, bounded(String(r.data.reply || '').replace(/^ok /, '')));
}
