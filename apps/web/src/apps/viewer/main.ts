import 'highlight.js/styles/github.css';
import '../apps.css';
import {
  connectToHost,
  contentUrl,
  extensionOf,
  files,
  h,
  loadStrings,
  pictureUrl,
  renderMarkdown,
  t,
  type AppSession,
} from '../sdk.ts';

/** Text larger than this is shown from its start only (one range request, never the whole file). */
const TEXT_LIMIT = 2 * 1024 * 1024;
const PICTURES = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'bmp', 'ico', 'heic', 'heif']);
/** Pictures browsers cannot decode: the server sends them as JPEG. */
const DECODED_BY_SERVER = new Set(['heic', 'heif']);
const MEDIA = new Set(['mp3', 'wav', 'ogg', 'oga', 'flac', 'm4a', 'aac', 'opus', 'mp4', 'm4v', 'webm', 'ogv', 'mov']);
const AUDIO = new Set(['mp3', 'wav', 'ogg', 'oga', 'flac', 'm4a', 'aac', 'opus']);

let session: AppSession | null = null;
let index = 0;
/** Undoes what the current file's view set up (a PDF document, key handlers). */
let cleanup: () => void = () => undefined;

const nameEl = h('span', { class: 'name', 'data-testid': 'viewer-name' });
const prevBtn = h('button', { type: 'button', 'data-testid': 'viewer-prev' });
const nextBtn = h('button', { type: 'button', 'data-testid': 'viewer-next' });
const tools = h('span', { style: 'display:flex;gap:6px;align-items:center' });
const stage = h('main', { class: 'stage', 'data-testid': 'viewer-stage' });

function message(text: string, error = false): void {
  stage.replaceChildren(h('div', { class: 'center' }, h('p', { class: error ? 'message error' : 'message' }, text)));
}

function show(i: number): void {
  if (!session) return;
  const count = session.files.length;
  index = ((i % count) + count) % count;
  const file = session.files[index];
  if (!file) return;
  cleanup();
  cleanup = () => undefined;
  tools.replaceChildren();
  nameEl.textContent = file.name;
  prevBtn.disabled = count < 2;
  nextBtn.disabled = count < 2;
  const ext = extensionOf(file.name);
  stage.dataset.kind = '';
  const s = session;
  const render = PICTURES.has(ext) ? showPicture : ext === 'pdf' ? showPdf : MEDIA.has(ext) ? showMedia : showText;
  render(s, file.file_id, ext).catch((err: unknown) => {
    console.error(err);
    message(t('viewer.failed'), true);
  });
}

async function showPicture(s: AppSession, fileId: string, ext: string): Promise<void> {
  stage.dataset.kind = 'picture';
  const img = h('img', { class: 'picture fit', alt: '', 'data-testid': 'viewer-picture' });
  let zoom = 1;
  const apply = () => {
    img.classList.toggle('fit', zoom === 1);
    img.style.transform = zoom === 1 ? '' : `scale(${zoom})`;
    zoomLabel.textContent = `${Math.round(zoom * 100)}%`;
  };
  const zoomLabel = h('span', { 'data-testid': 'viewer-zoom' }, '100%');
  const zoomOut = h('button', { type: 'button', 'aria-label': t('viewer.zoomOut') }, '−');
  const zoomIn = h(
    'button',
    { type: 'button', 'aria-label': t('viewer.zoomIn'), 'data-testid': 'viewer-zoom-in' },
    '+',
  );
  const fit = h('button', { type: 'button' }, t('viewer.fit'));
  zoomOut.onclick = () => ((zoom = Math.max(0.1, zoom / 1.25)), apply());
  zoomIn.onclick = () => ((zoom = Math.min(10, zoom * 1.25)), apply());
  fit.onclick = () => ((zoom = 1), apply());
  tools.append(zoomOut, zoomLabel, zoomIn, fit);
  img.onerror = () => message(t('viewer.unsupported'), true);
  img.src = DECODED_BY_SERVER.has(ext) ? pictureUrl(s, fileId) : contentUrl(s, fileId);
  stage.replaceChildren(h('div', { class: 'center' }, img));
}

async function showMedia(s: AppSession, fileId: string, ext: string): Promise<void> {
  stage.dataset.kind = 'media';
  // The browser streams with HTTP ranges: playing and seeking fetch only what they need.
  const el = h(AUDIO.has(ext) ? 'audio' : 'video', {
    class: 'media',
    controls: '',
    preload: 'metadata',
    'data-testid': 'viewer-media',
  });
  el.onerror = () => message(t('viewer.unsupported'), true);
  el.src = contentUrl(s, fileId);
  stage.replaceChildren(h('div', { class: 'center' }, el));
  cleanup = () => {
    el.pause();
    el.removeAttribute('src');
    el.load();
  };
}

