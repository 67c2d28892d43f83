"""The real clouds: AWS and GCP.

Terraform (infra/aws, infra/gcp, infra/cloud) makes the hosts; the SDK code
here does what Terraform is not for: finding the regions an account can use,
checking credentials and quotas before anything is spent (preflight), and
reaping what a crashed sweep left behind (reap). `stacks` turns a sweep into
the variables of those stacks.

Public API: the modules below; other packages import only these names.
- `aws`, `gcp`: each cloud's API client (boto3, google-cloud-compute), the SDKs
  imported only when used.
- `launch`: preflight, then the stack and its variables (what a sweep's provision calls).
- `stacks`: a sweep -> the variables of infra/aws, infra/gcp or infra/cloud.
- `preflight`: credentials, quotas and regions checked before anything is spent.
- `sync`: the regions an account can use, against regions.yaml.
- `reap`, `leftovers`: what crashed sweeps left on the clouds, found by label and removed.
- `labels`: the labels and tags every resource carries.
- `options`: the cloud flags as given (`CloudFlags`) and the `CloudOptions` they make, which a
  sweep's record keeps.
"""

__all__ = [
    "aws",
    "gcp",
    "labels",
    "launch",
    "leftovers",
    "options",
    "preflight",
    "reap",
    "stacks",
    "sync",
]
