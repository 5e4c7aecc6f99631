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

/// A labelled form field: `input` (given `id`) under its label `name`, with a hint tied to it
/// when there is one.
export function labelledField(id, name, input, hint) {
  const row = document.createElement('div');
  row.className = 'field';
  const label = document.createElement('label');
  label.htmlFor = id;
  text(label, name);
  input.id = id;
  row.append(label, input);
  if (hint) {
    const note = document.createElement('p');
    note.className = 'hint';
    note.id = `${id}-hint`;
    text(note, hint);
    input.setAttribute('aria-describedby', note.id);
    row.append(note);
  }
  return row;
}

/// A row of a list edited on the Settings page (a cap, a folder's speed): a labelled group with
/// its Remove button last (`removeLabel` for assistive technology). The caller appends its fields
/// before the button.
export function editRow(label, removeLabel) {
  const row = document.createElement('div');
  row.className = 'cap-row';
  row.setAttribute('role', 'group');
  row.setAttribute('aria-label', label);
  const remove = document.createElement('button');
  remove.type = 'button';
  text(remove, 'Remove');
  remove.setAttribute('aria-label', removeLabel);
  remove.addEventListener('click', () => row.remove());
  return { row, remove };
}
