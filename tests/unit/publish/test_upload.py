"""Publishing the site: a folder, S3 (moto) and GCS (a local fake of its JSON API)."""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import http.server
import json
import threading
import urllib.parse
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner
from moto import mock_aws

from orchestrator.cli import main
from orchestrator.core import outdir
from orchestrator.core.errors import UserError
from orchestrator.publish import upload


@pytest.fixture
def site_dir(tmp_path):
    """A small site in the layout 'interregion site' writes."""
    root = tmp_path / "site"
    files = {
        "index.html": "<html>latest</html>",
        "methodology.html": "<html>how</html>",
        "sweeps/s1.html": "<html>s1</html>",
        "assets/plotly.min.js": "/* plotly */",
        "assets/site.css": "body{}",
        "data/s1/measurements.csv": "sweep_id\ns1\n",
        "data/schema.json": "{}",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_parse_target():
    assert upload.parse_target("s3://b/p/q/") == upload.Target("s3", "b", "p/q")
    assert upload.parse_target("gs://b") == upload.Target("gs", "b", "")
    assert upload.parse_target("/var/www") == upload.Target("dir", "/var/www")
    with pytest.raises(UserError, match="no bucket"):
        upload.parse_target("s3:///x")
    with pytest.raises(UserError, match="unknown scheme"):
        upload.parse_target("ftp://host/x")


def test_content_types():
    assert upload.content_type("index.html") == "text/html; charset=utf-8"
    assert upload.content_type("a/plotly.min.js") == "text/javascript; charset=utf-8"
    assert upload.content_type("x.csv") == "text/csv; charset=utf-8"
    assert upload.content_type("schema.json") == "application/json"
    assert upload.content_type("chart.png") == "image/png"
    assert upload.content_type("blob.bin") == "application/octet-stream"


def test_upload_order_puts_the_index_last(site_dir):
    order = upload.upload_order(site_dir)
    assert order[-1] == "index.html"
    pages = [i for i, name in enumerate(order) if name.endswith(".html")]
    others = [i for i, name in enumerate(order) if not name.endswith(".html")]
    assert max(others) < min(pages)  # everything a page links to is there before it


def test_publish_to_a_folder(site_dir, tmp_path):
    dest = tmp_path / "www"
    upload.publish_site(site_dir, str(dest))  # an earlier publish, then the new site
    (site_dir / "index.html").write_text("<html>latest</html>")
    result = upload.publish_site(site_dir, str(dest))
    assert result.files == 7 and result.order[-1] == "index.html"
    assert (dest / "index.html").read_text() == "<html>latest</html>"
    assert (dest / "data/s1/measurements.csv").read_text() == "sweep_id\ns1\n"
    assert not list(dest.rglob("*.publishing"))
    with pytest.raises(UserError, match="inside the site folder"):
        upload.publish_site(site_dir, str(site_dir / "sub"))


def test_publish_needs_an_index(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"no index\.html"):
        upload.publish_site(tmp_path / "empty", str(tmp_path / "www"))


@mock_aws
def test_publish_to_s3(site_dir, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="ir-site")
    calls: list[str] = []
    real_put = s3.put_object

    def spy(**kwargs: Any) -> Any:
        calls.append(kwargs["Key"])
        return real_put(**kwargs)

    monkeypatch.setattr(s3, "put_object", spy)
    result = upload.publish_site(site_dir, "s3://ir-site/interregion/", s3_client=s3)
    assert result.files == 7
    assert calls[-1] == "interregion/index.html"
    head = s3.head_object(Bucket="ir-site", Key="interregion/index.html")
    assert head["ContentType"] == "text/html; charset=utf-8"
    assert head["CacheControl"] == "no-cache"
    js = s3.head_object(Bucket="ir-site", Key="interregion/assets/plotly.min.js")
    assert js["ContentType"] == "text/javascript; charset=utf-8"
    body = s3.get_object(Bucket="ir-site", Key="interregion/data/s1/measurements.csv")
    assert body["Body"].read() == b"sweep_id\ns1\n"
    assert body["ContentType"] == "text/csv; charset=utf-8"


@mock_aws
def test_publish_to_a_missing_s3_bucket_is_one_line(site_dir, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    with pytest.raises(UserError, match="s3 bucket 'nope' does not exist"):
        upload.publish_site(site_dir, "s3://nope/x", s3_client=s3)


@pytest.mark.slow
@mock_aws
def test_publish_command_to_s3(site_dir, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="ir-cli")
    result = CliRunner().invoke(main, ["publish", "--site", str(site_dir), "--to", "s3://ir-cli/p"])
    assert result.exit_code == 0, result.output
    assert "published 7 files" in result.output and "7 sent" in result.output
    keys = boto3.client("s3", region_name="us-east-1").list_objects_v2(Bucket="ir-cli")
    assert len(keys["Contents"]) == 7


# --- GCS: a local server speaking the part of the JSON API the client uses -------------


class FakeGCS(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _GCSHandler)
        self.buckets: dict[str, dict[str, dict[str, Any]]] = {"ir-site": {}}
        self.uploads: list[str] = []
        self.listings = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _GCSHandler(http.server.BaseHTTPRequestHandler):
    server: FakeGCS

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urllib.parse.urlparse(self.path)
        parts = url.path.split("/")
        # /storage/v1/b/<bucket>/o?prefix=...: the listing publish compares against
        if parts[1:3] != ["storage", "v1"] or parts[3] != "b" or parts[5:] != ["o"]:
            self._reply(404, {"error": {"code": 404, "message": "not found"}})
            return
        bucket = urllib.parse.unquote(parts[4])
        if bucket not in self.server.buckets:
            self._reply(404, {"error": {"code": 404, "message": "bucket not found"}})
            return
        prefix = urllib.parse.parse_qs(url.query).get("prefix", [""])[0]
        items = [
            {k: v for k, v in obj.items() if k != "data"}
            for name, obj in sorted(self.server.buckets[bucket].items())
            if name.startswith(prefix)
        ]
        self.server.listings += 1
        self._reply(200, {"kind": "storage#objects", "items": items})

    def do_POST(self) -> None:
        url = urllib.parse.urlparse(self.path)
        parts = url.path.split("/")
        # /upload/storage/v1/b/<bucket>/o?uploadType=multipart
        if parts[1:4] != ["upload", "storage", "v1"] or parts[4] != "b":
            self._reply(404, {"error": {"code": 404, "message": "not found"}})
            return
        bucket = urllib.parse.unquote(parts[5])
        if bucket not in self.server.buckets:
            self._reply(404, {"error": {"code": 404, "message": "bucket not found"}})
            return
        body = self.rfile.read(int(self.headers["Content-Length"]))
        raw = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
        message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(raw)
        meta_part, data_part = message.get_payload()
        meta = json.loads(meta_part.get_payload(decode=True))
        data = data_part.get_payload(decode=True)
        name = meta["name"]
        obj = {
            "kind": "storage#object",
            "bucket": bucket,
            "name": name,
            "size": str(len(data)),
            "contentType": meta.get("contentType", str(data_part["Content-Type"])),
            "cacheControl": meta.get("cacheControl", ""),
            "md5Hash": base64.b64encode(hashlib.md5(data).digest()).decode(),
            "data": data,
        }
        self.server.buckets[bucket][name] = obj
        self.server.uploads.append(name)
        self._reply(200, {k: v for k, v in obj.items() if k != "data"})


@pytest.fixture
def fake_gcs():
    server = FakeGCS()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _gcs_client(endpoint: str) -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    return storage.Client(
        project="test",
        credentials=AnonymousCredentials(),
        client_options={"api_endpoint": endpoint},
    )


def test_publish_to_gcs(site_dir, fake_gcs):
    client = _gcs_client(fake_gcs.endpoint)
    result = upload.publish_site(site_dir, "gs://ir-site/interregion", gcs_client=client)
    assert result.files == 7
    assert fake_gcs.uploads[-1] == "interregion/index.html"
    objects = fake_gcs.buckets["ir-site"]
    assert set(objects) == {f"interregion/{name}" for name in upload.upload_order(site_dir)}
    index = objects["interregion/index.html"]
    assert index["contentType"] == "text/html; charset=utf-8"
    assert index["cacheControl"] == "no-cache"
    assert index["data"] == b"<html>latest</html>"
    assert objects["interregion/data/schema.json"]["contentType"] == "application/json"


def test_publish_to_a_missing_gcs_bucket_is_one_line(site_dir, fake_gcs):
    client = _gcs_client(fake_gcs.endpoint)
    with pytest.raises(UserError, match="gcs bucket 'nope' does not exist"):
        upload.publish_site(site_dir, "gs://nope/x", gcs_client=client)


def test_site_files_stay_put(site_dir):
    before = sorted(str(p) for p in Path(site_dir).rglob("*"))
    upload.upload_order(site_dir)
    assert sorted(str(p) for p in Path(site_dir).rglob("*")) == before


# --- bad targets: one line, nothing written where it should not be -----------------


def test_an_empty_target_is_refused_not_the_current_folder(site_dir, tmp_path, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    for text in ("", "  "):
        result = CliRunner().invoke(main, ["publish", "--site", str(site_dir), "--to", text])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: --to is empty") and result.stderr.count("\n") == 1
    assert list(work.iterdir()) == []


def test_a_file_as_target_is_one_line(site_dir, tmp_path):
    target = tmp_path / "www"
    target.write_text("keep me")
    for to in (target, target / "sub"):
        result = CliRunner().invoke(main, ["publish", "--site", str(site_dir), "--to", str(to)])
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --to "), result.stderr
    assert target.read_text() == "keep me"


def test_a_failed_copy_leaves_the_old_index(site_dir, tmp_path):
    dest = tmp_path / "www"
    dest.mkdir()
    (dest / "index.html").write_text("old")
    (dest / "sweeps").write_text("a file where the site has a folder")
    # both written by an earlier publish (its list of them)
    outdir.write_manifest(dest, ["index.html", "sweeps"])
    with pytest.raises(UserError, match=r"cannot write sweeps/s1\.html.*index\.html was not"):
        upload.publish_site(site_dir, str(dest))
    assert (dest / "index.html").read_text() == "old"
    assert not list(dest.rglob(".*.publishing"))


# --- only what changed, a few at a time, tier by tier --------------------------------


def test_a_second_publish_to_a_folder_sends_only_what_changed(site_dir, tmp_path):
    dest = tmp_path / "www"
    first = upload.publish_site(site_dir, str(dest))
    assert first.uploaded == first.order and first.unchanged == 0
    inodes = {p: p.stat().st_ino for p in dest.rglob("*") if p.is_file()}
    (site_dir / "index.html").write_text("<html>LATEST</html>")  # same size, new content
    (site_dir / "data" / "s2").mkdir()
    (site_dir / "data" / "s2" / "measurements.csv").write_text("sweep_id\ns2\n")
    second = upload.publish_site(site_dir, str(dest))
    assert second.uploaded == ("data/s2/measurements.csv", "index.html")
    assert second.files == 8 and second.unchanged == 6
    assert second.bytes == len("sweep_id\ns2\n") + len("<html>LATEST</html>")
    assert (dest / "index.html").read_text() == "<html>LATEST</html>"
    for path, inode in inodes.items():  # a replaced file would have a new inode
        if path.relative_to(dest).as_posix() not in ("index.html", outdir.MANIFEST):
            assert path.stat().st_ino == inode, path
    assert set(second.order) <= outdir.read_manifest(dest)
    third = upload.publish_site(site_dir, str(dest))
    assert third.uploaded == () and third.bytes == 0


@mock_aws
def test_a_second_publish_to_s3_sends_only_what_changed(site_dir, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="ir-site")
    upload.publish_site(site_dir, "s3://ir-site/p", s3_client=s3)
    calls: list[str] = []
    real_put = s3.put_object

    def spy(**kwargs: Any) -> Any:
        calls.append(kwargs["Key"])
        return real_put(**kwargs)

    monkeypatch.setattr(s3, "put_object", spy)
    (site_dir / "assets" / "site.css").write_text("body{color:red}")
    result = upload.publish_site(site_dir, "s3://ir-site/p", s3_client=s3)
    assert calls == ["p/assets/site.css"] and result.uploaded == ("assets/site.css",)
    body = s3.get_object(Bucket="ir-site", Key="p/assets/site.css")["Body"].read()
    assert body == b"body{color:red}"
    # an object changed behind our back (another size or content) is sent again
    s3.put_object(Bucket="ir-site", Key="p/index.html", Body=b"<html>edited</html>")
    calls.clear()
    upload.publish_site(site_dir, "s3://ir-site/p", s3_client=s3)
    assert calls == ["p/index.html"]


def test_a_second_publish_to_gcs_sends_only_what_changed(site_dir, fake_gcs):
    client = _gcs_client(fake_gcs.endpoint)
    upload.publish_site(site_dir, "gs://ir-site/p", gcs_client=client)
    assert len(fake_gcs.uploads) == 7
    fake_gcs.uploads.clear()
    (site_dir / "sweeps" / "s1.html").write_text("<html>s1, again</html>")
    result = upload.publish_site(site_dir, "gs://ir-site/p", gcs_client=client)
    assert fake_gcs.uploads == ["p/sweeps/s1.html"] and result.unchanged == 6
    assert fake_gcs.buckets["ir-site"]["p/sweeps/s1.html"]["data"] == b"<html>s1, again</html>"


def test_files_go_up_in_parallel_and_tier_by_tier():
    names = ["index.html", "a.js", "b.css", "c.csv", "p.html", "q.html", "sub/index.html"]
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    # the three assets wait for each other: only uploads running at once get past it
    together = threading.Barrier(3, timeout=10)

    def send(name: str) -> int:
        with lock:
            events.append(("start", name))
        if upload.tier(name) == 0:
            together.wait()
        with lock:
            events.append(("end", name))
        return len(name)

    total = upload.send_in_tiers(names, send, workers=4)
    assert total == sum(len(n) for n in names)
    tiers = [upload.tier(name) for kind, name in events if kind == "start"]
    assert tiers == sorted(tiers) and tiers[-1] == 3  # the root index.html alone, last
    for i, (kind, name) in enumerate(events):  # a tier starts once the one before ended
        if kind == "start":
            ends_before = {n for k, n in events[:i] if k == "end"}
            assert {n for n in names if upload.tier(n) < upload.tier(name)} <= ends_before


def test_a_failed_upload_stops_before_the_pages():
    sent: list[str] = []

    def send(name: str) -> int:
        if name == "b.css":
            raise UserError("cannot write b.css")
        sent.append(name)
        return 1

    with pytest.raises(UserError, match=r"cannot write b\.css"):
        upload.send_in_tiers(["a.js", "b.css", "p.html", "index.html"], send, workers=2)
    assert "index.html" not in sent and "p.html" not in sent
