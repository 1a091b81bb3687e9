// A confirmation before a change that cannot be undone (revoke, cancel, delete), on React Aria's modal dialog:
// focus is trapped inside it and returns to the trigger when it closes.
import type { ReactNode } from 'react';
import { Button, Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';

export function ConfirmButton({
  label,
  title,
  children,
  confirmLabel,
  onConfirm,
  isDisabled,
  danger = true,
}: {
  label: string;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  isDisabled?: boolean;
  danger?: boolean;
}) {
  return (
    <DialogTrigger>
      <Button className={danger ? 'danger' : undefined} isDisabled={isDisabled}>
        {label}
      </Button>
      <ModalOverlay className="modal-overlay" isDismissable>
        <Modal className="modal">
          <Dialog role="alertdialog">
            {({ close }) => (
              <>
                <Heading slot="title">{title}</Heading>
                <div>{children}</div>
                <div className="actions">
                  <Button
                    className={danger ? 'primary danger-fill' : 'primary'}
                    onPress={() => {
                      onConfirm();
                      close();
                    }}
                  >
                    {confirmLabel}
                  </Button>
                  <Button onPress={close}>Keep it</Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}
