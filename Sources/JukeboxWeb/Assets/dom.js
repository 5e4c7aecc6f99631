// SPDX-License-Identifier: MIT
// DOM pieces the pages share. Text from outside (names, tags, log lines) only ever goes in as
// textContent, never as markup.

/// Sets `el`'s text (null shows nothing).
export function text(el, value) { el.textContent = value == null ? '' : String(value); }

/// A small icon button of a list row: `glyph` shown, "label: name" for assistive technology.
export function toolButton(label, name, glyph, handler) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'tool';
  b.setAttribute('aria-label', `${label}: ${name}`);
  b.title = label;
  text(b, glyph);
  b.addEventListener('click', handler);
  return b;
}

/// The <dt>/<dd> pairs of a definition list from [term, value] pairs.
export function factItems(facts) {
  const items = [];
  for (const [term, value] of facts) {
    const dt = document.createElement('dt');
    text(dt, term);
    const dd = document.createElement('dd');
    text(dd, value);
    items.push(dt, dd);
  }
  return items;
}
