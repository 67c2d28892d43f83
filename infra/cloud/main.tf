# A sweep across both clouds: the AWS and GCP stacks side by side, each
# firewall naming the other cloud's reserved addresses. Terraform resolves the
# two address sets before either firewall, so there is no cycle.

module "aws" {
  source = "../aws"

  regions           = var.aws.regions
  home_region       = var.aws.home_region
  sweep_id          = var.aws.sweep_id
  tags              = var.aws.tags
  ttl_minutes       = var.aws.ttl_minutes
  operator_cidr     = var.aws.operator_cidr
  iperf3_ports      = var.aws.iperf3_ports
  ssh_user          = var.aws.ssh_user
  ssh_public_key    = var.aws.ssh_public_key
  host_key_file     = var.aws.host_key_file
  host_public_key   = var.aws.host_public_key
  ami_ssm_parameter = var.aws.ami_ssm_parameter
  root_volume_gib   = var.aws.root_volume_gib
  peer_addresses    = module.gcp.addresses
}

module "gcp" {
  source = "../gcp"

  project         = var.gcp.project
  regions         = var.gcp.regions
  name_prefix     = var.gcp.name_prefix
  labels          = var.gcp.labels
  ttl_minutes     = var.gcp.ttl_minutes
  operator_cidr   = var.gcp.operator_cidr
  iperf3_ports    = var.gcp.iperf3_ports
  network_tier    = var.gcp.network_tier
  ssh_user        = var.gcp.ssh_user
  ssh_public_key  = var.gcp.ssh_public_key
  host_key_file   = var.gcp.host_key_file
  host_public_key = var.gcp.host_public_key
  image           = var.gcp.image
  boot_disk_gib   = var.gcp.boot_disk_gib
  peer_addresses  = module.aws.addresses
}
