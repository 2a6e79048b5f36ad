// heic-decode ships no types: the part of its API the thumbnails and viewer use.
declare module 'heic-decode' {
  interface Decoded {
    width: number;
    height: number;
    data: Uint8ClampedArray;
  }
  interface Image {
    width: number;
    height: number;
    decode(): Promise<Decoded>;
  }
  interface HeicDecode {
    (input: { buffer: Uint8Array }): Promise<Decoded>;
    all(input: { buffer: Uint8Array }): Promise<Image[] & { dispose(): void }>;
  }
  const decode: HeicDecode;
  export default decode;
}
