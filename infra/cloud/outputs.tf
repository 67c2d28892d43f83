output "hosts" {
  description = "The host contract shared by all stacks: the hosts of both clouds, name cloud:region to how to reach and test them."
  value       = merge(module.aws.hosts, module.gcp.hosts)
}

output "addresses" {
  description = "The reserved public address of each host (name cloud:region to IP)."
  value       = merge(module.aws.addresses, module.gcp.addresses)
}
