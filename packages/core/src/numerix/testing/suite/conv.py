"""Conformance of the conv ops against numpy."""

from __future__ import annotations
