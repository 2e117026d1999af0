"""Conformance of the window ops against numpy."""

from __future__ import annotations
