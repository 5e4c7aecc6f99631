// SPDX-License-Identifier: MIT
// The sleep timer on the Now playing page: a select that sends one control line (`sleep 30`,
// `sleep track`, `sleep off`; the player decides everything), and the time left from
// `status.sleep` ({mode, left, minutes} or null), counted down between statuses.

export function setupSleep({ $, text, control }) {
  const select = $('sleep');
  const left = $('sleep-left');
  let shown = null;   // status.sleep as last given
  let at = 0;         // performance.now() when it came

  select.addEventListener('change', async () => {
    const value = select.value;
    await control(`sleep ${value}`);
  });

  function minutesAndSeconds(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    return s >= 60 ? `${Math.ceil(s / 60)} min left` : `${s} s left`;
  }

  function renderLeft() {
    if (!shown) { text(left, ''); return; }
    if (shown.left == null) { text(left, `until the end of the ${shown.mode}`); return; }
    // Minutes count on the box's clock; the other modes only while it plays.
    const running = shown.mode === 'minutes' || document.body.dataset.phase === 'playing';
    text(left, minutesAndSeconds(shown.left - (running ? (performance.now() - at) / 1000 : 0)));
  }
  setInterval(renderLeft, 1000);

  function showSelect() {
    if (document.activeElement === select) return;
    let value = 'off';
    if (shown) value = shown.mode === 'minutes' ? String(shown.minutes) : shown.mode;
    // A timer of other minutes (set elsewhere) shows as its own option.
    if (![...select.options].some((o) => o.value === value)) {
      const o = document.createElement('option');
      o.value = value;
      text(o, `${value} min`);
      select.append(o);
    }
    select.value = value;
  }
  // A status that came while the select had the focus shows when it loses it.
  select.addEventListener('blur', showSelect);

  /** Called with every status: the select shows what runs, the text the time left. */
  return function renderSleep(status) {
    shown = status ? status.sleep ?? null : null;
    at = performance.now();
    showSelect();
    renderLeft();
  };
}
