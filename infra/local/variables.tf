variable "emulation_id" {
  description = "Short id of the emulation (namespaces ir-<id>-*, link ir-<id>); derived from the sweep id by orchestrator.emulator.stack."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]{1,10}$", var.emulation_id))
    error_message = "The emulation id is 1-10 lowercase letters or digits (interface names are limited to 15 characters)."
  }
}

variable "python" {
  description = "Python interpreter that has the orchestrator package installed (the project's .venv/bin/python)."
  type        = string
}

variable "spec_file" {
  description = "Absolute path of the emulation spec (JSON: hosts, addresses, per-pair delays, rate cap, keys) written by local_variables()."
  type        = string

  validation {
    condition     = startswith(var.spec_file, "/")
    error_message = "The spec file path must be absolute: the provisioner runs in another directory."
  }
}

variable "spec_sha256" {
  description = "SHA-256 of the spec file's content: a new spec replaces the emulation."
  type        = string
}

variable "hosts" {
  description = "Emulated hosts: name cloud:region to cloud, region, address (in 198.18.0.0/15), machine_type and the sweep's public host key."
  type = map(object({
    cloud        = string
    region       = string
    address      = string
    machine_type = string
    host_key     = string
  }))

  validation {
    condition     = alltrue([for h in values(var.hosts) : can(cidrnetmask("${h.address}/32")) && cidrhost("198.18.0.0/15", 0) == cidrhost("${h.address}/15", 0)])
    error_message = "Emulated hosts must have addresses in 198.18.0.0/15, the range reserved for network benchmarks."
  }
}

variable "ssh_user" {
  description = "User the controller logs in as; emulated hosts are namespaces of this machine, so root."
  type        = string
  default     = "root"
}

variable "ssh_port" {
  description = "Port of each emulated host's sshd."
  type        = number
  default     = 22
}

variable "controller" {
  description = "Region (cloud:region, e.g. aws:us-east-1) the controller is modelled in: traffic between it and each host gets the network model's delay for that pair. Empty: controller traffic is not delayed."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^((aws|gcp):[a-z0-9-]+)?$", var.controller))
    error_message = "The controller is a region key such as aws:us-east-1 or gcp:europe-west1, or empty for no controller location."
  }
}
