/** A question in a dialog of the page (never the browser's confirm()): Cancel, or the named destructive action. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function ConfirmDialog(props: {
  id: string;
  title: string;
  children: ComponentChildren;
  action: string;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="confirm" aria-labelledby={props.id} onClose={props.onCancel}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
      <div class="row end">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger-fill" onClick={props.onConfirm}>
          {props.action}
        </button>
      </div>
    </dialog>
  );
}
