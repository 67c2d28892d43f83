output "hosts" {
  description = "The host contract shared by all stacks: name cloud:region to how to reach and test the host."
  value = {
    for r, inst in aws_instance.this : "aws:${r}" => {
      name         = "aws:${r}"
      cloud        = "aws"
      region       = r
      address      = aws_eip.this[r].public_ip
      ssh_host     = aws_eip.this[r].public_ip
      ssh_user     = var.ssh_user
      ssh_port     = 22
      machine_type = inst.instance_type
      backend      = "aws"
      host_key     = var.host_public_key
      # Where and from what the host runs, to pin in a later sweep: AZ ID and AMI.
      zone     = data.aws_availability_zones.this[r].zone_ids[index(data.aws_availability_zones.this[r].names, inst.availability_zone)]
      image_id = inst.ami
    }
  }

  # A host is reachable on its address once the address is associated with it.
  depends_on = [aws_eip_association.this]
}

output "addresses" {
  description = "The reserved public address of each host (name cloud:region to IP), for the other stacks' firewalls."
  value       = local.own_addresses
}
