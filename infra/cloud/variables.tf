variable "aws" {
  description = "The variables of infra/aws for this sweep (all but peer_addresses, which come from the GCP stack)."
  type = object({
    regions           = map(object({ machine_type = string, availability_zone_id = string, ami = string }))
    home_region       = string
    sweep_id          = string
    tags              = map(string)
    ttl_minutes       = number
    operator_cidr     = string
    iperf3_ports      = object({ first = number, last = number })
    ssh_user          = string
    ssh_public_key    = string
    host_key_file     = string
    host_public_key   = string
    ami_ssm_parameter = string
    root_volume_gib   = number
  })

  validation {
    # As in infra/aws: checked here too so a bad block fails before any module loads.
    condition     = can(regex("^[0-9]{1,3}(\\.[0-9]{1,3}){3}/([89]|[12][0-9]|3[0-2])$", var.aws.operator_cidr)) && try(cidrhost(var.aws.operator_cidr, 0) == split("/", var.aws.operator_cidr)[0], false)
    error_message = "aws.operator_cidr must be an IPv4 network of /8 or narrower without host bits, e.g. 203.0.113.7/32 or 203.0.113.0/24 (not 203.0.113.7/24)."
  }
}

variable "gcp" {
  description = "The variables of infra/gcp for this sweep (all but peer_addresses, which come from the AWS stack)."
  type = object({
    project         = string
    regions         = map(object({ zone = string, machine_type = string, image = string }))
    name_prefix     = string
    labels          = map(string)
    ttl_minutes     = number
    operator_cidr   = string
    iperf3_ports    = object({ first = number, last = number })
    network_tier    = string
    ssh_user        = string
    ssh_public_key  = string
    host_key_file   = string
    host_public_key = string
    image           = string
    boot_disk_gib   = number
  })

  validation {
    # As in infra/gcp: checked here too so a bad block fails before any module loads.
    condition     = can(regex("^[0-9]{1,3}(\\.[0-9]{1,3}){3}/([89]|[12][0-9]|3[0-2])$", var.gcp.operator_cidr)) && try(cidrhost(var.gcp.operator_cidr, 0) == split("/", var.gcp.operator_cidr)[0], false)
    error_message = "gcp.operator_cidr must be an IPv4 network of /8 or narrower without host bits, e.g. 203.0.113.7/32 or 203.0.113.0/24 (not 203.0.113.7/24)."
  }
}
