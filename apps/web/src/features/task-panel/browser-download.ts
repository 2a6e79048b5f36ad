/** How the browser's download of a link went; a started one says its size in bytes when the server did. */
export type DownloadOutcome = { started: true; size?: number } | { started: false; reason: string };

/** How long a frame stays after its download began (the browser's download manager has it by then). */
const KEEP_FRAME_MS = 5 * 60_000;

function nonce(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The text a frame shows, '' while it has shown nothing yet, undefined when the page may not read it. */
function frameText(frame: HTMLIFrameElement): string | undefined {
  try {
    return frame.contentDocument?.body?.textContent ?? '';
  } catch {
    return undefined;
  }
}

/** The message of an error envelope, or '' for any other text. */
function envelopeMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { code?: unknown; msg?: unknown };
    return parsed.code !== 0 && typeof parsed.msg === 'string' ? parsed.msg : '';
  } catch {
    return '';
  }
}

/**
 * Hands a signed download link to the browser in a hidden frame, and tells whether the download
 * began: when the server starts sending, it sets the cookie `sf-dl-<nonce>` the link asked for
 * (`notify`), its value the download's size in bytes (a zip's exact length); when it answers an error instead (the file is gone, the link expired), the frame
 * shows the error envelope, whose message is the reason. `fallbackReason` is given when neither
 * happens within `timeoutMs`, or the frame shows something else.
 */
export function browserDownload(
  url: string,
  options: { fallbackReason: string; timeoutMs?: number; pollMs?: number; signal?: AbortSignal },
): Promise<DownloadOutcome> {
  const id = nonce();
  const cookie = `sf-dl-${id}`;
  const frame = document.createElement('iframe');
  frame.style.display = 'none';
  frame.setAttribute('aria-hidden', 'true');
  frame.tabIndex = -1;
  frame.src = `${url}${url.includes('?') ? '&' : '?'}notify=${id}`;
  return new Promise<DownloadOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: DownloadOutcome) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(timer);
      frame.removeEventListener('load', onLoad);
      options.signal?.removeEventListener('abort', onAbort);
      document.cookie = `${cookie}=; Max-Age=0; Path=/; SameSite=Strict`;
      if (outcome.started) setTimeout(() => frame.remove(), KEEP_FRAME_MS);
      else frame.remove();
      resolve(outcome);
    };
    /** The cookie's value once the download began (its size in bytes), else undefined. */
    const began = () => {
      const found = document.cookie.split('; ').find((c) => c.startsWith(`${cookie}=`));
      return found === undefined ? undefined : found.slice(cookie.length + 1);
    };
    const startedWith = (value: string): DownloadOutcome => {
      const size = Number(value);
      return Number.isSafeInteger(size) && size >= 0 && value !== '' ? { started: true, size } : { started: true };
    };
    const onLoad = () => {
      const value = began();
      if (value !== undefined) return finish(startedWith(value));
      const text = frameText(frame);
      // The empty document a frame holds before its navigation answers.
      if (text === '') return;
      finish({ started: false, reason: (text && envelopeMessage(text)) || options.fallbackReason });
    };
    const onAbort = () => finish({ started: false, reason: options.fallbackReason });
    const poll = setInterval(() => {
      const value = began();
      if (value !== undefined) finish(startedWith(value));
    }, options.pollMs ?? 200);
    const timer = setTimeout(
      () => finish({ started: false, reason: options.fallbackReason }),
      options.timeoutMs ?? 10 * 60_000,
    );
    frame.addEventListener('load', onLoad);
    options.signal?.addEventListener('abort', onAbort);
    document.body.appendChild(frame);
  });
}
