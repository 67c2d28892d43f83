"""The real clouds: AWS and GCP.

Terraform (infra/aws, infra/gcp, infra/cloud) makes the hosts; the SDK code
here does what Terraform is not for: finding the regions an account can use,
checking credentials and quotas before anything is spent (preflight), and
reaping what a crashed sweep left behind (reap). `stacks` turns a sweep into
the variables of those stacks.
"""

CLOUD_STACKS = ("aws", "gcp", "cloud")  # backends that provision on real clouds
