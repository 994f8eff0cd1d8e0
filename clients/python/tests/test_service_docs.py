"""Runs the examples of docs/service.md against a real service process: each
```` ```http ```` block is a request (``$HOTRANK_SERVICE_TOKEN`` stands for the
service's token), and the fenced block right after it is the reply: its status line,
then its JSON body. ``computedAt`` (when the reply was computed) is the one value
not compared, since it is the time of the run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import redis

from conftest import REPO, Server, Service

DOC = REPO / "docs" / "service.md"
TOKEN = "doc-token-5e1"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


def examples(text: str) -> list[tuple[str, str]]:
    """(request, reply) pairs: an http block and the fenced block that follows it."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]
    pairs = []
    for (lang, body, _, end), (_, reply, start, _) in zip(blocks, blocks[1:]):
        if lang == "http" and text[end:start].strip() == "":
            pairs.append((body, reply))
    return pairs


def without_computed_at(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: without_computed_at(v) for k, v in x.items() if k != "computedAt"}
    return x


def test_the_examples_of_docs_service_md(redis_server: Server) -> None:
    r = redis.Redis(port=redis_server.port)
    r.flushall()
    pairs = examples(Path(DOC).read_text(encoding="utf-8"))
    assert len(pairs) >= 8
    svc = Service(redis_server.port, ["hot:{news}"], ["lb:{game1}"], token=TOKEN)
    try:
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            for request, reply in pairs:
                head, _, body = request.partition("\n\n")
                first, *header_lines = head.strip().splitlines()
                method, path = first.split()
                headers = dict(h.split(": ", 1) for h in header_lines)
                headers = {k: v.replace("$HOTRANK_SERVICE_TOKEN", TOKEN) for k, v in headers.items()}
                resp = http.request(method, path, headers=headers, content=body.strip().encode() or None)
                status, _, want = reply.partition("\n")
                assert f"{resp.status_code} {resp.reason_phrase}" == status.strip(), (request, resp.text)
                if want.strip():
                    assert without_computed_at(resp.json()) == without_computed_at(json.loads(want)), request
    finally:
        svc.stop()
