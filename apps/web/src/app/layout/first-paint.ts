import { useEffect, useState } from 'react';

/**
 * False until the component has been painted once (a frame's callback runs before its paint, a
 * task queued from it after), so that what it starts then does not hold the first paint back.
 */
export function useFirstPaintDone(): boolean {
  const [done, setDone] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => setDone(true));
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
  return done;
}
