import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

const ROOT = join(import.meta.dirname, '..');
const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');

/** Every variable the server reads (config.ts's schema): a deployment file must not set others. */
const KNOWN_VARS = new Set(
  [...read('apps/server/src/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+): z\./gm)].map((m) => m[1]),
);
/** Variables that are secrets: only ever by reference in the manifests. */
const SECRET_VARS = ['SKYFERRY_SECRET', 'DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'SKYFERRY_METRICS_TOKEN'];

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML */
type Doc = Record<string, any>;

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

function render(dir: string): Doc[] {
  const out = execFileSync('kubectl', ['kustomize', join(ROOT, dir)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON() as Doc);
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe('deployment files', () => {
  it('knows the server’s configuration variables', () => {
    expect(KNOWN_VARS.has('DATABASE_URL')).toBe(true);
    expect(KNOWN_VARS.has('SKYFERRY_SHUTDOWN_TIMEOUT_MS')).toBe(true);
  });

  for (const dir of ['deploy/k8s/base', 'deploy/k8s/overlays/example']) {
    // kubectl comes from Debian (kubernetes-client) or the Kubernetes project; renders offline.
    it.skipIf(!hasKubectl)(`${dir} renders with kubectl kustomize and keeps the invariants`, () => {
      const docs = render(dir);
      const of = (kind: string) => docs.filter((d) => d.kind === kind);
      expect(of('Secret')).toEqual([]);
      const config = of('ConfigMap').find((c) => c.metadata.name === 'skyferry-config');
      expect(config).toBeDefined();
      for (const name of Object.keys(config?.data ?? {})) expect(KNOWN_VARS, name).toContain(name);
      const shutdownMs = Number(config?.data.SKYFERRY_SHUTDOWN_TIMEOUT_MS);
      expect(shutdownMs).toBeGreaterThan(0);

      const deployments = of('Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['skyferry-api', 'skyferry-worker']);
      for (const d of deployments) {
        const name = d.metadata.name as string;
        const pod = d.spec.template.spec;
        const labels = d.spec.template.metadata.labels as Record<string, string>;
        expect(matches(d.spec.selector.matchLabels, labels), name).toBe(true);
        expect(pod.securityContext.runAsNonRoot, name).toBe(true);
        expect(pod.securityContext.runAsUser, name).toBeGreaterThan(0);
        // Running tasks get the whole shutdown deadline before the kubelet kills the pod.
        expect(pod.terminationGracePeriodSeconds * 1000, name).toBeGreaterThan(shutdownMs);
        for (const c of pod.containers as Doc[]) {
          const where = `${name}/${c.name}`;
          expect(c.securityContext?.runAsUser ?? pod.securityContext.runAsUser, where).not.toBe(0);
          expect(c.securityContext.allowPrivilegeEscalation, where).toBe(false);
          expect(c.securityContext.readOnlyRootFilesystem, where).toBe(true);
          expect(c.securityContext.capabilities.drop, where).toContain('ALL');
          for (const kind of ['requests', 'limits']) {
            expect(c.resources?.[kind]?.cpu, `${where} ${kind}.cpu`).toBeDefined();
            expect(c.resources?.[kind]?.memory, `${where} ${kind}.memory`).toBeDefined();
          }
          for (const probe of ['readinessProbe', 'livenessProbe']) {
            expect(c[probe]?.httpGet?.path, `${where} ${probe}`).toBe('/healthz');
            const port = c[probe].httpGet.port;
            expect(
              (c.ports as Doc[]).some((p) => p.name === port || p.containerPort === port),
              `${where} ${probe} port`,
            ).toBe(true);
          }
          expect(c.image).toMatch(/^[a-z0-9./-]+(:[\w.-]+)?$/);
          const env = (c.env ?? []) as Doc[];
          for (const e of env) expect(KNOWN_VARS, `${where} ${e.name}`).toContain(e.name);
          for (const secret of SECRET_VARS) {
            const e = env.find((x) => x.name === secret);
            expect(e?.valueFrom?.secretKeyRef?.name, `${where} ${secret} by reference`).toBe('skyferry-secrets');
            expect(e?.value, `${where} ${secret} not in clear`).toBeUndefined();
          }
        }
        const budget = of('PodDisruptionBudget').find((p) => matches(p.spec.selector.matchLabels, labels));
        expect(budget, `${name} disruption budget`).toBeDefined();
        expect(budget?.spec.minAvailable ?? 0).toBeGreaterThanOrEqual(1);
        expect(budget?.spec.minAvailable).toBeLessThan(d.spec.replicas);
        const hpa = of('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === name);
        expect(hpa, `${name} autoscaler`).toBeDefined();
        expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
      }
      const workerHpa = of('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === 'skyferry-worker');
      expect(workerHpa?.spec.metrics[0].external.metric.name).toBe('skyferry_tasks_waiting');
      const service = of('Service').find((s) => s.metadata.name === 'skyferry-api');
      const api = deployments.find((d) => d.metadata.name === 'skyferry-api');
      expect(matches(service?.spec.selector, api?.spec.template.metadata.labels)).toBe(true);
    });
  }

  it('compose.yaml: PostgreSQL, Redis, two API processes behind Caddy, two workers, mail settings', () => {
    const compose = parse(read('compose.yaml'), { merge: true }) as Doc;
    const services = compose.services as Record<string, Doc>;
    expect(Object.keys(services).sort()).toEqual([
      'api-1',
      'api-2',
      'postgres',
      'proxy',
      'redis',
      'worker-1',
      'worker-2',
    ]);
    expect(services.proxy?.image).toMatch(/caddy/);
    const caddyfile = read('deploy/compose/Caddyfile');
    expect(caddyfile).toMatch(/reverse_proxy api-1:8080 api-2:8080/);
    expect(caddyfile).toMatch(/health_uri \/healthz/);
    for (const name of ['api-1', 'api-2', 'worker-1', 'worker-2']) {
      const s = services[name] as Doc;
      const env = s.environment as Record<string, string>;
      for (const key of Object.keys(env)) expect(KNOWN_VARS, `${name} ${key}`).toContain(key);
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.SMTP_URL).toBeDefined();
      expect(env.SKYFERRY_SECRET).toMatch(/\$\{SKYFERRY_SECRET:\?/);
      expect(Number.parseInt(String(s.stop_grace_period), 10) * 1000).toBeGreaterThan(
        Number(env.SKYFERRY_SHUTDOWN_TIMEOUT_MS),
      );
      expect(s.depends_on.postgres.condition).toBe('service_healthy');
    }
    expect([services['api-1']?.environment.SKYFERRY_WORKERS, services['api-2']?.environment.SKYFERRY_WORKERS]).toEqual([
      '0',
      '0',
    ]);
    for (const name of ['worker-1', 'worker-2']) {
      expect(services[name]?.command).toEqual(['apps/server/src/worker.ts']);
      expect(Number(services[name]?.environment.SKYFERRY_WORKERS)).toBeGreaterThan(0);
      expect(services[name]?.healthcheck.test.join(' ')).toContain(
        `:${services[name]?.environment.SKYFERRY_METRICS_PORT}/healthz`,
      );
    }
  });

  it('Dockerfile: multi-stage on an overridable base, non-root, health-checked, no dev dependencies', () => {
    const file = read('Dockerfile');
    expect(file).toMatch(/^ARG BASE=docker\.io\/library\/node:24[\w.-]*$/m);
    const froms = [...file.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(3);
    expect(froms.at(-1)).toBe('${BASE}');
    const last = file.slice(file.lastIndexOf('\nFROM '));
    expect(last).toMatch(/^USER 10001:10001$/m);
    expect(last).toMatch(/^HEALTHCHECK [^\n]*(\\\n[^\n]*)*\/healthz/m);
    expect(last).toMatch(/^ENTRYPOINT \["node"\]$/m);
    expect(last).toMatch(/COPY --from=build \/src\/apps\/web\/dist apps\/web\/dist/);
    expect(last).not.toMatch(/npm (ci|install)/);
    expect(file).toMatch(/npm ci --omit=dev/);
    const ignore = read('.dockerignore');
    for (const line of ['**/node_modules', '**/*.test.ts', '.git']) expect(ignore.split('\n')).toContain(line);
  });
});
