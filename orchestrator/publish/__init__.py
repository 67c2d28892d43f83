"""Publishing: a built static site copied to a folder, S3 or Google Cloud Storage, only what
changed, the root index last (`interregion publish`, a schedule's `publish:` key).

Public API: the modules below; other packages import only these names
(`from orchestrator.publish import upload`), never a name starting with `_`.

- `upload`: Publishing the static site to a folder, S3 or Google Cloud Storage.
"""

__all__ = [
    "upload",
]
