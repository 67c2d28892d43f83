"""Publishing the static site to a folder, S3 or Google Cloud Storage.

Atomic from a reader's view: every other file goes first and the index
pages last, so a reader following links from the old index finds the files
it links to, and the new index only appears once everything it links to is
there. Each folder file is itself replaced atomically (write, then rename).
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.core.errors import UserError

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
}

# Pages change with every sweep; data and scripts can be cached a little.
CACHE_HTML = "no-cache"
CACHE_OTHER = "public, max-age=300"


@dataclass(frozen=True)
class Target:
    kind: str  # "dir", "s3" or "gs"
    location: str  # folder path, or bucket name
    prefix: str = ""  # key prefix in the bucket, no leading or trailing "/"

    def key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}" if self.prefix else relative


@dataclass(frozen=True)
class Published:
    files: int
    bytes: int
    order: tuple[str, ...]  # relative paths in upload order


def parse_target(text: str) -> Target:
    """'s3://bucket/prefix', 'gs://bucket/prefix' or a folder."""
    if not text.strip():
        # Path("") is the current folder: an empty --to must not publish into it
        raise UserError("--to is empty: give a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
    for scheme in ("s3", "gs"):
        if text.startswith(f"{scheme}://"):
            bucket, _, prefix = text[len(scheme) + 3 :].partition("/")
            if not bucket:
                raise UserError(f"--to {text}: no bucket: write {scheme}://BUCKET/PREFIX")
            return Target(scheme, bucket, prefix.strip("/"))
    if "://" in text:
        raise UserError(f"--to {text}: unknown scheme: use a folder, s3://... or gs://...")
    return Target("dir", text)


def content_type(path: Path | str) -> str:
    suffix = Path(path).suffix.lower()
    return (
        CONTENT_TYPES.get(suffix)
        or mimetypes.guess_type(str(path))[0]
        or ("application/octet-stream")
    )


def cache_control(path: Path | str) -> str:
    return CACHE_HTML if str(path).endswith(".html") else CACHE_OTHER


def upload_order(site_dir: Path) -> list[str]:
    """Relative paths of the site's files: assets and data, then pages, the root index last."""
    files = sorted(
        p.relative_to(site_dir).as_posix()
        for p in site_dir.rglob("*")
        if p.is_file() and not p.name.endswith(".tmp")
    )
    if "index.html" not in files:
        raise UserError(f"{site_dir} has no index.html: build it with 'interregion site' first")

    def rank(name: str) -> tuple[int, str]:
        if name == "index.html":
            return (2, name)
        return (1 if name.endswith(".html") else 0, name)

    return sorted(files, key=rank)


def publish_site(
    site_dir: Path,
    target_text: str,
    *,
    s3_client: Any = None,
    gcs_client: Any = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> Published:
    """Copy or upload every file of the site to the target, index.html last."""
    target = parse_target(target_text)
    order = upload_order(site_dir)
    if target.kind == "dir":
        total = _to_folder(site_dir, Path(target.location), order)
    elif target.kind == "s3":
        total = _to_s3(site_dir, target, order, s3_client)
    else:
        total = _to_gcs(site_dir, target, order, gcs_client)
    log(f"publish: {len(order)} files, index.html last")
    return Published(files=len(order), bytes=total, order=tuple(order))


def _to_folder(site_dir: Path, dest: Path, order: Sequence[str]) -> int:
    src, out = site_dir.resolve(), dest.resolve()
    if out == src or src in out.parents:
        raise UserError(f"--to {dest} is inside the site folder {site_dir}: pick another folder")
    if out.exists() and not out.is_dir():
        raise UserError(f"--to {dest} is a file, not a folder: give a folder to publish into")
    total = 0
    for rel in order:
        target = out / rel
        tmp = target.with_name(f".{target.name}.publishing")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, tmp)
            os.replace(tmp, target)
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise UserError(
                f"--to {dest}: cannot write {rel} ({e.strerror or e}): index.html was not "
                "replaced, so readers still see the previous site"
            ) from None
        total += target.stat().st_size
    return total


def _to_s3(site_dir: Path, target: Target, order: Sequence[str], client: Any) -> int:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = client if client is not None else boto3.client("s3")
    total = 0
    try:
        for rel in order:
            body = (site_dir / rel).read_bytes()
            s3.put_object(
                Bucket=target.location,
                Key=target.key(rel),
                Body=body,
                ContentType=content_type(rel),
                CacheControl=cache_control(rel),
            )
            total += len(body)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code", "")
        if code == "NoSuchBucket":
            raise UserError(
                f"s3 bucket '{target.location}' does not exist: create it or fix --to"
            ) from None
        raise UserError(f"s3 upload to {target.location} failed ({code}): {e}") from None
    except BotoCoreError as e:
        raise UserError(f"s3 upload failed: {e} (check your AWS credentials)") from None
    return total


def _to_gcs(site_dir: Path, target: Target, order: Sequence[str], client: Any) -> int:
    from google.api_core import exceptions as gexc
    from google.auth.exceptions import DefaultCredentialsError

    try:
        if client is None:
            from google.cloud import storage  # type: ignore[attr-defined]

            client = storage.Client()
        bucket = client.bucket(target.location)
        total = 0
        for rel in order:
            blob = bucket.blob(target.key(rel))
            blob.cache_control = cache_control(rel)
            path = site_dir / rel
            blob.upload_from_filename(str(path), content_type=content_type(rel))
            total += path.stat().st_size
    except DefaultCredentialsError:
        raise UserError(
            "no Google Cloud credentials: run 'gcloud auth application-default login' "
            "or set GOOGLE_APPLICATION_CREDENTIALS"
        ) from None
    except gexc.NotFound:
        raise UserError(
            f"gcs bucket '{target.location}' does not exist: create it or fix --to"
        ) from None
    except gexc.GoogleAPIError as e:
        raise UserError(f"gcs upload to {target.location} failed: {e}") from None
    return total
