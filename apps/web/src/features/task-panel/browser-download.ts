/** How the browser's download of a link went. */
export type DownloadOutcome = { started: true } | { started: false; reason: string };

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
 * (`notify`); when it answers an error instead (the file is gone, the link expired), the frame
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
    const began = () => document.cookie.split('; ').some((c) => c.startsWith(`${cookie}=`));
    const onLoad = () => {
      if (began()) return finish({ started: true });
      const text = frameText(frame);
      // The empty document a frame holds before its navigation answers.
      if (text === '') return;
      finish({ started: false, reason: (text && envelopeMessage(text)) || options.fallbackReason });
    };
    const onAbort = () => finish({ started: false, reason: options.fallbackReason });
    const poll = setInterval(() => {
      if (began()) finish({ started: true });
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
