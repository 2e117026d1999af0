"""Blocking work that Ctrl-C can interrupt: :func:`call_in_slices` runs a call on a
daemon thread and waits for it in short slices, so that a ``KeyboardInterrupt`` reaches
the caller's thread while the call blocks in native code (joining a distributed
runtime, a process group). Backends use it; it imports nothing from numerix."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["call_in_slices"]


def call_in_slices(fn: Callable[[], Any], name: str, slice_s: float = 0.1) -> BaseException | None:
    """Run ``fn()`` on a daemon thread named ``name`` and wait for it ``slice_s`` at a
    time; return the exception it raised (any ``BaseException``, handed over to the
    caller to wrap), or None when it returned. Interrupted, the caller gets its
    ``KeyboardInterrupt`` and the thread is left to end on its own (its call's timeout)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as e:  # handed to the caller's thread
            outcome.append(e)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(slice_s)
    return outcome[0] if outcome else None
