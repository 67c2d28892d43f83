terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  required_providers {
    # 6.x: one provider configuration, each resource takes its own `region`.
    aws = {
      source  = "hashicorp/aws"
      version = "~> 6.0"
    }
  }
}
