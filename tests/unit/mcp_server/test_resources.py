"""Resource URIs and cursors (mcp_server/resources.py): round trips, and what is refused."""

from __future__ import annotations

import pytest

from notedex.mcp_server.resources import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    ResourceError,
    decode_cursor,
    encode_cursor,
    note_uri,
    path_of_uri,
)


@pytest.mark.parametrize(
    "path", ["README.md", "Projects/Cobra CLI 框架.md", "a #b?c%d.md", "été/100% sure.md"]
)
def test_a_uri_and_a_cursor_name_the_path_they_were_made_from(path: str) -> None:
    uri = note_uri(path)
    assert uri.startswith("notedex:///") and uri.isascii() and " " not in uri
    assert "?" not in uri and "#" not in uri
    assert path_of_uri(uri) == path
    assert decode_cursor(encode_cursor(path)) == path


@pytest.mark.parametrize(
    "uri",
    [
        "file:///etc/passwd",
        "notedex://Areas/x.md",  # an authority, not a path
        "notedex:///",
        "notedex:///../x.md",
        "notedex:///a/%2e%2e/%2E%2E/x.md",
        "notedex:////etc/passwd",
        "notedex:///~/x.md",
        "notedex:///C:%5Cx.md",
        "notedex:///x.md?raw=1",
        "notedex:///x.md#part",
        "notedex:///%FF%FE.md",
        "notedex:///a%00b.md",
    ],
)
def test_a_uri_that_could_leave_the_vault_is_not_found(uri: str) -> None:
    with pytest.raises(ResourceError) as caught:
        path_of_uri(uri)
    assert caught.value.code == RESOURCE_NOT_FOUND and caught.value.uri == uri


@pytest.mark.parametrize("cursor", ["x", "!!!", encode_cursor("a")[:-3] + "@@@", "YWZ0ZXI"])
def test_a_cursor_this_server_did_not_make_is_invalid_params(cursor: str) -> None:
    with pytest.raises(ResourceError) as caught:
        decode_cursor(cursor)
    assert caught.value.code == INVALID_PARAMS


def test_no_cursor_starts_at_the_first_page() -> None:
    assert decode_cursor(None) == decode_cursor("") == ""
