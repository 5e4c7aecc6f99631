// SPDX-License-Identifier: MIT
// The playback speed on the Now playing page: a select that sends one control line (`speed 1.25`,
// `speed default`: the player decides which tracks play at what speed) and shows the speed of the
// track being played, from `status.speed` (1 when nothing plays).

export function setupSpeed({ $, text, control }) {
  const select = $('speed');

  select.addEventListener('change', async () => {
    await control(`speed ${select.value}`);
  });

  let last = null;   // the status last given

  function show() {
    if (document.activeElement === select) return;
    const speed = last && last.speed != null ? last.speed : 1;
    const value = String(speed);
    // A speed set elsewhere that the list lacks (`speed 1.1`) shows as its own option.
    if (![...select.options].some((o) => o.value === value)) {
      const o = document.createElement('option');
      o.value = value;
      text(o, `${value}×`);
      select.append(o);
    }
    select.value = value;
  }
  // A status that came while the select had the focus shows when it loses it: no other status
  // may follow (the player's speed changed once, as asked).
  select.addEventListener('blur', show);

  /** Called with every status: the select shows the current track's speed. */
  return function renderSpeed(status) {
    last = status;
    show();
  };
}
