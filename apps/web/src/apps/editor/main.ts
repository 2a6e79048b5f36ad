import '../apps.css';
import {
  AppCallError,
  connectToHost,
  extensionOf,
  files,
  h,
  loadStrings,
  renderMarkdown,
  t,
  type AppSession,
  type FileInfo,
} from '../sdk.ts';

/** Larger files are not edited here (the whole text is held in the page). */
const EDIT_LIMIT = 5 * 1024 * 1024;
/** The server's code for "the file changed since you read it" (409006). */
const CONFLICT = 409006;

let session: AppSession | null = null;
let info: FileInfo | null = null;
let saved = '';

const nameEl = h('span', { class: 'name', 'data-testid': 'editor-name' });
const saveBtn = h('button', { type: 'button', class: 'primary', 'data-testid': 'editor-save' });
const saveAsBtn = h('button', { type: 'button', 'data-testid': 'editor-save-as' });
const previewBtn = h('button', { type: 'button', 'data-testid': 'editor-preview' });
const area = h('textarea', { class: 'editor', spellcheck: 'false', 'data-testid': 'editor-text', 'aria-label': '' });
const preview = h('article', { class: 'markdown', hidden: '' });
const stage = h('main', { class: 'stage', style: 'display:flex;flex-direction:column' }, area, preview);
const status = h('footer', { class: 'status', role: 'status', 'data-testid': 'editor-status' });
const saveAsForm = h('form', { class: 'bar', hidden: '', 'data-testid': 'editor-save-as-form' });
const saveAsName = h('input', { required: '', 'data-testid': 'editor-save-as-name' });

function setStatus(text: string, error = false): void {
  status.textContent = text;
  status.classList.toggle('error', error);
}

/** Enables Save while the text differs from what was saved; `typed` also says so in the status line. */
function refreshButtons(typed = false): void {
  const dirty = area.value !== saved;
  saveBtn.disabled = !info?.writable || !dirty;
  saveAsBtn.disabled = !info?.writable;
  if (typed && dirty) setStatus(t('editor.unsaved'));
}

async function open(s: AppSession): Promise<void> {
  session = s;
  const fileId = s.currentFileId;
  info = await files.info(s, fileId);
  nameEl.textContent = info.name;
  area.setAttribute('aria-label', info.name);
  const md = ['md', 'markdown'].includes(extensionOf(info.name));
  previewBtn.hidden = !md;
  if (info.size > EDIT_LIMIT) {
    area.value = '';
    area.disabled = true;
    setStatus(t('viewer.tooLarge'), true);
    return;
  }
  const { text } = await files.text(s, fileId, EDIT_LIMIT);
  area.value = saved = text;
  area.disabled = false;
  area.readOnly = !info.writable;
  setStatus(info.writable ? '' : t('editor.readOnly'));
  refreshButtons();
}

async function save(): Promise<void> {
  if (!session || !info) return;
  const text = area.value;
  try {
    info = await files.save(session, info.file_id, text, info.etag);
    saved = text;
    setStatus(t('editor.saved'));
  } catch (err) {
    // Changed elsewhere since it was opened: nothing is overwritten; the user can save as.
    if (err instanceof AppCallError && err.code === CONFLICT) {
      setStatus(t('editor.conflict'), true);
      openSaveAs();
    } else setStatus(err instanceof Error ? err.message : String(err), true);
  }
  refreshButtons();
}

function openSaveAs(): void {
  if (!info) return;
  const dot = info.name.lastIndexOf('.');
  saveAsName.value = dot > 0 ? `${info.name.slice(0, dot)} (2)${info.name.slice(dot)}` : `${info.name} (2)`;
  saveAsForm.hidden = false;
  saveAsName.focus();
}

async function saveAs(name: string): Promise<void> {
  if (!session || !info) return;
  const text = area.value;
  try {
    const created = await files.saveAs(session, info.file_id, name, text);
    info = created;
    saved = text;
    nameEl.textContent = created.name;
    saveAsForm.hidden = true;
    setStatus(t('editor.saved'));
  } catch (err) {
    setStatus(err instanceof Error ? err.message : String(err), true);
  }
  refreshButtons();
}

async function togglePreview(): Promise<void> {
  const showing = !preview.hidden;
  if (showing) {
    preview.hidden = true;
    area.hidden = false;
    previewBtn.textContent = t('editor.preview');
    return;
  }
  preview.innerHTML = await renderMarkdown(area.value);
  preview.hidden = false;
  area.hidden = true;
  previewBtn.textContent = t('editor.edit');
}

async function main(): Promise<void> {
  await loadStrings();
  saveBtn.textContent = t('editor.save');
  saveAsBtn.textContent = t('editor.saveAs');
  previewBtn.textContent = t('editor.preview');
  saveBtn.disabled = saveAsBtn.disabled = true;
  previewBtn.hidden = true;
  saveBtn.onclick = () => void save();
  saveAsBtn.onclick = openSaveAs;
  previewBtn.onclick = () => void togglePreview();
  area.addEventListener('input', () => refreshButtons(true));
  area.disabled = true;
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
      e.preventDefault();
      if (!saveBtn.disabled) void save();
    }
  });
  const cancel = h('button', { type: 'button' }, t('editor.cancel'));
  cancel.onclick = () => (saveAsForm.hidden = true);
  saveAsForm.append(
    h('label', {}, t('editor.newName'), ' ', saveAsName),
    h('button', { type: 'submit', class: 'primary', 'data-testid': 'editor-save-as-submit' }, t('editor.saveAs')),
    cancel,
  );
  saveAsForm.onsubmit = (e) => {
    e.preventDefault();
    void saveAs(saveAsName.value.trim());
  };
  document.body.append(
    h('header', { class: 'bar' }, nameEl, previewBtn, saveAsBtn, saveBtn),
    saveAsForm,
    stage,
    status,
  );
  setStatus(t('viewer.waiting'));
  window.addEventListener('beforeunload', (e) => {
    if (area.value !== saved) e.preventDefault();
  });
  connectToHost({
    onFiles: (s) =>
      void open(s).catch((err: unknown) => setStatus(err instanceof Error ? err.message : String(err), true)),
    onLogout: () => {
      session = null;
      saveBtn.disabled = saveAsBtn.disabled = true;
    },
  });
}

void main();
