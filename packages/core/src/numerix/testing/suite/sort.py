"""Conformance of the sort ops against numpy."""

from __future__ import annotations
