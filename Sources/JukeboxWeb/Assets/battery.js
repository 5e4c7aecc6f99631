// SPDX-License-Identifier: MIT
// The box's battery in the header, from `status.battery` ({percent, volts, charging, low} or null:
// no battery monitor, nothing shown). The player decides what a level means (its message says
// "battery low"); the page only shows the level.

/** The words for a reading: "Battery 54 %", "Battery 12 %, charging", "Battery low"; '' for none. */
export function batteryText(b) {
  if (!b) return '';
  const level = b.percent == null ? (b.low ? 'low' : 'unknown') : `${Math.round(b.percent)} %`;
  return `Battery ${level}` + (b.charging ? ', charging' : '');
}

/** Shows the reading of `status` in `el` (hidden without one). */
export function renderBattery(el, text, status) {
  const words = batteryText(status && status.battery);
  el.hidden = !words;
  text(el, words);
}
