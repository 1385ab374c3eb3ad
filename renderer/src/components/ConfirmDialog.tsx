// An in-page confirm (not window.confirm): keyboard-friendly and clickable from tests.
import { useEffect, useRef, type ReactNode } from 'react';

export interface ConfirmDialogProps {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** The button that does nothing ("Cancel" unless the action is itself a cancel: then "Keep …"). */
  dismissLabel?: string;
  onConfirm(): void;
  onCancel(): void;
}

export function ConfirmDialog({ title, children, confirmLabel, dismissLabel = 'Cancel', onConfirm, onCancel }: ConfirmDialogProps) {
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    yes.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onCancel();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onCancel]);
  return (
    <div className="modal-backdrop" onClick={onCancel}>
      <div className="modal" role="alertdialog" aria-modal="true" aria-label={title} onClick={(e) => e.stopPropagation()} data-testid="confirm-dialog">
        <h2>{title}</h2>
        <div className="modal-body">{children}</div>
        <div className="modal-actions">
          <button className="btn" onClick={onCancel} data-testid="confirm-no">
            {dismissLabel}
          </button>
          <button className="btn warn" ref={yes} onClick={onConfirm} data-testid="confirm-yes">
            {confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
