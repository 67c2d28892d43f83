output "hosts" {
  description = "The host contract shared by all stacks: name cloud:region to how to reach and test the host."
  value = {
    for r, inst in google_compute_instance.this : "gcp:${r}" => {
      name         = "gcp:${r}"
      cloud        = "gcp"
      region       = r
      address      = inst.network_interface[0].access_config[0].nat_ip
      ssh_host     = inst.network_interface[0].access_config[0].nat_ip
      ssh_user     = var.ssh_user
      ssh_port     = 22
      machine_type = var.regions[r].machine_type
      backend      = "gcp"
      host_key     = var.host_public_key
      # Where and from what the host runs, to pin in a later sweep.
      zone     = inst.zone
      image_id = local.images[r]
    }
  }
}

output "addresses" {
  description = "The reserved public address of each host (name cloud:region to IP), for the other stacks' firewalls."
  value       = local.own_addresses
}
