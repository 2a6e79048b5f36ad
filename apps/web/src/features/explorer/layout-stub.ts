/**
 * jsdom has no layout: gives every element a viewport's size so the virtualized file list renders
 * its rows. Answers the function that puts the real properties back.
 */
export function stubViewportSize(height = 600, width = 1000): () => void {
  const saved = {
    clientHeight: Object.getOwnPropertyDescriptor(Element.prototype, 'clientHeight'),
    clientWidth: Object.getOwnPropertyDescriptor(Element.prototype, 'clientWidth'),
  };
  Object.defineProperty(Element.prototype, 'clientHeight', { configurable: true, get: () => height });
  Object.defineProperty(Element.prototype, 'clientWidth', { configurable: true, get: () => width });
  return () => {
    if (saved.clientHeight) Object.defineProperty(Element.prototype, 'clientHeight', saved.clientHeight);
    if (saved.clientWidth) Object.defineProperty(Element.prototype, 'clientWidth', saved.clientWidth);
  };
}
