terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  # No required_providers: terraform_data and local-exec are built into
  # Terraform, so `terraform init` works offline.
}
