import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Builds the image and checks what is in it. Slow (a full npm ci and web build): it runs only with
 * SKYFERRY_IMAGE_TEST=1 and podman installed. SKYFERRY_IMAGE_BASE names a base image with Node 24 on
 * PATH (default: the Dockerfile's own); docs/operator-guide.md shows how to make one offline with
 * mmdebstrap. Running containers is not needed: the image is mounted and inspected.
 */
const ROOT = join(import.meta.dirname, '..');
const enabled = process.env.SKYFERRY_IMAGE_TEST === '1' && spawnSync('podman', ['--version']).status === 0;
const TAG = 'localhost/skyferry:image-test';

const podman = (...args: string[]) => execFileSync('podman', args, { encoding: 'utf8', maxBuffer: 64 << 20 }).trim();

describe.skipIf(!enabled)('the container image (SKYFERRY_IMAGE_TEST=1)', () => {
  let mount = '';
  afterAll(() => {
    if (mount) spawnSync('podman', ['image', 'unmount', TAG]);
  });

  it('builds, runs as an unprivileged user with a health check, and holds no dev dependencies or tests', () => {
    const base = process.env.SKYFERRY_IMAGE_BASE;
    // The OCI format has no HEALTHCHECK: podman keeps it only in Docker's.
    podman(
      'build',
      '--format',
      'docker',
      '--isolation',
      'chroot',
      ...(base ? ['--build-arg', `BASE=${base}`] : []),
      '-t',
      TAG,
      ROOT,
    );
    const [info] = JSON.parse(podman('image', 'inspect', TAG)) as Array<{
      Size: number;
      Config: {
        User?: string;
        Entrypoint?: string[];
        Cmd?: string[];
        Env?: string[];
      };
      Healthcheck?: { Test?: string[] };
    }>;
    expect(info?.Config.User).toBe('10001:10001');
    expect(info?.Config.Entrypoint).toEqual(['node']);
    expect(info?.Config.Cmd).toEqual(['apps/server/src/main.ts']);
    expect(info?.Config.Env).toContain('SKYFERRY_DATA_DIR=/data');
    expect((info?.Healthcheck?.Test ?? []).join(' ')).toContain('/healthz');
    // The base (Node and Debian) and the production packages: well under a gigabyte.
    expect(info?.Size).toBeLessThan(1024 ** 3);

    mount = podman('image', 'mount', TAG);
    const app = join(mount, 'app');
    const modules = join(app, 'node_modules');
    for (const dev of ['vitest', 'typescript', 'eslint', 'vite', 'prettier', 'electron', 'playwright-core', 's3rver'])
      expect(existsSync(join(modules, dev)), `dev dependency ${dev}`).toBe(false);
    expect(existsSync(join(modules, 'fastify'))).toBe(true);
    expect(existsSync(join(modules, 'prom-client'))).toBe(true);
    const files = readdirSync(app, { recursive: true }) as string[];
    expect(files.filter((f) => !f.startsWith('node_modules') && /\.test\.tsx?$/.test(f))).toEqual([]);
    // The web app is built and pre-compressed.
    const dist = join(app, 'apps/web/dist');
    expect(existsSync(join(dist, 'index.html'))).toBe(true);
    const assets = readdirSync(join(dist, 'assets'));
    expect(assets.some((f) => f.endsWith('.js.br'))).toBe(true);
    expect(assets.some((f) => f.endsWith('.js.gz'))).toBe(true);
    // The code belongs to root (the process cannot change it); only /data is the process's own.
    expect(statSync(join(app, 'apps/server/src/main.ts')).uid).toBe(0);
    expect(statSync(join(mount, 'data')).uid).toBe(10001);
    // The server's modules load under the image's Node, as its user.
    const path = (info?.Config.Env ?? []).find((e) => e.startsWith('PATH='))?.slice(5) ?? '/usr/bin:/bin';
    const load = spawnSync(
      'chroot',
      [
        '--userspec=10001:10001',
        mount,
        'env',
        `PATH=${path}`,
        'node',
        '--input-type=module',
        '-e',
        "process.chdir('/app'); await import('/app/apps/server/src/app.ts'); console.log('loaded');",
      ],
      { encoding: 'utf8' },
    );
    expect(load.stderr).toBe('');
    expect(load.stdout.trim()).toBe('loaded');
  }, 1_800_000);
});
