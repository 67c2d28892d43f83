# One small Debian 12 VM per selected region, on a network of its own. Static
# external addresses are reserved first so the firewall can name every peer of
# the sweep: SSH is open only to the operator, iperf3 and ICMP only to the
# sweep's own hosts.

provider "google" {
  project = var.project
}

locals {
  region_names = sort(keys(var.regions))

  own_addresses = { for r, a in google_compute_address.this : "gcp:${r}" => a.address }
  peer_ips      = merge(var.peer_addresses, local.own_addresses)

  # The image of each host: pinned, or the family's image resolved for this apply.
  images = { for r, v in var.regions : r => v.image != "" ? v.image : data.google_compute_image.this.id }

  # Firewall rules and networks take no labels: the reaper reads this instead.
  description = jsonencode(var.labels)

  # The sweep's own host key replaces the image's, so known_hosts is written
  # before boot. Guest-agent key generation runs before startup scripts.
  startup_script = sensitive(join("\n", [
    "#!/bin/sh",
    "set -eu",
    "umask 077",
    "cat > /etc/ssh/ssh_host_ed25519_key <<'INTERREGION_KEY'",
    trimspace(file(var.host_key_file)),
    "INTERREGION_KEY",
    "echo '${trimspace(var.host_public_key)}' > /etc/ssh/ssh_host_ed25519_key.pub",
    "rm -f /etc/ssh/ssh_host_rsa_key* /etc/ssh/ssh_host_ecdsa_key*",
    "systemctl restart ssh",
  ]))
}

# The family's current image, resolved once so every host of the sweep boots the
# same one and hosts.json can name it for a later sweep to pin.
data "google_compute_image" "this" {
  project = split("/", var.image)[0]
  family  = split("/", var.image)[1]
}

resource "google_compute_network" "this" {
  name                    = var.name_prefix
  description             = local.description
  auto_create_subnetworks = false
}

resource "google_compute_subnetwork" "this" {
  for_each = var.regions

  # checkov:skip=CKV_GCP_26:Flow logs cost money and add nothing to a one-sweep measurement network
  name        = "${var.name_prefix}-${each.key}"
  description = local.description
  region      = each.key
  network     = google_compute_network.this.id
  # Shared address space (RFC 6598), one /24 per region; hosts are reached on public addresses.
  ip_cidr_range            = cidrsubnet("100.64.0.0/16", 8, index(local.region_names, each.key))
  private_ip_google_access = true
}

resource "google_compute_address" "this" {
  for_each = var.regions

  name         = "${var.name_prefix}-${each.key}"
  description  = local.description
  region       = each.key
  address_type = "EXTERNAL"
  network_tier = var.network_tier
  labels       = var.labels
}

resource "google_compute_firewall" "ssh" {
  name        = "${var.name_prefix}-ssh"
  description = local.description
  network     = google_compute_network.this.id
  direction   = "INGRESS"

  allow {
    protocol = "tcp"
    ports    = ["22"]
  }

  source_ranges = [var.operator_cidr]
}

resource "google_compute_firewall" "peers" {
  name        = "${var.name_prefix}-peers"
  description = local.description
  network     = google_compute_network.this.id
  direction   = "INGRESS"

  allow {
    protocol = "tcp"
    ports    = ["${var.iperf3_ports.first}-${var.iperf3_ports.last}"]
  }

  allow {
    protocol = "icmp"
  }

  source_ranges = sort([for name, ip in local.peer_ips : "${ip}/32"])
}

resource "google_compute_instance" "this" {
  for_each = var.regions

  # checkov:skip=CKV_GCP_40:A public address is the point: hosts measure the path between clouds over it
  # checkov:skip=CKV_GCP_38:A customer-supplied key per one-sweep disk adds key handling for no gain; Google encrypts at rest
  name         = "${var.name_prefix}-${each.key}"
  zone         = each.value.zone
  machine_type = each.value.machine_type
  labels       = var.labels

  boot_disk {
    auto_delete = true

    initialize_params {
      image  = local.images[each.key]
      size   = var.boot_disk_gib
      labels = var.labels
    }
  }

  network_interface {
    subnetwork = google_compute_subnetwork.this[each.key].id

    access_config {
      nat_ip       = google_compute_address.this[each.key].address
      network_tier = var.network_tier
    }
  }

  metadata = {
    ssh-keys               = "${var.ssh_user}:${trimspace(var.ssh_public_key)}"
    block-project-ssh-keys = "true"
    enable-oslogin         = "FALSE"
    serial-port-enable     = "false"
    startup-script         = local.startup_script
  }

  # Dead-man switch: GCP itself deletes the VM when the TTL is over.
  scheduling {
    provisioning_model          = "STANDARD"
    instance_termination_action = "DELETE"

    max_run_duration {
      seconds = var.ttl_minutes * 60
    }
  }

  shielded_instance_config {
    enable_secure_boot          = true
    enable_vtpm                 = true
    enable_integrity_monitoring = true
  }

  # Rules first, so the first SSH attempt and the first test are not dropped.
  depends_on = [google_compute_firewall.ssh, google_compute_firewall.peers]
}
