import { afterEach, describe, expect, it } from 'vitest';
import { browserDownload } from './browser-download.ts';

const frame = () => document.querySelector<HTMLIFrameElement>('iframe');
const nonceOf = (f: HTMLIFrameElement) => new URL(f.src).searchParams.get('notify') ?? '';

/** What the browser does with the frame's navigation: the server's error page, as JSON. */
function answerWithPage(f: HTMLIFrameElement, text: string) {
  const doc = f.contentDocument;
  if (!doc) throw new Error('the frame has no document');
  // jsdom does not navigate frames: the page is written into its empty document.
  const root = doc.documentElement ?? doc.appendChild(doc.createElement('html'));
  const body = doc.body ?? root.appendChild(doc.createElement('body'));
  body.textContent = text;
  f.dispatchEvent(new Event('load'));
}

afterEach(() => {
  for (const f of document.querySelectorAll('iframe')) f.remove();
});

describe("the browser's download of a link", () => {
  it('asks the server to say when it begins, in a hidden frame', async () => {
    const outcome = browserDownload('/api/cloud-manager/files?link=abc', {
      fallbackReason: 'did not start',
      pollMs: 10,
    });
    const f = frame();
    expect(f?.style.display).toBe('none');
    const url = new URL(f?.src ?? '');
    expect(url.pathname).toBe('/api/cloud-manager/files');
    expect(url.searchParams.get('link')).toBe('abc');
    expect(nonceOf(f as HTMLIFrameElement)).toMatch(/^[a-z0-9]{24}$/);
    // The server's answer began: it set the cookie the link asked for, to the download's size.
    document.cookie = `sf-dl-${nonceOf(f as HTMLIFrameElement)}=7340032; Path=/`;
    expect(await outcome).toEqual({ started: true, size: 7340032 });
    expect(document.cookie).not.toContain('sf-dl-');
  });

  it("fails with the server's message when the server answers an error (404) instead of the file", async () => {
    const outcome = browserDownload('/api/cloud-manager/files?link=abc', { fallbackReason: 'did not start' });
    const f = frame() as HTMLIFrameElement;
    // An empty document before the navigation answers is not an answer.
    f.dispatchEvent(new Event('load'));
    answerWithPage(f, JSON.stringify({ code: 404, msg: 'The path does not exist.', data: null }));
    expect(await outcome).toEqual({ started: false, reason: 'The path does not exist.' });
    expect(frame()).toBeNull();
  });

  it('fails with the fallback reason for a page that is no envelope, or when nothing happens in time', async () => {
    const page = browserDownload('/x?link=1', { fallbackReason: 'did not start' });
    answerWithPage(frame() as HTMLIFrameElement, 'Bad gateway');
    expect(await page).toEqual({ started: false, reason: 'did not start' });
    const silent = browserDownload('/x?link=2', { fallbackReason: 'did not start', timeoutMs: 30 });
    expect(await silent).toEqual({ started: false, reason: 'did not start' });
  });
});
