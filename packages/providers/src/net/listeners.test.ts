import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { keepErrorListener } from './listeners.ts';

describe('keepErrorListener', () => {
  it('drops an error nobody else listens to; whoever listens still gets it', () => {
    const bare = new EventEmitter();
    expect(() => bare.emit('error', new Error('late'))).toThrow('late');
    const kept = keepErrorListener(new EventEmitter());
    expect(() => kept.emit('error', new Error('late'))).not.toThrow();
    const seen: string[] = [];
    kept.on('error', (e: Error) => seen.push(e.message));
    kept.emit('error', new Error('again'));
    expect(seen).toEqual(['again']);
  });
});
