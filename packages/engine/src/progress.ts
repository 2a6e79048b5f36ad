import type { TransferProgress } from './types.ts';

/** Keeps the counters of a run and turns them into progress events (speed over a sliding window). */
export class ProgressTracker {
  phase: TransferProgress['phase'] = 'preparing';
  transferred = 0;
  length = 0;
  finished = 0;
  total = 0;
  failed = 0;
  /** The run still plans while it goes: `total` and `length` grow (TransferProgress.counting). */
  counting = false;
  /**
   * Work of earlier, interrupted attempts not yet counted in the figures above (a streamed run counts
   * it at its end, `carryOver`): shown as done meanwhile, so that a resumed run's progress goes on
   * from where the attempt before it was rather than from zero.
   */
  earlier = { files: 0, bytes: 0 };
  private readonly samples: { t: number; bytes: number }[] = [];
  private readonly windowMs: number;
  private readonly emitFn: ((p: TransferProgress) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(emit: ((p: TransferProgress) => void) | undefined, windowMs = 5000) {
    this.emitFn = emit;
    this.windowMs = windowMs;
  }

  start(intervalMs: number): void {
    this.sample();
    if (!this.emitFn) return;
    this.timer = setInterval(() => this.emit(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    const t = Date.now();
    this.samples.push({ t, bytes: this.transferred });
    while (this.samples.length > 2 && (this.samples[0] as { t: number }).t < t - this.windowMs) this.samples.shift();
  }

  speed(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.t <= first.t) return 0;
    return Math.max(0, ((last.bytes - first.bytes) * 1000) / (last.t - first.t));
  }

  snapshot(): TransferProgress {
    this.sample();
    const speed = this.speed();
    const transferred = this.transferred + this.earlier.bytes;
    const length = this.length + this.earlier.bytes;
    const finished = this.finished + this.earlier.files;
    const total = this.total + this.earlier.files;
    const left = Math.max(0, length - transferred);
    let percentage: number;
    if (length > 0) percentage = (Math.min(transferred, length) / length) * 100;
    else percentage = total > 0 ? (finished / total) * 100 : this.phase === 'finishing' ? 100 : 0;
    return {
      phase: this.phase,
      percentage: Math.round(percentage * 100) / 100,
      speed: Math.round(speed),
      transferred,
      length,
      eta: left === 0 ? 0 : speed > 0 ? Math.ceil(left / speed) : null,
      finishedCounts: finished,
      totalCounts: total,
      failedCounts: this.failed,
      ...(this.counting ? { counting: true } : {}),
    };
  }

  emit(): void {
    if (this.emitFn) this.emitFn(this.snapshot());
  }
}
