/**
 * The part of the Drive `q` search language the emulator understands, from
 * "Search for files and folders", https://developers.google.com/drive/api/guides/search-files and
 * "Search query terms and operators", https://developers.google.com/drive/api/guides/ref-search-terms:
 * `'<id>' in parents`, `name = | != | contains '<text>'`, `mimeType = | != '<type>'`,
 * `trashed = true|false`, `sharedWithMe [= true|false]`, combined with `and`, `or`, `not` and
 * parentheses. Strings escape `'` and `\` with a backslash. As the guide notes, `name =` compares
 * without regard to case.
 */

export interface QueryFile {
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
  sharedWithMe: boolean;
}

export type Predicate = (f: QueryFile) => boolean;

export class QueryError extends Error {}

type Token = { t: 'str'; v: string } | { t: 'word'; v: string } | { t: 'op'; v: string } | { t: 'paren'; v: '(' | ')' };

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'") {
      let s = '';
      i++;
      while (i < q.length && q[i] !== "'") {
        if (q[i] === '\\' && i + 1 < q.length) {
          s += q[i + 1];
          i += 2;
        } else {
          s += q[i];
          i++;
        }
      }
      if (q[i] !== "'") throw new QueryError('unterminated string');
      i++;
      out.push({ t: 'str', v: s });
    } else if (c === '(' || c === ')') {
      out.push({ t: 'paren', v: c });
      i++;
    } else if (c === '!' && q[i + 1] === '=') {
      out.push({ t: 'op', v: '!=' });
      i += 2;
    } else if (c === '=') {
      out.push({ t: 'op', v: '=' });
      i++;
    } else {
      let w = '';
      while (i < q.length && /[A-Za-z0-9_.]/.test(q[i]!)) w += q[i++];
      if (!w) throw new QueryError(`unexpected character ${c}`);
      out.push({ t: 'word', v: w });
    }
  }
  return out;
}

export function parseQuery(q: string): Predicate {
  const tokens = tokenize(q);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const isWord = (v: string) => {
    const t = peek();
    return t?.t === 'word' && t.v.toLowerCase() === v;
  };

  const bool = (): boolean => {
    const t = next();
    if (t?.t !== 'word' || (t.v !== 'true' && t.v !== 'false')) throw new QueryError('expected true or false');
    return t.v === 'true';
  };

  const term = (): Predicate => {
    const t = peek();
    if (t?.t === 'paren' && t.v === '(') {
      next();
      const inner = orExpr();
      const close = next();
      if (close?.t !== 'paren' || close.v !== ')') throw new QueryError('expected )');
      return inner;
    }
    if (isWord('not')) {
      next();
      const inner = term();
      return (f) => !inner(f);
    }
    if (t?.t === 'str') {
      next();
      if (!isWord('in')) throw new QueryError('expected in');
      next();
      const field = next();
      if (field?.t !== 'word' || field.v !== 'parents') throw new QueryError('only "in parents" is supported');
      const id = t.v;
      return (f) => f.parents.includes(id);
    }
    if (t?.t !== 'word') throw new QueryError('expected a field');
    next();
    const field = t.v;
    if (field === 'sharedWithMe') {
      const op = peek();
      if (op?.t === 'op') {
        next();
        const want = bool();
        return op.v === '=' ? (f) => f.sharedWithMe === want : (f) => f.sharedWithMe !== want;
      }
      return (f) => f.sharedWithMe;
    }
    if (field === 'trashed') {
      const op = next();
      if (op?.t !== 'op') throw new QueryError('expected = or !=');
      const want = bool();
      return op.v === '=' ? (f) => f.trashed === want : (f) => f.trashed !== want;
    }
    if (field === 'name' || field === 'mimeType') {
      const op = next();
      let operator: string;
      if (op?.t === 'op') operator = op.v;
      else if (op?.t === 'word' && op.v === 'contains') operator = 'contains';
      else throw new QueryError('expected an operator');
      const value = next();
      if (value?.t !== 'str') throw new QueryError('expected a string');
      const get = (f: QueryFile) => (field === 'name' ? f.name : f.mimeType);
      const fold = (s: string) => (field === 'name' ? s.toLowerCase() : s);
      const v = fold(value.v);
      if (operator === '=') return (f) => fold(get(f)) === v;
      if (operator === '!=') return (f) => fold(get(f)) !== v;
      return (f) => fold(get(f)).includes(v);
    }
    throw new QueryError(`unsupported field ${field}`);
  };

  const andExpr = (): Predicate => {
    let left = term();
    while (isWord('and')) {
      next();
      const right = term();
      const l = left;
      left = (f) => l(f) && right(f);
    }
    return left;
  };

  const orExpr = (): Predicate => {
    let left = andExpr();
    while (isWord('or')) {
      next();
      const right = andExpr();
      const l = left;
      left = (f) => l(f) || right(f);
    }
    return left;
  };

  const predicate = orExpr();
  if (pos !== tokens.length) throw new QueryError('unexpected trailing input');
  return predicate;
}
