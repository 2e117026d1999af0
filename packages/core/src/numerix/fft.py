"""The array API ``fft`` extension: ``numerix.fft.fft(x)``, ``numerix.fft.rfftn(x)``, ...

Each name is numerix's own op of :mod:`numerix.ops.fft` (also at ``numerix.<name>``
except ``fft``, whose top-level name is this module); ``__all__`` lists exactly the
functions of the array API's ``fft`` extension (2024.12).

In numerix 0.1.0 ``numerix.fft`` was the one-dimensional transform itself: calling the
module raises a TypeError naming ``numerix.fft.fft``.

>>> import numerix as nx
>>> nx.fft.fft(nx.tensor([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""

import sys as _sys
import types as _types
from typing import Any, NoReturn

from numerix.ops.fft import (
    fft,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfftn,
    rfft,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip


class _FFTModule(_types.ModuleType):
    # numerix.fft was a function before it became this module: a call says the new name
    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "numerix.fft is the fft extension module since numerix became an array API "
            "namespace; call numerix.fft.fft(x) for the one-dimensional transform "
            "(numerix.ops.fft(x) is the same function)"
        )


_sys.modules[__name__].__class__ = _FFTModule
