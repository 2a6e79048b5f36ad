import { TaskState } from '@skyferry/contract';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Latency buckets for HTTP answers, in seconds (5 ms to 30 s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets for task runs and queue waits, in seconds (1 s to 6 h). */
const TASK_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600];

/** What the runner reports about task runs (a narrow view, so services depend on no metrics library). */
export interface TaskMetrics {
  /** A run started, after waiting `waitMs` in the queue (first attempts only). */
  runStarted(waitMs: number | undefined): void;
  /** A run reached its final state. */
  runFinished(outcome: string, durationMs: number): void;
  /** A run stopped by a shutdown or a lost lease (another worker resumes it). */
  runInterrupted(reason: string): void;
  /** One file (or folder) handled: done, failed, resumed or skipped. */
  item(outcome: string, bytes: number): void;
  /** An error, by the kind of cloud (`local`, `s3`, ...) and the engine's reason code. */
  error(backend: string, reason: string): void;
}

/** Counts of tasks by state, read from the database when Prometheus scrapes. */
export type TaskStateCounts = () => Promise<Array<{ state: number; count: number }>>;

/** Task states as their metric label: the names of the spec's numbers (TaskState). */
const STATE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(TaskState).map(([name, value]) => [value, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
);

/**
 * The process's Prometheus metrics (prom-client), one registry per process: HTTP latency by route,
 * task runs, files, bytes and errors, the queue's depth and wait, and Node's own figures (event-loop
 * lag, memory, GC). Each API and worker process serves its own; Prometheus adds them up.
 */
export class Metrics implements TaskMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly runs: Counter<'outcome'>;
  private readonly runSeconds: Histogram<'outcome'>;
  private readonly interrupted: Counter<'reason'>;
  private readonly started: Counter;
  private readonly queueWait: Histogram;
  private readonly files: Counter<'outcome'>;
  private readonly bytes: Counter;
  private readonly errors: Counter<'backend' | 'reason'>;
  private readonly running: Gauge;

  constructor(options: { process: 'api' | 'worker'; taskStates?: TaskStateCounts }) {
    this.registry.setDefaultLabels({ process: options.process });
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    const registers = [this.registry];
    this.httpDuration = new Histogram({
      name: 'skyferry_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route pattern (not the raw path) and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.runs = new Counter({
      name: 'skyferry_task_runs_total',
      help: 'Task runs (transfers) that reached a final state, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.runSeconds = new Histogram({
      name: 'skyferry_task_run_duration_seconds',
      help: 'Run time of task runs that reached a final state, by outcome',
      labelNames: ['outcome'],
      buckets: TASK_BUCKETS,
      registers,
    });
    this.interrupted = new Counter({
      name: 'skyferry_task_runs_interrupted_total',
      help: 'Task runs handed back to the queue (shutdown, lost lease) to resume elsewhere',
      labelNames: ['reason'],
      registers,
    });
    this.started = new Counter({
      name: 'skyferry_task_runs_started_total',
      help: 'Task runs started in this process (resumptions included)',
      registers,
    });
    this.queueWait = new Histogram({
      name: 'skyferry_task_queue_wait_seconds',
      help: 'Time a task waited in the queue before its run started',
      buckets: TASK_BUCKETS,
      registers,
    });
    this.files = new Counter({
      name: 'skyferry_transfer_files_total',
      help: 'Files and folders handled by task runs, by outcome (done, failed, resumed, skipped)',
      labelNames: ['outcome'],
      registers,
    });
    this.bytes = new Counter({
      name: 'skyferry_transfer_bytes_total',
      help: 'Bytes written by task runs',
      registers,
    });
    this.errors = new Counter({
      name: 'skyferry_transfer_errors_total',
      help: 'Errors of task runs, by the kind of cloud written to and the reason code',
      labelNames: ['backend', 'reason'],
      registers,
    });
    this.running = new Gauge({
      name: 'skyferry_task_runs_in_progress',
      help: 'Task runs going on in this process',
      registers,
    });
    const taskStates = options.taskStates;
    if (taskStates) {
      new Gauge({
        name: 'skyferry_tasks',
        help: 'Tasks by state, across every process (state="waiting" is the queue depth)',
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          for (const { state, count } of await taskStates())
            this.set({ state: STATE_NAMES[state] ?? String(state) }, count);
        },
      });
    }
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  runStarted(waitMs: number | undefined): void {
    this.started.inc();
    this.running.inc();
    if (waitMs !== undefined) this.queueWait.observe(Math.max(0, waitMs) / 1000);
  }

  runFinished(outcome: string, durationMs: number): void {
    this.running.dec();
    this.runs.inc({ outcome });
    this.runSeconds.observe({ outcome }, Math.max(0, durationMs) / 1000);
  }

  runInterrupted(reason: string): void {
    this.running.dec();
    this.interrupted.inc({ reason });
  }

  item(outcome: string, bytes: number): void {
    this.files.inc({ outcome });
    if (outcome === 'done' && bytes > 0) this.bytes.inc(bytes);
  }

  error(backend: string, reason: string): void {
    this.errors.inc({ backend, reason });
  }

  /** The text Prometheus scrapes, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
