import { nameParts } from '@skyferry/contract';

/**
 * A name a user chose (a file, folder, cloud or task), as the page shows it: isolated in <bdi> so
 * it cannot reorder the text around it, with each bidirectional-text control (U+202E and its kin)
 * shown as a visible mark, "[U+202E]", instead of silently reversing the name. For plain-text places
 * (titles, labels, tooltips) use `plainName` from the contract; translations apply it to every value.
 */
export function Name({ value }: { value: string }) {
  return (
    <bdi className="sf-name">
      {nameParts(value).map((part, i) =>
        part.control ? (
          <span key={i} className="sf-bidi-mark" data-testid="bidi-mark">
            {part.text}
          </span>
        ) : (
          part.text
        ),
      )}
    </bdi>
  );
}