async function showPdf(s: AppSession, fileId: string): Promise<void> {
  stage.dataset.kind = 'pdf';
  message(t('loading'));
  const pdfjs = await import('pdfjs-dist');
  const worker = await import('pdfjs-dist/build/pdf.worker.min.mjs?url');
  pdfjs.GlobalWorkerOptions.workerSrc = worker.default;
  // Ranges only: a long PDF's first page shows before the rest is fetched.
  const loading = pdfjs.getDocument({
    url: contentUrl(s, fileId),
    disableAutoFetch: true,
    disableStream: true,
    rangeChunkSize: 256 * 1024,
  });
  const doc = await loading.promise;
  let page = 1;
  const label = h('span', { 'data-testid': 'viewer-page' });
  const prev = h('button', { type: 'button', 'aria-label': t('viewer.previous') }, '‹');
  const next = h('button', { type: 'button', 'aria-label': t('viewer.next') }, '›');
  const canvas = h('canvas', { class: 'page', 'data-testid': 'viewer-pdf-page' });
  let task: { cancel(): void } | null = null;
  const draw = async () => {
    label.textContent = t('viewer.page', { page, pages: doc.numPages });
    prev.disabled = page <= 1;
    next.disabled = page >= doc.numPages;
    const p = await doc.getPage(page);
    const width = Math.max(320, stage.clientWidth - 40);
    const base = p.getViewport({ scale: 1 });
    const viewport = p.getViewport({ scale: (width / base.width) * (window.devicePixelRatio || 1) });
    canvas.width = viewport.width;
    canvas.height = viewport.height;
    canvas.style.width = `${viewport.width / (window.devicePixelRatio || 1)}px`;
    task?.cancel();
    const render = p.render({ canvas, viewport });
    task = render;
    await render.promise.catch(() => undefined);
    canvas.dataset.rendered = String(page);
  };
  prev.onclick = () => void (page > 1 && ((page -= 1), draw()));
  next.onclick = () => void (page < doc.numPages && ((page += 1), draw()));
  tools.append(prev, label, next);
  stage.replaceChildren(canvas);
  await draw();
  cleanup = () => {
    task?.cancel();
    void loading.destroy();
  };
}

async function showText(s: AppSession, fileId: string, ext: string): Promise<void> {
  stage.dataset.kind = 'text';
  message(t('loading'));
  const { text, truncated } = await files.text(s, fileId, TEXT_LIMIT);
  const parts: Node[] = [];
  if (truncated) parts.push(h('p', { class: 'message' }, t('viewer.tooLarge')));
  if (ext === 'md' || ext === 'markdown') {
    const div = h('article', { class: 'markdown', 'data-testid': 'viewer-markdown' });
    div.innerHTML = await renderMarkdown(text);
    parts.push(div);
  } else {
    const { default: hljs } = await import('highlight.js/lib/common');
    const code = h('code', {});
    const language = hljs.getLanguage(ext) ? ext : undefined;
    const result = language ? hljs.highlight(text, { language }) : hljs.highlightAuto(text.slice(0, 200_000));
    code.innerHTML = result.value;
    code.className = `hljs language-${result.language ?? 'plaintext'}`;
    parts.push(h('pre', { class: 'code', 'data-testid': 'viewer-code' }, code));
  }
  stage.replaceChildren(...parts);
}

async function main(): Promise<void> {
  await loadStrings();
  prevBtn.textContent = t('viewer.previous');
  nextBtn.textContent = t('viewer.next');
  prevBtn.onclick = () => show(index - 1);
  nextBtn.onclick = () => show(index + 1);
  document.body.append(h('header', { class: 'bar' }, prevBtn, nextBtn, nameEl, tools), stage);
  message(t('viewer.waiting'));
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || stage.dataset.kind === 'media') return;
    if (e.key === 'ArrowLeft') show(index - 1);
    if (e.key === 'ArrowRight') show(index + 1);
  });
  connectToHost({
    onFiles(s) {
      session = s;
      show(
        Math.max(
          0,
          s.files.findIndex((f) => f.file_id === s.currentFileId),
        ),
      );
    },
    onLogout() {
      // The host signed out: the token ended with the session; nothing more is shown.
      session = null;
      cleanup();
      message(t('viewer.waiting'));
    },
  });
}

void main();
