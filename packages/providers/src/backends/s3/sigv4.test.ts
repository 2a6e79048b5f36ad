import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMPTY_SHA256, SigV4Signer, canonicalQuery, uriEncode } from './sigv4.ts';
import { parseListObjects, xmlDecode } from './client.ts';

/**
 * Known answers from AWS's "Authenticating Requests: Using the Authorization Header (AWS Signature
 * Version 4)" for Amazon S3 (its example credentials, bucket and date).
 */
const signer = new SigV4Signer('AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'us-east-1');
const date = new Date('2013-05-24T00:00:00Z');
const host = 'examplebucket.s3.amazonaws.com';
const signature = (auth: string) => /Signature=([0-9a-f]{64})$/.exec(auth)?.[1];

describe('SigV4 for S3 (AWS documentation examples)', () => {
  it('GET Object with a range', () => {
    const auth = signer.authorization(
      {
        method: 'GET',
        path: '/test.txt',
        query: '',
        headers: { host, range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_SHA256, 'x-amz-date': '20130524T000000Z' },
        payloadHash: EMPTY_SHA256,
      },
      date,
    );
    expect(auth).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('PUT Object with a signed payload, a Date header and an encoded key', () => {
    const payload = createHash('sha256').update('Welcome to Amazon S3.').digest('hex');
    expect(payload).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072');
    const auth = signer.authorization(
      {
        method: 'PUT',
        path: `/${uriEncode('test$file.text', true)}`,
        query: '',
        headers: {
          host,
          date: 'Fri, 24 May 2013 00:00:00 GMT',
          'x-amz-date': '20130524T000000Z',
          'x-amz-storage-class': 'REDUCED_REDUNDANCY',
          'x-amz-content-sha256': payload,
        },
        payloadHash: payload,
      },
      date,
    );
    expect(auth).toContain('SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,');
    expect(signature(auth)).toBe('98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
  });

  it('GET Bucket lifecycle (a query parameter without a value)', () => {
    const auth = signer.authorization(
      {
        method: 'GET',
        path: '/',
        query: canonicalQuery([['lifecycle', '']]),
        headers: { host, 'x-amz-date': '20130524T000000Z', 'x-amz-content-sha256': EMPTY_SHA256 },
        payloadHash: EMPTY_SHA256,
      },
      date,
    );
    expect(signature(auth)).toBe('fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543');
  });

  it('GET Bucket (list objects), parameters sorted by name', () => {
    const auth = signer.authorization(
      {
        method: 'GET',
        path: '/',
        query: canonicalQuery([
          ['prefix', 'J'],
          ['max-keys', '2'],
        ]),
        headers: { host, 'x-amz-date': '20130524T000000Z', 'x-amz-content-sha256': EMPTY_SHA256 },
        payloadHash: EMPTY_SHA256,
      },
      date,
    );
    expect(signature(auth)).toBe('34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7');
  });

  it('encodes paths and query values as RFC 3986 (only unreserved characters stay)', () => {
    expect(uriEncode("a b+c*d~e_f.g-h!i'j(k)l/m", true)).toBe('a%20b%2Bc%2Ad~e_f.g-h%21i%27j%28k%29l/m');
    expect(uriEncode('a/b')).toBe('a%2Fb');
    expect(uriEncode('ünï')).toBe('%C3%BCn%C3%AF');
    expect(
      canonicalQuery([
        ['prefix', 'a b/'],
        ['delimiter', '/'],
        ['list-type', '2'],
      ]),
    ).toBe('delimiter=%2F&list-type=2&prefix=a%20b%2F');
  });
});

describe('S3 XML answers', () => {
  it('parses a ListObjectsV2 page: objects, folders, entities and the continuation token', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>d/</Prefix>
<KeyCount>3</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
<Contents><Key>d/ a &amp; b &lt;1&gt;.txt</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>
<ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>d/0123</Key><LastModified>2024-01-02T03:04:06.000Z</LastModified><ETag>"x-2"</ETag><Size>12345678901</Size></Contents>
<CommonPrefixes><Prefix>d/sub&#x20;dir/</Prefix></CommonPrefixes>
<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>`;
    const r = parseListObjects(xml);
    expect(r.IsTruncated).toBe(true);
    expect(r.NextContinuationToken).toBe('1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=');
    expect(r.CommonPrefixes).toEqual(['d/sub dir/']);
    expect(r.Contents).toEqual([
      {
        Key: 'd/ a & b <1>.txt',
        Size: 1,
        ETag: '"0cc175b9c0f1b6a831c399e269772661"',
        LastModified: new Date('2024-01-02T03:04:05.000Z'),
      },
      { Key: 'd/0123', Size: 12345678901, ETag: '"x-2"', LastModified: new Date('2024-01-02T03:04:06.000Z') },
    ]);
    expect(parseListObjects('<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>')).toEqual({
      Contents: [],
      CommonPrefixes: [],
      IsTruncated: false,
    });
    expect(xmlDecode('&#65;&#x42;&apos;&quot;')).toBe('AB\'"');
  });
});
