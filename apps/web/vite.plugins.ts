import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { HtmlTagDescriptor, Plugin } from 'vite';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Text files worth compressing; source maps are left as they are (only developer tools read them). */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|xml|webmanifest)$/;
const MIN_SIZE = 1024;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]))),
  );
  return nested.flat();
}

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the build, at the highest levels
 * (done once per build, so the server never compresses at request time). A variant that would not
 * be smaller is not written; the server then sends the file as it is.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'skyferry-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const files = (await filesUnder(outDir)).filter((f) => COMPRESSIBLE.test(f));
      await Promise.all(files.map(compressFile));
    },
  };
}

/** Writes `<file>.br` and `<file>.gz` beside one file (not when under 1 KB or when not smaller). */
export async function compressFile(file: string): Promise<void> {
  if ((await stat(file)).size < MIN_SIZE) return;
  const raw = await readFile(file);
  const [br, gz] = await Promise.all([
    brotli(raw, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    }),
    gzipAsync(raw, { level: 9 }),
  ]);
  if (br.length < raw.length) await writeFile(`${file}.br`, br);
  if (gz.length < raw.length) await writeFile(`${file}.gz`, gz);
}

/**
 * index.html preloads the chunk the entry imports dynamically (`module`), with everything it
 * imports statically and its styles, so the browser fetches them in parallel with the entry.
 */
export function preloadDynamicStart(module: string): Plugin {
  let base = '/';
  return {
    name: 'skyferry-preload-start',
    apply: 'build',
    configResolved(config) {
      base = config.base;
    },
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const bundle = ctx.bundle;
        if (!bundle) return html;
        const start = Object.values(bundle).find(
          (c) => c.type === 'chunk' && c.facadeModuleId?.replaceAll('\\', '/').endsWith(module),
        );
        if (!start || start.type !== 'chunk') throw new Error(`preloadDynamicStart: no chunk for ${module}`);
        const scripts: string[] = [];
        const styles: string[] = [];
        // Imports first: a chunk's styles come after those of what it imports (libraries before
        // the app's own rules, as in one bundle).
        const visit = (fileName: string) => {
          const chunk = bundle[fileName];
          if (!chunk || chunk.type !== 'chunk' || scripts.includes(fileName)) return;
          scripts.push(fileName);
          chunk.imports.forEach(visit);
          for (const css of chunk.viteMetadata?.importedCss ?? []) if (!styles.includes(css)) styles.push(css);
        };
        visit(start.fileName);
        const link = (rel: string, injectTo: 'head' | 'body') => (file: string) => ({
          tag: 'link',
          attrs: { rel, crossorigin: true, href: `${base}${file}` },
          injectTo,
        });
        const notInPage = (file: string) => !html.includes(`${base}${file}"`);
        const tags: HtmlTagDescriptor[] = [
          // Styles in the body, after the outline index.html draws: that paints while they load (a
          // stylesheet in the body holds back only what follows it; the scripts wait for it).
          ...styles.filter(notInPage).map(link('stylesheet', 'body')),
          ...scripts.filter(notInPage).map(link('modulepreload', 'head')),
        ];
        return { html, tags };
      },
    },
  };
}

/**
 * Mantine's styles in two parts, `virtual:mantine-first.css` (the components in `first`, which the
 * first paint shows) and `virtual:mantine-rest.css` (all others), each in Mantine's own order and
 * in a cascade layer of its own (`mantine-first`, `mantine-rest`; index.html declares their order
 * first). The first part loads with the page; the rest right after the first paint and before any
 * screen or dialog, so the page waits for 9 KB of styles instead of 30 KB. The layers keep the
 * order right whichever file arrives first, and let the app's own (unlayered) styles win as they
 * did when they came after Mantine's in one file.
 */
export function mantineStyles(first: readonly string[]): Plugin {
  const require = createRequire(import.meta.url);
  const ids = { first: 'virtual:mantine-first.css', rest: 'virtual:mantine-rest.css' } as const;
  const resolved = (id: string) => `\0${id}`;
  const split = (): { first: string; rest: string } => {
    const stylesDir = join(dirname(require.resolve('@mantine/core/styles.css')), 'styles');
    const all = readFileSync(join(stylesDir, '..', 'styles.css'), 'utf8');
    const parts = readdirSync(stylesDir)
      .filter((f) => f.endsWith('.css') && !f.endsWith('.layer.css'))
      .map((file) => ({ name: file.slice(0, -'.css'.length), css: readFileSync(join(stylesDir, file), 'utf8').trim() }))
      // Mantine's styles.css is these files one after another: keep its order.
      .map((part) => ({ ...part, at: all.indexOf(part.css) }))
      .sort((a, b) => a.at - b.at);
    const missing = first.filter((name) => !parts.some((p) => p.name === name));
    if (missing.length > 0) throw new Error(`mantineStyles: no Mantine styles for ${missing.join(', ')}`);
    if (parts.some((p) => p.at < 0)) throw new Error('mantineStyles: styles.css is not its parts in a row any more');
    const layered = (layer: string, keep: (name: string) => boolean) =>
      `@layer ${layer} {\n${parts
        .filter((p) => keep(p.name))
        .map((p) => p.css)
        .join('\n')}\n}\n`;
    return {
      first: layered('mantine-first', (n) => first.includes(n)),
      rest: layered('mantine-rest', (n) => !first.includes(n)),
    };
  };
  return {
    name: 'skyferry-mantine-styles',
    resolveId(id) {
      return id === ids.first || id === ids.rest ? resolved(id) : null;
    },
    load(id) {
      if (id === resolved(ids.first)) return split().first;
      if (id === resolved(ids.rest)) return split().rest;
      return null;
    },
  };
}
