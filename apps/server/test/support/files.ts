import { request as httpRequest } from 'node:http';
import type { FileItem, ListFilesData } from '@skyferry/contract';

/** A small client of the file calls over real HTTP, for tests. */
export interface Reply<T> {
  status: number;
  code: number;
  msg: string;
  data: T;
}

export class FileClient {
  readonly base: string;
  readonly headers: Record<string, string>;
  constructor(base: string, headers: Record<string, string>) {
    this.base = base;
    this.headers = headers;
  }
  async call<T>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const res = await fetch(this.base + path, {
      method,
      headers: { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { code: number; msg: string; data: T };
    return { status: res.status, ...json };
  }
  async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.call<T>(method, path, body);
    if (r.code !== 0) throw new Error(`${method} ${path}: ${r.status} ${r.code} ${r.msg}`);
    return r.data;
  }
  async listAll(cloudId: string, path: string, pageSize?: number, refresh?: boolean): Promise<FileItem[]> {
    const items: FileItem[] = [];
    let token: string | null = null;
    do {
      const page: ListFilesData = await this.ok<ListFilesData>('POST', '/api/cloud-manager/list', {
        cloud_id: cloudId,
        path,
        page_token: token,
        page_size: pageSize,
        refresh,
      });
      items.push(...page.items);
      token = page.page_token;
    } while (token);
    return items;
  }
  async put(cloudId: string, path: string, data: Buffer, extra = ''): Promise<Reply<FileItem>> {
    const res = await fetch(
      `${this.base}/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent(path)}${extra}`,
      { method: 'PUT', headers: { ...this.headers, 'content-type': 'application/octet-stream' }, body: data },
    );
    return { status: res.status, ...((await res.json()) as { code: number; msg: string; data: FileItem }) };
  }
  async get(cloudId: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${this.base}/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent(path)}`, {
      headers: { ...this.headers, ...headers },
    });
  }
  /** Sends the first `sendBytes` of a part and drops the connection. */
  dropMidPart(uploadId: string, offset: number, part: Buffer, sendBytes: number): Promise<void> {
    const url = new URL(`${this.base}/api/cloud-manager/uploads/${uploadId}?offset=${offset}`);
    return new Promise((resolve) => {
      const req = httpRequest(url, {
        method: 'PUT',
        headers: { ...this.headers, 'content-type': 'application/octet-stream', 'content-length': String(part.length) },
      });
      req.on('error', () => resolve());
      req.write(part.subarray(0, sendBytes), () => {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 100);
      });
    });
  }
  async putPart(uploadId: string, offset: number, part: Buffer): Promise<Reply<{ offset: number }>> {
    const res = await fetch(`${this.base}/api/cloud-manager/uploads/${uploadId}?offset=${offset}`, {
      method: 'PUT',
      headers: { ...this.headers, 'content-type': 'application/octet-stream' },
      body: part,
    });
    return { status: res.status, ...((await res.json()) as { code: number; msg: string; data: { offset: number } }) };
  }
}
