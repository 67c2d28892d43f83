"""Publishing the static site to a folder, S3 or Google Cloud Storage.

Only what changed is sent: each file is compared with what the target already
holds (a folder's file by size and content, an object by size and MD5: S3's
ETag of a single-part upload, GCS's md5Hash), and the rest are skipped. Files
go up a few at a time (a small thread pool), in tiers: assets and data, then
the pages, then the index pages of subfolders, the root index.html last, each
tier finished before the next starts. So it is atomic from a reader's view: a
reader following links from the old index finds the files it links to, and the
new index only appears once everything it links to is there. Each folder file
is itself replaced atomically (write, then rename).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import mimetypes
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.core import (
    MANIFEST,
    UserError,
    check_only_ours,
    missing_extra,
    read_manifest,
    write_manifest,
)

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

# Uploads in flight at once: enough to hide a bucket's per-request latency, few enough
# for a small machine and the providers' request rates.
WORKERS = 8


@dataclass(frozen=True)
class Target:
    kind: str  # "dir", "s3" or "gs"
    location: str  # folder path, or bucket name
    prefix: str = ""  # key prefix in the bucket, no leading or trailing "/"

    def key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}" if self.prefix else relative


@dataclass(frozen=True)
class Published:
    files: int  # files of the site
    bytes: int  # bytes sent
    order: tuple[str, ...]  # the site's relative paths, in tier order
    uploaded: tuple[str, ...] = ()  # those sent (changed or new), in tier order

    @property
    def unchanged(self) -> int:
        return self.files - len(self.uploaded)


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
        if p.is_file() and not p.name.endswith(".tmp") and p.name != MANIFEST
    )
    if "index.html" not in files:
        raise UserError(f"{site_dir} has no index.html: build it with 'interregion site' first")

    return sorted(files, key=lambda name: (tier(name), name))


def tier(name: str) -> int:
    """0 assets and data, 1 pages, 2 a subfolder's index.html, 3 the root index.html."""
    if name == "index.html":
        return 3
    if name.endswith("/index.html"):
        return 2
    return 1 if name.endswith(".html") else 0


