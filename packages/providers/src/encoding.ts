/**
 * Reversible encoding of names a service cannot store (after the idea of rclone's lib/encoder, own code).
 *
 * `encode` turns a Skyferry name into one the service accepts: each forbidden character becomes a
 * look-alike Unicode character (printable ASCII to its FULLWIDTH form, control characters to the
 * SYMBOL FOR block, space to '␠', DEL to '␡'). A character in the original name that is itself such a
 * look-alike is prefixed with the quote '‛' so that `decode` (service name -> Skyferry name) can tell
 * the two apart: decode(encode(x)) === x for every x.
 *
 * A service that allows '/' inside names (Google Drive) uses `new NameEncoder(['slash'])` the other way
 * round: its `encode` makes a service name fit in a Skyferry path, its `decode` gives the service name back.
 */
export type EncodeRule =
  | 'zero' // NUL
  | 'slash' // /
  | 'backslash' // \
  | 'colon' // :
  | 'win' // < > : " | ? *  (Windows-reserved)
  | 'lt'
  | 'gt'
  | 'doubleQuote'
  | 'singleQuote'
  | 'question'
  | 'asterisk'
  | 'pipe'
  | 'hash'
  | 'percent'
  | 'dollar'
  | 'ctl' // 0x01-0x1F
  | 'del' // 0x7F
  | 'dot' // names that are exactly "." or ".."
  | 'leftSpace'
  | 'rightSpace'
  | 'leftTilde'
  | 'leftPeriod'
  | 'rightPeriod'
  | 'leftCrLfHtVt'
  | 'rightCrLfHtVt';

const QUOTE = '\u201B'; // ‛ SINGLE HIGH-REVERSED-9 QUOTATION MARK

const CHARS_OF_RULE: Partial<Record<EncodeRule, string>> = {
  slash: '/',
  backslash: '\\',
  colon: ':',
  win: '<>:"|?*',
  lt: '<',
  gt: '>',
  doubleQuote: '"',
  singleQuote: "'",
  question: '?',
  asterisk: '*',
  pipe: '|',
  hash: '#',
  percent: '%',
  dollar: '$',
  del: '\x7F',
  zero: '\0',
};

const CTL = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const CRLFHTVT = '\r\n\t\v';

/** The look-alike of one character. */
function replacementOf(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c === 0x20) return '\u2420'; // ␠
  if (c === 0x7f) return '\u2421'; // ␡
  if (c < 0x20) return String.fromCharCode(0x2400 + c); // ␀ .. ␟
  if (c > 0x20 && c < 0x7f) return String.fromCharCode(c + 0xfee0); // FULLWIDTH
  throw new Error(`no replacement for ${JSON.stringify(ch)}`);
}

export class NameEncoder {
  readonly rules: ReadonlySet<EncodeRule>;
  private readonly anywhere = new Set<string>();
  private readonly left = new Set<string>();
  private readonly right = new Set<string>();
  /** Replacement -> original, for every character some rule can replace. */
  private readonly reverse = new Map<string, string>();

  constructor(rules: Iterable<EncodeRule>) {
    this.rules = new Set(rules);
    for (const rule of this.rules) {
      const chars = rule === 'ctl' ? CTL : CHARS_OF_RULE[rule];
      if (chars) for (const ch of chars) this.anywhere.add(ch);
    }
    if (this.rules.has('leftSpace')) this.left.add(' ');
    if (this.rules.has('rightSpace')) this.right.add(' ');
    if (this.rules.has('leftTilde')) this.left.add('~');
    if (this.rules.has('leftPeriod')) this.left.add('.');
    if (this.rules.has('rightPeriod')) this.right.add('.');
    if (this.rules.has('leftCrLfHtVt')) for (const ch of CRLFHTVT) this.left.add(ch);
    if (this.rules.has('rightCrLfHtVt')) for (const ch of CRLFHTVT) this.right.add(ch);
    if (this.rules.has('dot')) this.reverse.set(replacementOf('.'), '.');
    for (const ch of [...this.anywhere, ...this.left, ...this.right]) this.reverse.set(replacementOf(ch), ch);
  }

  private isSpecial(ch: string): boolean {
    return ch === QUOTE || this.reverse.has(ch);
  }

  /** Skyferry name -> service name. */
  encode(name: string): string {
    if (this.rules.has('dot') && (name === '.' || name === '..')) return replacementOf('.').repeat(name.length);
    const chars = [...name];
    const out: string[] = [];
    chars.forEach((ch, i) => {
      const mustReplace =
        this.anywhere.has(ch) || (i === 0 && this.left.has(ch)) || (i === chars.length - 1 && this.right.has(ch));
      if (mustReplace) out.push(replacementOf(ch));
      else if (ch !== QUOTE && this.reverse.has(ch)) out.push(QUOTE + ch);
      else out.push(ch);
    });
    // A literal quote is doubled only where it would otherwise quote what follows it.
    for (let i = 0; i < out.length; i++) {
      if (chars[i] === QUOTE) {
        const next = out[i + 1];
        if (next !== undefined && this.isSpecial(next[0] as string)) out[i] = QUOTE + QUOTE;
      }
    }
    return out.join('');
  }

  /** Service name -> Skyferry name. */
  decode(name: string): string {
    const chars = [...name];
    let out = '';
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i] as string;
      const next = chars[i + 1];
      if (ch === QUOTE && next !== undefined && this.isSpecial(next)) {
        out += next;
        i++;
      } else {
        out += this.reverse.get(ch) ?? ch;
      }
    }
    return out;
  }

  /** Encodes each segment of a "/a/b" path. */
  encodePath(path: string): string {
    return path
      .split('/')
      .map((s) => (s === '' ? s : this.encode(s)))
      .join('/');
  }

  decodePath(path: string): string {
    return path
      .split('/')
      .map((s) => (s === '' ? s : this.decode(s)))
      .join('/');
  }
}

/** Rule sets for the services Skyferry talks to (what each service refuses or mangles in names). */
export const ENCODINGS = {
  /** Nothing to encode. */
  none: [] as EncodeRule[],
  /** S3 keys take any UTF-8; "." and ".." segments would not round-trip through paths. */
  s3: ['dot'] as EncodeRule[],
  webdav: ['dot', 'ctl', 'del'] as EncodeRule[],
  sftp: ['dot', 'ctl', 'del'] as EncodeRule[],
  ftp: ['dot', 'ctl', 'del', 'rightSpace', 'leftSpace'] as EncodeRule[],
  /** Folder names of Windows disks (the desktop app) and SMB-backed servers. */
  windows: ['dot', 'win', 'backslash', 'ctl', 'del', 'rightSpace', 'rightPeriod'] as EncodeRule[],
  onedrive: [
    'dot',
    'win',
    'backslash',
    'ctl',
    'del',
    'hash',
    'percent',
    'leftSpace',
    'rightSpace',
    'leftTilde',
    'rightPeriod',
  ] as EncodeRule[],
  dropbox: ['dot', 'backslash', 'del', 'rightSpace'] as EncodeRule[],
  box: ['dot', 'backslash', 'ctl', 'del', 'rightSpace'] as EncodeRule[],
  googleDrive: ['dot'] as EncodeRule[],
} as const;
