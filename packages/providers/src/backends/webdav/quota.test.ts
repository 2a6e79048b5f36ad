import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseQuota } from './propfind.ts';
import { openWebdav } from './webdav.ts';

// RFC 4331 (quota-available-bytes, quota-used-bytes). None of the WebDAV servers installable here
// reports them (Apache mod_dav_fs and rclone serve webdav 1.60 do not), so the
// backend's side is checked against the RFC's own example answer and a minimal server giving it.

const MULTISTATUS = (props: string, status = 'HTTP/1.1 200 OK') =>
  '<?xml version="1.0" encoding="utf-8"?>' +
  '<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/</D:href>' +
  `<D:propstat><D:prop>${props}</D:prop><D:status>${status}</D:status></D:propstat>` +
  '</D:response></D:multistatus>';

/** RFC 4331 section 6, the example response. */
const RFC_EXAMPLE = MULTISTATUS(
  '<D:quota-available-bytes>596650</D:quota-available-bytes><D:quota-used-bytes>403350</D:quota-used-bytes>',
);

describe('webdav RFC 4331 quota', () => {
  it('reads the available and used bytes of a PROPFIND answer', () => {
    expect(parseQuota(RFC_EXAMPLE)).toEqual({ available: 596650, used: 403350 });
  });

  it('ignores props the server says it lacks, and negative "unknown/unlimited" values (ownCloud)', () => {
    const missing = MULTISTATUS('<D:quota-available-bytes/><D:quota-used-bytes/>', 'HTTP/1.1 404 Not Found');
    expect(parseQuota(missing)).toEqual({});
    const unlimited = MULTISTATUS(
      '<D:quota-available-bytes>-3</D:quota-available-bytes><D:quota-used-bytes>1234</D:quota-used-bytes>',
    );
    expect(parseQuota(unlimited)).toEqual({ used: 1234 });
  });

  describe('about() of a server that reports quota', () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      server = undefined;
    });

    async function serve(quotaAnswer: string): Promise<string> {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          if (req.method !== 'PROPFIND' || req.url !== '/dav/') {
            res.writeHead(404).end();
            return;
          }
          const xml = body.includes('quota-available-bytes')
            ? quotaAnswer
            : MULTISTATUS('<D:resourcetype><D:collection/></D:resourcetype>');
          res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' }).end(xml);
        });
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/dav/`;
    }

    it('offers about() with total, used and free', async () => {
      const dav = await openWebdav({ url: await serve(RFC_EXAMPLE), username: 'u', password: 'p' });
      try {
        expect(dav.features.about).toBe(true);
        expect(await dav.about?.()).toEqual({ used: 403350, free: 596650, total: 1_000_000 });
      } finally {
        await dav.close();
      }
    });

    it('offers no about() when the server reports no quota', async () => {
      const dav = await openWebdav({
        url: await serve(MULTISTATUS('<D:quota-available-bytes/>', 'HTTP/1.1 404 Not Found')),
        username: 'u',
        password: 'p',
      });
      try {
        expect(dav.features.about).toBe(false);
        expect(dav.about).toBeUndefined();
      } finally {
        await dav.close();
      }
    });
  });
});
