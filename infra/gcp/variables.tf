variable "project" {
  description = "The GCP project the hosts are created in."
  type        = string
}

variable "regions" {
  description = "Selected GCP regions: region id (e.g. europe-west1) to its one host's zone and machine type, and the image to pin (projects/P/global/images/NAME) or \"\" for the latest of var.image's family."
  type = map(object({
    zone         = string
    machine_type = string
    image        = string
  }))

  validation {
    condition     = alltrue([for r, v in var.regions : startswith(v.zone, "${r}-")])
    error_message = "Each region's zone must lie in that region (europe-west1 -> europe-west1-b)."
  }

  validation {
    condition     = alltrue([for r, v in var.regions : can(regex("^(projects/[a-z][-a-z0-9]*/global/images/[a-z][-a-z0-9]*)?$", v.image))])
    error_message = "A pinned image is projects/PROJECT/global/images/NAME, or \"\" for the family's latest."
  }
}

variable "name_prefix" {
  description = "Start of every resource name: ir- and the sweep id in GCP's name alphabet."
  type        = string

  validation {
    # GCP names end in a letter or digit: "ir-x-" would make an invalid network name.
    condition     = can(regex("^[a-z]([-a-z0-9]{0,33}[a-z0-9])?$", var.name_prefix))
    error_message = "name_prefix must be a lower-case letter then up to 34 lower-case letters, digits or dashes, not ending in a dash."
  }
}

variable "labels" {
  description = "Labels on every resource: project, sweep_id, owner, created_utc, expires_utc, already in GCP's label alphabet."
  type        = map(string)

  validation {
    condition = alltrue([
      for k, v in var.labels : can(regex("^[a-z][a-z0-9_-]{0,62}$", k)) && can(regex("^[a-z0-9_-]{0,63}$", v))
    ])
    error_message = "Label keys and values must be lower case letters, digits, _ and - (at most 63)."
  }

  validation {
    condition     = alltrue([for k in ["project", "sweep_id", "owner", "created_utc", "expires_utc"] : contains(keys(var.labels), k)])
    error_message = "Labels must include project, sweep_id, owner, created_utc and expires_utc."
  }
}

variable "ttl_minutes" {
  description = "Dead-man switch: GCP deletes each instance this many minutes after it starts (max_run_duration)."
  type        = number

  validation {
    condition     = var.ttl_minutes >= 10 && var.ttl_minutes <= 2880
    error_message = "ttl_minutes must be between 10 and 2880 (two days)."
  }
}

variable "operator_cidr" {
  description = "The only source allowed to reach SSH (the controller's public address, e.g. 203.0.113.7/32)."
  type        = string

  validation {
    # IPv4 with a prefix of 8 to 32 bits: never the whole internet, nor IPv6 (::/0).
    # No host bits: the provider's cidr_blocks check wants the network address.
    condition     = can(regex("^[0-9]{1,3}(\\.[0-9]{1,3}){3}/([89]|[12][0-9]|3[0-2])$", var.operator_cidr)) && try(cidrhost(var.operator_cidr, 0) == split("/", var.operator_cidr)[0], false)
    error_message = "operator_cidr must be an IPv4 network of /8 or narrower without host bits, e.g. 203.0.113.7/32 or 203.0.113.0/24 (not 203.0.113.7/24)."
  }
}

variable "peer_addresses" {
  description = "Public addresses of the sweep's hosts in other stacks (name cloud:region to IP), allowed to reach iperf3 and ICMP."
  type        = map(string)
  default     = {}
}

variable "iperf3_ports" {
  description = "TCP port range the iperf3 servers listen on; open only to the sweep's own hosts."
  type = object({
    first = number
    last  = number
  })
  default = {
    first = 5201
    last  = 5299
  }

  validation {
    condition     = var.iperf3_ports.first >= 1024 && var.iperf3_ports.first <= var.iperf3_ports.last && var.iperf3_ports.last <= 65535
    error_message = "iperf3_ports must be an unprivileged range with first <= last."
  }
}

variable "network_tier" {
  description = "PREMIUM (Google's backbone, the default) or STANDARD (the public internet for most of the way)."
  type        = string
  default     = "PREMIUM"

  validation {
    condition     = contains(["PREMIUM", "STANDARD"], var.network_tier)
    error_message = "network_tier is PREMIUM or STANDARD."
  }
}

variable "ssh_user" {
  description = "Login user created from the ssh-keys metadata."
  type        = string
  default     = "interregion"
}

variable "ssh_public_key" {
  description = "The sweep's client key (ed25519, OpenSSH format), installed as instance metadata."
  type        = string
}

variable "host_key_file" {
  description = "Path to the sweep's ed25519 host private key, installed by the startup script so the host key is known in advance."
  type        = string
}

variable "host_public_key" {
  description = "The public half of host_key_file; the output's host_key, recorded in the sweep's known_hosts."
  type        = string
}

variable "image" {
  description = "Image family of the hosts not pinned to an image, as project/family; resolved once per apply to one image."
  type        = string
  default     = "debian-cloud/debian-12"

  validation {
    condition     = can(regex("^[a-z][-a-z0-9]*/[a-z][-a-z0-9]*$", var.image))
    error_message = "image is an image family as project/family, e.g. debian-cloud/debian-12."
  }
}

variable "boot_disk_gib" {
  description = "Size of each host's boot disk."
  type        = number
  default     = 10
}
