"""The ``numerix.plugins`` entry point: names the backend, imports nothing heavy."""

from numerix.hookspecs import hookimpl
from numerix.plugins import BackendEntry


@hookimpl
def numerix_backends() -> list[BackendEntry]:
    return [
        BackendEntry(
            name="array_api",
            target="numerix_array_api.backend:ArrayApiBackend",
            contract=2,
            description="array-api-strict arrays, the required core only (an example)",
        )
    ]
