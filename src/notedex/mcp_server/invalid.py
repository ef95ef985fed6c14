"""The JSON-RPC error reply to a line the server cannot read as a message: never silence.

The SDK's stdio transport hands the server an exception, not a message, for a line that is not
JSON, is not a JSON-RPC message, or holds a lone surrogate (``"\\ud800"``: JSON, but not Unicode
text, which the SDK's parser refuses), and the server drops it: a client then waits on that
request's id forever (issue 31). ``invalid_message_reply`` turns such an exception into the
reply JSON-RPC 2.0 prescribes (section 5.1): "Parse error" (-32700, id null) for text that is
not JSON, "Invalid Request" (-32600) with the request's own id when it can be read, else id null.
A malformed *response* of the client is not answered (a response never is). SDK-free: the
exception is read through ``errors()``, as pydantic's ``ValidationError`` spells it.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_UNREAD = object()


def invalid_message_reply(error: Exception) -> dict[str, Any] | None:
    """The error reply (wire shape) for the line ``error`` was raised for; None for a reply
    the client sent (no answer to a response)."""
    raw = _message_of(error)
    if raw is _UNREAD:
        return _reply(None, PARSE_ERROR, "Parse error: the line is not JSON text")
    if not isinstance(raw, dict):
        return _reply(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC message object")
    if "method" not in raw and ("result" in raw or "error" in raw):
        return None
    ident = raw.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        ident = None
    if _has_lone_surrogate(raw):
        reason = (
            "the message holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is "
            "not Unicode text; send well-formed UTF-8"
        )
    else:
        reason = _first_problem(error)
    return _reply(ident, INVALID_REQUEST, f"Invalid Request: {reason}")


def _reply(ident: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _problems(error: Exception) -> list[dict[str, Any]]:
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return []
    try:
        found = errors()
    except Exception:  # an exception of another kind: nothing to read
        return []
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _message_of(error: Exception) -> object:
    """The JSON value of the offending line: parsed again by ``json`` (which reads a lone
    surrogate) when the SDK's parser refused it, else the message object the validation saw.
    ``_UNREAD`` for a line that is not JSON; None when the exception says nothing."""
    problems = _problems(error)
    for item in problems:
        if item.get("type") == "json_invalid" and isinstance(item.get("input"), str):
            try:
                return json.loads(item["input"])
            except (ValueError, RecursionError):
                return _UNREAD
    candidates = [item["input"] for item in problems if isinstance(item.get("input"), dict)]
    for value in candidates:
        if "jsonrpc" in value or "method" in value:
            return value
    return candidates[0] if candidates else None


def _first_problem(error: Exception) -> str:
    for item in _problems(error):
        where = ".".join(str(part) for part in item.get("loc", ()) if not _is_union_tag(part))
        text = str(item.get("msg", "")).strip()
        if text:
            return f"{where}: {text}" if where else text
    return "not a valid JSON-RPC 2.0 message"


def _is_union_tag(part: object) -> bool:
    """pydantic names the member of a union it tried (``JSONRPCRequest``) in the location."""
    return isinstance(part, str) and part[:1].isupper()


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False
