import '../apps.css';
import {
  base64Of,
  connectToHost,
  contentUrl,
  extensionOf,
  files,
  h,
  loadStrings,
  requestExport,
  t,
  type AppSession,
  type FileInfo,
} from '../sdk.ts';

const FORMATS: Array<[string, string]> = [
  ['jpeg', 'jpg'],
  ['png', 'png'],
  ['webp', 'webp'],
  ['avif', 'avif'],
];

let session: AppSession | null = null;

const nameEl = h('span', { class: 'name', 'data-testid': 'converter-name' });
const preview = h('img', { alt: '', style: 'max-width:240px;max-height:240px;image-orientation:from-image' });
const format = h('select', { 'data-testid': 'converter-format' });
const maxSide = h('input', { type: 'number', min: '1', max: '16384', 'data-testid': 'converter-max-side' });
const quality = h('input', { type: 'number', min: '1', max: '100', value: '82' });
const newName = h('input', { required: '', 'data-testid': 'converter-new-name' });
const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'converter-submit' });
const status = h('p', { role: 'status', 'data-testid': 'converter-status' });
const exportBtn = h('button', { type: 'button', hidden: '', 'data-testid': 'converter-export' });
/** The last picture made, which Export hands to the host's Export to dialog. */
let made: FileInfo | null = null;

function suggestName(): void {
  const file = session?.files.find((f) => f.file_id === session?.currentFileId);
  if (!file) return;
  const ext = FORMATS.find(([f]) => f === format.value)?.[1] ?? format.value;
  const base = extensionOf(file.name) ? file.name.slice(0, file.name.lastIndexOf('.')) : file.name;
  newName.value = `${base}${maxSide.value ? `-${maxSide.value}` : ''}.${ext}`;
}

async function main(): Promise<void> {
  await loadStrings();
  for (const [value] of FORMATS) format.append(h('option', { value }, value.toUpperCase()));
  format.value = 'webp';
  submit.textContent = t('converter.convert');
  submit.disabled = true;
  format.onchange = suggestName;
  maxSide.oninput = suggestName;
  const form = h(
    'form',
    { class: 'convert' },
    h('label', {}, t('converter.format')),
    format,
    h('label', {}, t('converter.maxSide')),
    maxSide,
    h('label', {}, t('converter.quality')),
    quality,
    h('label', {}, t('converter.name')),
    newName,
    h('span'),
    submit,
  );
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!session) return;
    submit.disabled = true;
    status.className = '';
    status.textContent = t('loading');
    try {
      made = await files.convert(session, session.currentFileId, {
        format: format.value,
        ...(maxSide.value ? { max_side: Number(maxSide.value) } : {}),
        quality: Number(quality.value) || 82,
        name: newName.value.trim(),
      });
      status.textContent = t('converter.done', { name: made.name });
      exportBtn.hidden = false;
    } catch (err) {
      status.className = 'error';
      status.textContent = err instanceof Error ? err.message : String(err);
    }
    submit.disabled = false;
  };
  exportBtn.textContent = t('converter.export');
  exportBtn.onclick = async () => {
    if (!session || !made) return;
    requestExport({ filename: made.name, size: made.size, base64_data: await base64Of(session, made.file_id) });
  };
  document.body.append(
    h('header', { class: 'bar' }, nameEl),
    h(
      'main',
      { class: 'stage' },
      h('div', { style: 'display:flex;gap:16px;flex-wrap:wrap;padding:16px' }, preview, form),
      status,
      h('div', { style: 'padding:0 16px' }, exportBtn),
    ),
  );
  status.style.padding = '0 16px';
  connectToHost({
    onFiles(s) {
      session = s;
      const file = s.files.find((f) => f.file_id === s.currentFileId) ?? s.files[0];
      if (!file) return;
      nameEl.textContent = file.name;
      preview.src = contentUrl(s, file.file_id);
      submit.disabled = !file.writable;
      suggestName();
    },
    onLogout() {
      session = null;
      submit.disabled = true;
    },
  });
}

void main();
