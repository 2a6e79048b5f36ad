import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger } from 'builder-util';
import { describe, expect, it } from 'vitest';
import { compileModule } from '../scripts/stage.ts';

// The installers' configuration as electron-builder reads it (its own schema check), and the
// staging step's compiler. Building the installers needs the Electron binary: not run here.
const desktop = resolve(import.meta.dirname, '..');

describe('packaging', () => {
  it("passes electron-builder's own validation, with every target the app ships", async () => {
    const config = await getConfig(desktop, join(desktop, 'electron-builder.yml'), null);
    await validateConfiguration(config, new DebugLogger(false));
    expect(JSON.stringify(config.win?.target)).toContain('nsis');
    expect(JSON.stringify(config.mac?.target)).toContain('dmg');
    expect(config.mac?.hardenedRuntime).toBe(true);
    expect(JSON.stringify(config.linux?.target)).toMatch(/AppImage.*deb/);
    expect(config.publish).toMatchObject({ provider: 'generic' });
    for (const file of [config.afterSign, config.mac?.entitlements]) {
      expect(existsSync(join(desktop, String(file)))).toBe(true);
    }
    expect(readFileSync(join(desktop, 'package.json'), 'utf8')).toContain('"dist"');
  });

  it('compiles TypeScript modules to JavaScript with their relative imports renamed', () => {
    const out = compileModule(
      "import type { A } from './a.ts';\nimport { b } from '../b.ts';\nexport { c } from './c/index.ts';\n" +
        "const x: number = 1;\nconst m = await import('./lazy.ts');\nimport z from 'zod';\n",
    );
    expect(out).toContain("from '../b.js'");
    expect(out).toContain("from './c/index.js'");
    expect(out).toContain("import('./lazy.js')");
    expect(out).toContain("from 'zod'");
    expect(out).not.toContain(': number');
    expect(out).not.toContain('.ts');
  });
});
