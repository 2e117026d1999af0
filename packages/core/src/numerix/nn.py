"""Activation functions, as ``jax.nn`` and ``torch.nn.functional`` group them.

They are numerix ops (also at the top level: ``numerix.relu``) written once in the
core from primitives, so they run on every backend and inside ``jit``/``defn``.
"""

from __future__ import annotations

from numerix.ops.composites import gelu, log_softmax, relu, silu, softmax, softplus
from numerix.ops.elementwise import sigmoid

__all__ = ["relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax"]
