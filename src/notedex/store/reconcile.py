"""Transitional alias of notedex.indexing.reconcile, kept only for tests/helpers.py (not this
branch's to edit). Delete it once the helpers import notedex.indexing.reconcile."""

from __future__ import annotations

from notedex.indexing.reconcile import reconcile

__all__ = ["reconcile"]
