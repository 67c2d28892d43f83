variable "regions" {
  description = "Selected AWS regions: region id (e.g. us-east-1) to its one host's machine type, and the Availability Zone ID (e.g. use1-az4) and AMI (ami-...) to pin, or \"\" for any zone and the latest Debian 12."
  type = map(object({
    machine_type         = string
    availability_zone_id = string
    ami                  = string
  }))

  validation {
    # The commercial partition only: GovCloud (us-gov-*) and China (cn-*) need
    # their own accounts and endpoints, which this provider configuration lacks.
    condition     = alltrue([for r in keys(var.regions) : can(regex("^[a-z]{2}-[a-z]+-[0-9]$", r)) && !startswith(r, "cn-")])
    error_message = "Region ids look like us-east-1, in the commercial partition (no us-gov-* or cn-* regions)."
  }

  validation {
    # Zone IDs name the same physical zone in every account (zone names do not).
    condition     = alltrue([for r, v in var.regions : can(regex("^([a-z]+[0-9]+-az[0-9]+)?$", v.availability_zone_id))])
    error_message = "availability_zone_id is an AZ ID like use1-az4, or \"\" for any zone."
  }

  validation {
    condition     = alltrue([for r, v in var.regions : can(regex("^(ami-[0-9a-f]{8}([0-9a-f]{9})?)?$", v.ami))])
    error_message = "ami is an AMI id like ami-0123456789abcdef0, or \"\" for the latest Debian 12."
  }
}

variable "home_region" {
  description = "Region of the provider configuration; every resource sets its own region, so this only serves account-wide calls."
  type        = string
  default     = "us-east-1"
}

variable "sweep_id" {
  description = "The sweep these hosts belong to; part of every resource name and tag."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9-]{0,62}$", var.sweep_id))
    error_message = "The sweep id is 1-63 letters, digits and dashes."
  }
}

variable "tags" {
  description = "Tags on every resource: project, sweep_id, owner, created_utc, expires_utc (the reaper reads them)."
  type        = map(string)

  validation {
    condition     = alltrue([for k in ["project", "sweep_id", "owner", "created_utc", "expires_utc"] : contains(keys(var.tags), k)])
    error_message = "Tags must include project, sweep_id, owner, created_utc and expires_utc."
  }

  validation {
    # The dead-man switch counts from created_utc.
    condition     = can(timeadd(var.tags["created_utc"], "1m"))
    error_message = "tags.created_utc must be an RFC 3339 time, e.g. 2026-11-22T01:30:00Z."
  }
}

variable "ttl_minutes" {
  description = "Dead-man switch: each instance shuts itself down (and so terminates) this many minutes after tags.created_utc, checked again at every boot."
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

variable "ssh_user" {
  description = "Login user of the Debian AMI."
  type        = string
  default     = "admin"
}

variable "ssh_public_key" {
  description = "The sweep's client key (ed25519, OpenSSH format), installed as a key pair in every region."
  type        = string
}

variable "host_key_file" {
  description = "Path to the sweep's ed25519 host private key, installed through cloud-init so the host key is known before boot."
  type        = string
}

variable "host_public_key" {
  description = "The public half of host_key_file; the output's host_key, recorded in the sweep's known_hosts."
  type        = string
}

variable "ami_ssm_parameter" {
  description = "Public SSM parameter naming the latest Debian 12 AMI in each region (for regions whose ami is \"\")."
  type        = string
  default     = "/aws/service/debian/release/12/latest/amd64"
}

variable "root_volume_gib" {
  description = "Size of each host's encrypted gp3 root volume."
  type        = number
  default     = 8
}
