"""Conformance of the composites ops against numpy."""

from __future__ import annotations
