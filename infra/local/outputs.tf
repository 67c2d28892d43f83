output "hosts" {
  description = "The host contract shared by all stacks: name cloud:region to how to reach and test the host."
  # Known from the variables alone; depends_on keeps it from being read before the hosts exist.
  depends_on = [terraform_data.this]
  value = {
    for name, h in var.hosts : name => {
      name         = name
      cloud        = h.cloud
      region       = h.region
      address      = h.address
      ssh_host     = h.address
      ssh_user     = var.ssh_user
      ssh_port     = var.ssh_port
      machine_type = h.machine_type
      backend      = "local"
      host_key     = h.host_key
      # An emulated host has no cloud zone or image: say so rather than invent one.
      zone     = "local"
      image_id = "emulated"
    }
  }
}

output "emulation_id" {
  description = "Id of the emulation: `interregion emulator down --id <id>` removes it without Terraform."
  value       = terraform_data.this.input.emulation_id
}

output "controller" {
  description = "Region the controller is modelled in (its traffic to the hosts gets that region's modelled delay), or null when it has no location."
  value       = var.controller == "" ? null : var.controller
}
