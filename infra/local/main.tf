# The emulated cloud: every host a network namespace on this machine.
#
# One resource brings the whole emulation up in one batch (77 hosts in well
# under a second), which per-host resources could not; the hosts still fan out
# in the `hosts` output. The provisioners run the orchestrator's emulator
# without a shell, so paths need no quoting.

resource "terraform_data" "this" {
  # A changed spec (regions, delays, rate, keys) means a new emulation.
  triggers_replace = [var.spec_sha256]

  # A destroy provisioner may only read `self`: keep what `down` needs here.
  input = {
    python       = var.python
    emulation_id = var.emulation_id
  }

  provisioner "local-exec" {
    interpreter = [var.python, "-m", "orchestrator.emulator", "up", "--spec"]
    command     = var.spec_file
  }

  provisioner "local-exec" {
    when        = destroy
    interpreter = [self.input.python, "-m", "orchestrator.emulator", "down", "--id"]
    command     = self.input.emulation_id
  }
}
