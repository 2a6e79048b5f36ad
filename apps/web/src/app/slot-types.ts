/** Props every dialog slot of the shell takes (features implement them; see slots.tsx). */
export interface DialogSlotProps {
  opened: boolean;
  onClose: () => void;
}