def md5_file(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _same_content(a: Path, b: Path) -> bool:
    """True when the two files hold the same bytes (size first, then SHA-256)."""
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        return _sha256(a) == _sha256(b)
    except OSError:
        return False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def send_in_tiers(names: Sequence[str], send: Callable[[str], int], workers: int = WORKERS) -> int:
    """Call `send(name)` for every name, `workers` at a time, tier by tier (`tier`): a
    tier starts only when the one before has finished. The first error stops the
    publish before the next tier (so never with a new index over missing files) and is
    raised. Returns the sum of what `send` returned."""
    total = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for _, group in itertools.groupby(sorted(names, key=tier), key=tier):
            futures = [pool.submit(send, name) for name in group]
            _, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in pending:
                future.cancel()
            wait(pending)
            for future in futures:
                error = None if future.cancelled() else future.exception()
                if error is not None:
                    raise error
            total += sum(f.result() for f in futures)
    return total


def publish_site(
    site_dir: Path,
    target_text: str,
    *,
    s3_client: Any = None,
    gcs_client: Any = None,
    workers: int = WORKERS,
    log: Callable[[str], None] = lambda _msg: None,
) -> Published:
    """Send the site's changed files to the target, a few at a time, index.html last."""
    target = parse_target(target_text)
    order = upload_order(site_dir)
    if target.kind == "dir":
        sent, total = _to_folder(site_dir, Path(target.location), order, workers)
    elif target.kind == "s3":
        sent, total = _to_s3(site_dir, target, order, s3_client, workers)
    else:
        sent, total = _to_gcs(site_dir, target, order, gcs_client, workers)
    uploaded = tuple(name for name in order if name in sent)
    log(
        f"publish: {len(uploaded)} of {len(order)} files changed, "
        f"{len(order) - len(uploaded)} already there; index.html last"
    )
    return Published(files=len(order), bytes=total, order=tuple(order), uploaded=uploaded)


def _changed(order: Iterable[str], same: Callable[[str], bool]) -> list[str]:
    return [name for name in order if not same(name)]


def _to_folder(
    site_dir: Path, dest: Path, order: Sequence[str], workers: int
) -> tuple[set[str], int]:
    src, out = site_dir.resolve(), dest.resolve()
    if out == src or src in out.parents:
        raise UserError(f"--to {dest} is inside the site folder {site_dir}: pick another folder")
    if out.exists() and not out.is_dir():
        raise UserError(f"--to {dest} is a file, not a folder: give a folder to publish into")
    # a folder of someone else's (a hand-written index.html) is never overwritten
    check_only_ours(out, "published site", "--to")
    listed = read_manifest(out)
    changed = _changed(order, lambda rel: _same_content(src / rel, out / rel))
    # unchanged files are ours too (listed, so a later publish may replace them)
    listed |= set(order) - set(changed)
    guard = threading.Lock()

    def copy(rel: str) -> int:
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
        with guard:
            listed.add(rel)
            # listed as each lands, so a publish cut short can be run again
            write_manifest(out, listed)
        return target.stat().st_size

    if not changed and out.is_dir():
        write_manifest(out, listed)
    return set(changed), send_in_tiers(changed, copy, workers)


def _to_s3(
    site_dir: Path, target: Target, order: Sequence[str], client: Any, workers: int
) -> tuple[set[str], int]:
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError as e:
        raise missing_extra("aws", e) from None

    s3 = client if client is not None else boto3.client("s3")

    def put(rel: str) -> int:
        body = (site_dir / rel).read_bytes()
        s3.put_object(
            Bucket=target.location,
            Key=target.key(rel),
            Body=body,
            ContentType=content_type(rel),
            CacheControl=cache_control(rel),
        )
        return len(body)

    try:
        held = _s3_held(s3, target)
        changed = _changed(
            order,
            lambda rel: (
                held.get(target.key(rel))
                == ((site_dir / rel).stat().st_size, md5_file(site_dir / rel))
            ),
        )
        return set(changed), send_in_tiers(changed, put, workers)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code", "")
        if code == "NoSuchBucket":
            raise UserError(
                f"s3 bucket '{target.location}' does not exist: create it or fix --to"
            ) from None
        raise UserError(f"s3 upload to {target.location} failed ({code}): {_line(e)}") from None
    except BotoCoreError as e:
        raise UserError(f"s3 upload failed: {_line(e)} (check your AWS credentials)") from None


def _s3_held(s3: Any, target: Target) -> dict[str, tuple[int, str]]:
    """Key to (size, MD5 hex) of the objects under the prefix. A multipart upload's ETag
    is not the content's MD5 (it holds a "-"): such an object never matches, and is sent."""
    prefix = f"{target.prefix}/" if target.prefix else ""
    held: dict[str, tuple[int, str]] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=target.location, Prefix=prefix):
        for obj in page.get("Contents", []):
            held[obj["Key"]] = (int(obj["Size"]), str(obj.get("ETag", "")).strip('"'))
    return held


def _to_gcs(
    site_dir: Path, target: Target, order: Sequence[str], client: Any, workers: int
) -> tuple[set[str], int]:
    try:
        from google.api_core import exceptions as gexc
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage  # type: ignore[attr-defined]
    except ImportError as e:
        raise missing_extra("gcp", e) from None

    try:
        if client is None:
            client = storage.Client()
        bucket = client.bucket(target.location)

        def upload(rel: str) -> int:
            blob = bucket.blob(target.key(rel))
            blob.cache_control = cache_control(rel)
            path = site_dir / rel
            blob.upload_from_filename(str(path), content_type=content_type(rel))
            return path.stat().st_size

        prefix = f"{target.prefix}/" if target.prefix else None
        held = {
            blob.name: (int(blob.size or 0), blob.md5_hash or "")
            for blob in client.list_blobs(target.location, prefix=prefix)
        }
        changed = _changed(
            order,
            lambda rel: (
                held.get(target.key(rel))
                == ((site_dir / rel).stat().st_size, _md5_base64(site_dir / rel))
            ),
        )
        return set(changed), send_in_tiers(changed, upload, workers)
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
        raise UserError(f"gcs upload to {target.location} failed: {_line(e)}") from None


def _line(error: BaseException, limit: int = 300) -> str:
    """An error's text on one line, cut to `limit` characters (a server may answer with
    a whole HTML page)."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _md5_base64(path: Path) -> str:
    """GCS's md5Hash: the base64 of the content's MD5."""
    return base64.b64encode(bytes.fromhex(md5_file(path))).decode()
