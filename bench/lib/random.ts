/** xorshift32: a quick, seeded source of numbers in [0, 1) for the benchmarks' data. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

/** `size` pseudo-random bytes from `seed` (xorshift32): incompressible and quick to make. */
export function pseudoRandomBytes(size: number, seed: number): Buffer {
  const next = prng(seed);
  const words = new Uint32Array(Math.ceil(size / 4));
  for (let i = 0; i < words.length; i++) words[i] = next() * 0x1_0000_0000;
  return Buffer.from(words.buffer, 0, size);
}
