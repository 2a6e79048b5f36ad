/**
 * Splits a multipart body (RFC 2046: `multipart/related` as Google's multipart upload uses,
 * `multipart/form-data` as Box's upload uses) into parts with their headers.
 */
export interface Part {
  headers: Record<string, string>;
  body: Buffer;
  /** From Content-Disposition: name="..." and filename="...". */
  name?: string;
  filename?: string;
}

export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return parts;
  for (;;) {
    pos += delimiter.length;
    // "--" after a delimiter closes the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break;
    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) pos += 2;
    const next = body.indexOf(delimiter, pos);
    if (next < 0) break;
    let end = next;
    if (body[end - 2] === 0x0d && body[end - 1] === 0x0a) end -= 2;
    const chunk = body.subarray(pos, end);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    const rawHeaders = headerEnd >= 0 ? chunk.subarray(0, headerEnd).toString('utf8') : '';
    const partBody = headerEnd >= 0 ? chunk.subarray(headerEnd + 4) : chunk;
    const headers: Record<string, string> = {};
    for (const line of rawHeaders.split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const part: Part = { headers, body: partBody };
    const disposition = headers['content-disposition'];
    if (disposition) {
      const name = /\bname="([^"]*)"/i.exec(disposition);
      const filename = /\bfilename="([^"]*)"/i.exec(disposition);
      if (name) part.name = name[1];
      if (filename) part.filename = filename[1];
    }
    parts.push(part);
    pos = next;
  }
  return parts;
}
