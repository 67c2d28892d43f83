# One small Debian 12 VM per selected region. Public addresses are reserved
# first so the firewall can name every peer of the sweep: SSH is open only to
# the operator, iperf3 and ICMP only to the sweep's own hosts.

provider "aws" {
  region = var.home_region

  default_tags {
    tags = var.tags
  }
}

locals {
  name = "interregion-${var.sweep_id}"

  # The hosts' end of life, as an absolute time: the same as the expires_utc tag.
  expires_utc = timeadd(var.tags["created_utc"], "${var.ttl_minutes}m")

  own_addresses = { for r, eip in aws_eip.this : "aws:${r}" => eip.public_ip }
  peer_ips      = merge(var.peer_addresses, local.own_addresses)

  # A security group holds at most 60 rules per direction by default; two
  # ingress rules per peer, so peers are split over groups of 30 (an interface
  # takes up to 5 groups: 1 for SSH + 4 x 30 = 120 peers).
  peer_names  = sort(concat([for r in keys(var.regions) : "aws:${r}"], keys(var.peer_addresses)))
  peer_chunks = chunklist(local.peer_names, 30)
  peer_groups = merge([
    for r in keys(var.regions) : {
      for i, chunk in local.peer_chunks : "${r}/${i}" => { region = r, peers = chunk }
    }
  ]...)

  cloud_config = sensitive(join("\n", ["#cloud-config", yamlencode({
    # The host key is the sweep's own, so known_hosts is written before boot.
    ssh_deletekeys  = true
    ssh_genkeytypes = []
    ssh_keys = {
      ed25519_private = file(var.host_key_file)
      ed25519_public  = var.host_public_key
    }
    # Dead-man switch: with instance_initiated_shutdown_behavior = terminate,
    # a shutdown deletes the instance even if the controller is gone. A boot-time
    # unit schedules it from the absolute expiry, so a reboot cannot cancel it.
    write_files = [
      {
        path        = "/usr/local/sbin/interregion-deadman"
        permissions = "0755"
        content     = templatefile("${path.module}/deadman.sh.tftpl", { expires_utc = local.expires_utc })
      },
      {
        path        = "/etc/systemd/system/interregion-deadman.service"
        permissions = "0644"
        content     = file("${path.module}/interregion-deadman.service")
      },
    ]
    runcmd = [
      ["systemctl", "daemon-reload"],
      ["systemctl", "enable", "--now", "interregion-deadman.service"],
    ]
  })]))
}

data "aws_ssm_parameter" "debian" {
  for_each = var.regions

  region = each.key
  name   = var.ami_ssm_parameter
}

data "aws_vpc" "default" {
  for_each = var.regions

  region  = each.key
  default = true
}

# Zone names map to different physical zones per account; the hosts record the
# zone ID, which does not, so a later sweep can pin the same zone.
data "aws_availability_zones" "this" {
  for_each = var.regions

  # checkov:skip=CKV_AWS_394:Only a name-to-ID lookup for the host's own zone; a zone AWS adds later changes no answer
  region = each.key
}

# A pinned zone: the default VPC's default subnet in it.
data "aws_subnet" "pinned" {
  for_each = { for r, v in var.regions : r => v if v.availability_zone_id != "" }

  region               = each.key
  vpc_id               = data.aws_vpc.default[each.key].id
  availability_zone_id = each.value.availability_zone_id
  default_for_az       = true
}

resource "aws_eip" "this" {
  for_each = var.regions

  region = each.key
  domain = "vpc"
  tags   = { Name = "${local.name}-${each.key}" }
}

resource "aws_key_pair" "this" {
  for_each = var.regions

  region     = each.key
  key_name   = local.name
  public_key = var.ssh_public_key
}

resource "aws_security_group" "ssh" {
  for_each = var.regions

  region      = each.key
  name        = "${local.name}-ssh"
  description = "interregion ${var.sweep_id}: SSH from the operator only"
  vpc_id      = data.aws_vpc.default[each.key].id

  ingress {
    description = "SSH from the operator"
    protocol    = "tcp"
    from_port   = 22
    to_port     = 22
    cidr_blocks = [var.operator_cidr]
  }

  # Outbound web only, for Debian packages (iperf3); peers get their own egress below.
  egress {
    description = "HTTP to package mirrors"
    protocol    = "tcp"
    from_port   = 80
    to_port     = 80
    cidr_blocks = ["0.0.0.0/0"]
  }

  egress {
    description = "HTTPS to package mirrors"
    protocol    = "tcp"
    from_port   = 443
    to_port     = 443
    cidr_blocks = ["0.0.0.0/0"]
  }

  tags = { Name = "${local.name}-ssh" }
}

resource "aws_security_group" "peers" {
  for_each = local.peer_groups

  region      = each.value.region
  name        = "${local.name}-peers-${split("/", each.key)[1]}"
  description = "interregion ${var.sweep_id}: iperf3 and ICMP between the sweep hosts only"
  vpc_id      = data.aws_vpc.default[each.value.region].id

  ingress {
    description = "iperf3 from the sweep hosts"
    protocol    = "tcp"
    from_port   = var.iperf3_ports.first
    to_port     = var.iperf3_ports.last
    cidr_blocks = [for p in each.value.peers : "${local.peer_ips[p]}/32"]
  }

  ingress {
    description = "ICMP (ping, path MTU) from the sweep hosts"
    protocol    = "icmp"
    from_port   = -1
    to_port     = -1
    cidr_blocks = [for p in each.value.peers : "${local.peer_ips[p]}/32"]
  }

  egress {
    description = "Anything to the sweep hosts (iperf3 clients, ping)"
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    cidr_blocks = [for p in each.value.peers : "${local.peer_ips[p]}/32"]
  }

  tags = { Name = "${local.name}-peers-${split("/", each.key)[1]}" }
}

resource "aws_instance" "this" {
  for_each = var.regions

  # checkov:skip=CKV_AWS_126:Detailed monitoring costs extra and a host lives for one sweep only
  # checkov:skip=CKV2_AWS_41:The hosts call no AWS API, so they get no IAM role at all
  region                               = each.key
  ami                                  = each.value.ami != "" ? each.value.ami : data.aws_ssm_parameter.debian[each.key].insecure_value
  instance_type                        = each.value.machine_type
  subnet_id                            = try(data.aws_subnet.pinned[each.key].id, null)
  key_name                             = aws_key_pair.this[each.key].key_name
  vpc_security_group_ids               = concat([aws_security_group.ssh[each.key].id], [for k, g in local.peer_groups : aws_security_group.peers[k].id if g.region == each.key])
  instance_initiated_shutdown_behavior = "terminate"
  user_data_base64                     = base64encode(local.cloud_config)
  ebs_optimized                        = true
  monitoring                           = false

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required"
  }

  root_block_device {
    volume_type           = "gp3"
    volume_size           = var.root_volume_gib
    encrypted             = true
    delete_on_termination = true
  }

  tags        = { Name = "${local.name}-${each.key}" }
  volume_tags = merge(var.tags, { Name = "${local.name}-${each.key}" })
}

resource "aws_eip_association" "this" {
  for_each = var.regions

  region        = each.key
  allocation_id = aws_eip.this[each.key].id
  instance_id   = aws_instance.this[each.key].id
}
