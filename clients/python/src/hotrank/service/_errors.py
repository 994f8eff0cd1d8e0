"""Validation errors as sentences a person can read (never parser output)."""

from __future__ import annotations

from typing import Any, Sequence

#: What a person reads when a field is wrong (the field's name is the key).
FIELD_MESSAGES = {
    "at": "at must be unix seconds (a number)",
    "publishedAt": "publishedAt must be unix seconds (a number)",
    "articleId": "articleId must be a non-empty string",
    "visitorId": "visitorId must be a non-empty string",
    "memberId": "memberId must be a non-empty string",
    "score": "score must be a whole number",
    "mode": "mode must be one of best, incr or set",
    "limit": "limit must be a whole number from 1 to 10000",
    "offset": "offset must be a whole number, 0 or more",
    "n": "n must be a whole number from 0 to 1000",
}


def readable(errors: Sequence[Any]) -> str:
    """FastAPI's validation errors as one sentence per problem, without parser output."""
    problems: list[str] = []
    for err in errors:
        kind = err.get("type", "")
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header", "cookie")]
        field = loc[0] if loc else ""
        if kind == "json_invalid":
            msg = "body is not valid JSON"
        elif kind in ("model_attributes_type", "dict_type") or (kind == "missing" and not field):
            msg = "body must be a JSON object"
        elif kind == "missing":
            msg = f"{field} is required"
        elif kind == "extra_forbidden":
            msg = f"{field} is not a known field (extra fields are not allowed)"
        elif field in FIELD_MESSAGES:
            msg = FIELD_MESSAGES[field]
        else:
            msg = f"{field or 'request'} is not valid"
        if msg not in problems:
            problems.append(msg)
    return "; ".join(problems) or "the request is not valid"
