variable "aws" {
  description = "The variables of infra/aws for this sweep (all but peer_addresses, which come from the GCP stack)."
  type = object({
    regions           = map(object({ machine_type = string }))
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
}

variable "gcp" {
  description = "The variables of infra/gcp for this sweep (all but peer_addresses, which come from the AWS stack)."
  type = object({
    project         = string
    regions         = map(object({ zone = string, machine_type = string }))
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
}
