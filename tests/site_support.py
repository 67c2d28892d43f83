"""A planted study and the references a page makes, for the site tests."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from orchestrator.study.report import PAGE_FILE, STUDIES_DIR, page_html


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value is not None:
                self.refs.append(value)


def _refs(text):
    parser = _Links()
    parser.feed(text)
    return parser.refs


def write_study(results, study_id):
    """A finished TCP study's page, where `study tcp` leaves it (results/studies/<id>/)."""
    folder = results / STUDIES_DIR / study_id
    folder.mkdir(parents=True)
    (folder / PAGE_FILE).write_text(page_html(f"## {study_id}\n| a | b |\n", study_id))
    (folder / "sweep.json").write_text(json.dumps({"sweep_id": study_id, "study": {"kind": "tcp"}}))


PLANTED = {
    "operator_cidr": "203.0.113.77/32",
    "gcp_project": "planted-project-4821",
    "aws_profile": "planted-profile-9133",
    "owner": "planted.owner@example.org",
    "error": "planted error: ssh to 203.0.113.99 refused",
}
