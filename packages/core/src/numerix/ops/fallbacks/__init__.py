"""The core's fallbacks: each optional primitive written with the required core.

A backend without a method for an optional primitive runs its fallback
(:func:`numerix.primitives.fallback_rule`, :func:`numerix.backend.fallback_kernel`),
eagerly and under every compiler. A fallback takes what the kernel takes, ``(out,
*inputs, **params)`` with the rules-only parameters (``shape``, ``dtype``) as keywords,
and returns a tensor of ``out``'s shape and dtype on ``out.backend``, computed with
numerix ops whose primitives bottom out in the required ones
(:data:`numerix.primitives.REQUIRED`): never the primitive it stands for. Each is
checked by the conformance kit against its oracle, on ``binary`` restricted to the
required core (``packages/backend-binary/tests/core_only``) and on the example
backend over ``array-api-strict`` (``examples/backend-array-api``).

One module per family, the helpers they share in :mod:`numerix.ops.fallbacks._common`;
this package loads on the first call of a fallback.
"""

from numerix.ops.fallbacks import creation as creation
from numerix.ops.fallbacks import elementwise as elementwise
from numerix.ops.fallbacks import math as math
from numerix.ops.fallbacks import shape as shape
from numerix.ops.fallbacks import signal as signal
from numerix.ops.fallbacks import sort as sort
from numerix.ops.fallbacks import window as window
