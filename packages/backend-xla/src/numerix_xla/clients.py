"""XLA clients, as EXLA has them: ``host``, ``cuda``, ``rocm``, ``tpu``, each a singleton.

A client's options (``platform``, ``default_device_id``, ``preallocate``,
``memory_fraction``) come from the settings (``[backends.xla.clients.<name>]``).
JAX reads the memory options once, from ``XLA_PYTHON_CLIENT_PREALLOCATE`` and
``XLA_PYTHON_CLIENT_MEM_FRACTION``, when it starts a GPU platform: they are applied
just before, and asking for other values after the platform started is an error
rather than a silent no-op.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from numerix._threads import call_in_slices
from numerix.errors import BackendOptionError, ConfigError, first_line

__all__ = ["CLIENTS", "Client", "get_client", "client_options", "default_client", "target_problem"]

#: numerix client name -> JAX platform name
CLIENTS: dict[str, str] = {"host": "cpu", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu"}

_DEFAULTS: dict[str, Any] = {
    "platform": None,
    "default_device_id": 0,
    "preallocate": True,
    "memory_fraction": 0.9,
}


@dataclass(frozen=True)
class Client:
    """One XLA client: a JAX platform and the options it was started with."""

    name: str
    platform: str
    default_device_id: int
    preallocate: bool
    memory_fraction: float

    def devices(self) -> list[Any]:
        import jax

        try:
            return list(jax.devices(self.platform))
        except RuntimeError:
            return []

    def device(self, device_id: int) -> Any:
        devs = self.devices()
        if not 0 <= device_id < len(devs):
            raise BackendOptionError(
                f"backend 'xla': client {self.name!r} has {len(devs)} device(s) "
                f"(ids 0..{len(devs) - 1}), no device_id {device_id}"
                if devs
                else f"backend 'xla': client {self.name!r} has no devices on this machine; "
                f"use client='host'"
            )
        return devs[device_id]


_lock = threading.Lock()
_clients: dict[str, Client] = {}


def _xla_settings() -> Any:
    try:
        from numerix.configuration import settings

        return getattr(settings().backends, "xla", None)
    except ImportError:  # pragma: no cover - configuration is part of the core
        return None


def _configured(name: str) -> dict[str, Any]:
    """The options of client ``name`` that the settings set explicitly."""
    xla = _xla_settings()
    c = None if xla is None else xla.clients.get(name)
    if c is None:
        return {}
    return {k: getattr(c, k) for k in c.model_fields_set if getattr(c, k) is not None}


def client_options(name: str) -> dict[str, Any]:
    """The options of client ``name``: its ``[backends.xla.clients.<name>]`` settings over
    the defaults."""
    return {**_DEFAULTS, **_configured(name)}


def default_client() -> str:
    """The client tensors go to when none is named (``[backends.xla] client``)."""
    xla = _xla_settings()
    return "host" if xla is None else str(xla.client)


def kernel_cache_size() -> int:
    """``[backends.xla] kernel_cache_size``: the bound of the kernel cache."""
    xla = _xla_settings()
    return 512 if xla is None else int(xla.kernel_cache_size)


def x64_setting() -> bool | None:
    """``[backends.xla] x64`` (file, environment, ``numerix.config``), None when unset: see
    :mod:`numerix_xla._x64`."""
    xla = _xla_settings()
    return None if xla is None else xla.x64


def _started(platform: str) -> bool:
    # JAX keeps the started backends in xla_bridge._backends (a private registry: if it
    # moves, we only lose the "already started" check, never correctness)
    try:
        from jax._src import xla_bridge

        return platform in getattr(xla_bridge, "_backends", {})
    except Exception:
        return False


def get_client(name: str) -> Client:
    """The client singleton ``name``, starting it (and its memory options) on first use."""
    c = _clients.get(name)
    if c is not None:
        if c.platform != "cpu":
            _check_unchanged(c)
        return c
    if name not in CLIENTS:
        raise BackendOptionError(
            f"backend 'xla': unknown client {name!r}; clients are {', '.join(CLIENTS)}"
        )
    with _lock:
        c = _clients.get(name)
        if c is not None:
            return c
        start_distributed()
        explicit = _configured(name)
        o = {**_DEFAULTS, **explicit}
        platform = CLIENTS.get(o["platform"] or name, o["platform"] or name)
        if platform != "cpu":
            _apply_memory_options(name, platform, o, explicit)
        default_id = int(o["default_device_id"])
        if "default_device_id" not in explicit:
            default_id = _first_local_device(platform)
        c = Client(
            name, platform, default_id, bool(o["preallocate"]), float(o["memory_fraction"]),
        )  # fmt: skip
        _clients[name] = c
        return c


#: JAX's own defaults, in force when JAX started a platform before numerix could set them
_JAX_DEFAULTS = {"preallocate": True, "memory_fraction": 0.75}
_ENV = {
    "preallocate": "XLA_PYTHON_CLIENT_PREALLOCATE",
    "memory_fraction": "XLA_PYTHON_CLIENT_MEM_FRACTION",
}


def _env_value(key: str, text: str) -> Any:
    return text.strip().lower() not in ("0", "false", "no") if key == "preallocate" else float(text)


def _as_env(key: str, value: Any) -> str:
    return ("true" if value else "false") if key == "preallocate" else f"{float(value):g}"


def _memory_error(name: str, platform: str, key: str, want: Any, have: Any) -> BackendOptionError:
    return BackendOptionError(
        f"backend 'xla': client {name!r} asks for {key}={want!r}, but JAX already started "
        f"the {platform} platform with {key}={have!r} ({_ENV[key]}), which it reads only "
        f"once; set backends.xla.clients.{name}.{key} in the config file or the "
        f"environment (NUMERIX_BACKENDS__XLA__CLIENTS__{name.upper()}__{key.upper()}) so "
        f"that it applies before the first use of {platform} in this process"
    )


def _apply_memory_options(
    name: str, platform: str, o: dict[str, Any], explicit: dict[str, Any]
) -> None:
    # JAX reads these variables once, when it starts the platform: set them before, and
    # refuse an explicit setting it would ignore. A value only defaulted never overrides
    # a variable the user exported.
    if _started(platform):
        for key, var in _ENV.items():
            if key not in explicit:
                continue
            text = os.environ.get(var)
            have = _JAX_DEFAULTS[key] if text is None else _env_value(key, text)
            if have != explicit[key]:
                raise _memory_error(name, platform, key, explicit[key], have)
        return
    for key, var in _ENV.items():
        if key in explicit:
            os.environ[var] = _as_env(key, explicit[key])
        else:
            os.environ.setdefault(var, _as_env(key, o[key]))


def _check_unchanged(c: Client) -> None:
    # the settings changed after the client started (with numerix.config(...), a reload)
    for key, value in _configured(c.name).items():
        if key in _ENV and value != getattr(c, key):
            raise _memory_error(c.name, c.platform, key, value, getattr(c, key))


# ====================================================================== XLA_TARGET
#: XLA_TARGET -> the JAX platform it asks for and the distributions that provide it
#: (a prefix ending in "*" matches every version)
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cpu": ("cpu", ()),
    "cuda": ("cuda", ("jax-cuda12-plugin", "jax-cuda13-plugin")),
    "cuda12": ("cuda", ("jax-cuda12-plugin",)),
    "cuda13": ("cuda", ("jax-cuda13-plugin",)),
    "rocm": ("rocm", ("jax-rocm*",)),
    "tpu": ("tpu", ("libtpu", "libtpu-nightly")),
}


def _installed(patterns: tuple[str, ...]) -> list[str]:
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        n = (dist.metadata["Name"] or "").lower().replace("_", "-")
        for p in patterns:
            if n == p or (p.endswith("*") and n.startswith(p[:-1])):
                found.append(f"{n} {dist.version}")
    return sorted(set(found))


def target_problem(target: str) -> tuple[str, str] | None:
    """What keeps ``XLA_TARGET=target`` from working here, as ``(problem, fix)`` for
    ``numerix doctor``, or None when it works: the JAX plugin of the target is not
    installed, or it is but JAX sees no device of it."""
    from numerix.configuration import XLA_TARGET_EXTRAS

    if target not in TARGETS:
        return (
            f"XLA_TARGET={target}: not a target numerix-xla knows (known: {', '.join(TARGETS)})",
            "export XLA_TARGET=cpu   # or one of the known targets",
        )
    platform, dists = TARGETS[target]
    extra = XLA_TARGET_EXTRAS.get(target, "")
    req = f'"numerix-xla[{extra}]"' if extra else "numerix-xla"
    if dists and not _installed(dists):
        return (
            f"XLA_TARGET={target}, but no JAX plugin for {platform} is installed "
            f"(looked for {' or '.join(dists)})",
            f"pip install {req}",
        )
    name = next(k for k, v in CLIENTS.items() if v == platform)
    if not get_client(name).devices():
        return (
            f"XLA_TARGET={target}: the JAX {platform} plugin is installed ("
            f"{', '.join(_installed(dists)) or 'jaxlib'}) but JAX finds no {platform} device",
            f"pip install --force-reinstall {req}   # and check the driver: nvidia-smi / rocm-smi",
        )
    return None


_distributed_checked = False


def _first_local_device(platform: str) -> int:
    """The index, among the platform's devices, of this process's first device: 0 in a
    process of its own; over several processes the devices are every process's, and a
    tensor's default device must be one this process holds."""
    xla = _xla_settings()
    if xla is None or xla.distributed is None:
        return 0
    import jax

    try:
        every, local = jax.devices(platform), jax.local_devices(backend=platform)
    except RuntimeError:
        return 0
    return every.index(local[0]) if local else 0


def start_distributed() -> None:
    """Join the computation ``[backends.xla.distributed]`` describes
    (``jax.distributed.initialize``), once per process, before JAX starts a platform;
    nothing when it is unset or JAX's runtime was started by the program itself.

    The wait for the other processes runs on a daemon thread, watched in short slices:
    Ctrl-C reaches the caller (the thread gives up at the timeout).

    :raises ConfigError: JAX already started a platform, or the processes did not all
        join within the timeout (naming the coordinator and this process).
    """
    global _distributed_checked
    if _distributed_checked:
        return
    xla = _xla_settings()
    d = None if xla is None else xla.distributed
    if d is None:
        _distributed_checked = True
        return
    import jax

    if jax.distributed.is_initialized():
        _distributed_checked = True
        return
    where = (
        f"[backends.xla.distributed]: process {d.process_id} of {d.num_processes}, "
        f"coordinator {d.coordinator_address}"
    )
    started = [p for p in ("cpu", "cuda", "rocm", "tpu") if _started(p)]
    if started:
        raise ConfigError(
            f"{where}: JAX already started its {', '.join(started)} platform in this process, "
            f"and the distributed runtime must start first; let numerix's xla backend be the "
            f"first to use JAX, or call jax.distributed.initialize yourself before any JAX work"
        )
    jax.config.update("jax_cpu_collectives_implementation", d.cpu_collectives)

    def join() -> None:
        jax.distributed.initialize(
            coordinator_address=d.coordinator_address,
            num_processes=d.num_processes,
            process_id=d.process_id,
            local_device_ids=d.local_device_ids,
            initialization_timeout=d.initialization_timeout,
        )

    # JAX's client ends the whole process (a fatal error in its runtime) when a process
    # cannot register in time, process 0 waiting for the others included: the
    # processes meet from Python first, on the coordinator's port, and only then start
    # JAX's runtime there
    if d.num_processes > 1:
        if d.process_id == 0:
            _gather(d.coordinator_address, d.num_processes, d.initialization_timeout, where)
        else:
            _announce(
                d.coordinator_address, d.process_id, d.num_processes,
                d.initialization_timeout, where,
            )  # fmt: skip
    e = call_in_slices(join, "numerix-xla-distributed")
    if e is not None:
        raise ConfigError(
            f"{where}: could not join ({type(e).__name__}: {first_line(e)}); start every "
            f"process with the same coordinator_address and num_processes and its own "
            f"process_id, process 0 first reachable at that address"
        ) from None
    _distributed_checked = True


#: the first word of a process's announcement to process 0 (then its id and count)
_HELLO = "numerix-xla-join"


def _split(address: str, where: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"{where}: coordinator_address must be host:port, got {address!r}")
    return host.strip("[]"), int(port)


def _line(conn: socket.socket) -> str:
    """One short line from ``conn`` (at most 128 bytes; what came before EOF)."""
    data = b""
    while b"\n" not in data and len(data) < 128:
        chunk = conn.recv(128)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0].decode("ascii", "replace").strip()


def _gather(address: str, n: int, timeout: float, where: str) -> None:
    """Process 0: listen on the coordinator's port until the ``n - 1`` other processes
    have announced themselves (:func:`_announce`), then free the port for JAX's
    coordination service. Waits in short slices (Ctrl-C gets through).

    :raises ConfigError: past ``timeout`` seconds (naming the processes missing), or a
        process started with another ``num_processes``; the port cannot be listened on.
    """
    _, port = _split(address, where)
    try:
        if socket.has_dualstack_ipv6():
            server = socket.create_server(
                ("", port), family=socket.AF_INET6, dualstack_ipv6=True, reuse_port=False
            )
        else:
            server = socket.create_server(("", port))
    except OSError as e:
        raise ConfigError(
            f"{where}: process 0 cannot listen on port {port} ({first_line(e)}); give a "
            f"free port in coordinator_address"
        ) from None
    deadline = time.monotonic() + timeout
    joined: set[int] = set()
    with server:
        server.settimeout(0.2)
        while len(joined) < n - 1:
            if time.monotonic() >= deadline:
                missing = ", ".join(str(i) for i in range(1, n) if i not in joined)
                raise ConfigError(
                    f"{where}: process(es) {missing} did not join in {timeout:g} s; start "
                    f"every process with the same coordinator_address and num_processes and "
                    f"its own process_id (or raise initialization_timeout)"
                )
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2.0)
                try:
                    words = _line(conn).split()
                    if len(words) != 3 or words[0] != _HELLO:
                        continue  # not a numerix process: ignored
                    pid, count = int(words[1]), int(words[2])
                except (OSError, ValueError):
                    continue  # went away, or sent something else: it may try again
                try:
                    if count != n:
                        conn.sendall(f"error process 0 has num_processes={n}\n".encode())
                        raise ConfigError(
                            f"{where}: process {pid} was started with num_processes={count}; "
                            f"give every process the same num_processes"
                        )
                    if not 0 < pid < n or pid in joined:
                        taken = "taken" if pid in joined else f"not in 1..{n - 1}"
                        conn.sendall(f"error process_id {pid} is {taken}\n".encode())
                        continue
                    conn.sendall(b"ok\n")
                    joined.add(pid)
                except OSError:
                    continue  # went away before the answer: it tries again


def _announce(address: str, pid: int, n: int, timeout: float, where: str) -> None:
    """A process other than 0: tell process 0 (:func:`_gather`) it is here, trying until
    ``timeout`` seconds pass; each try waits at most half a second (Ctrl-C gets
    through).

    :raises ConfigError: the coordinator did not answer in time, refused this process
        (another num_processes; its process_id taken), or is not numerix's process 0.
    """
    host, port = _split(address, where)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5) as conn:
                conn.settimeout(2.0)
                conn.sendall(f"{_HELLO} {pid} {n}\n".encode())
                reply = _line(conn)
        except OSError as e:
            if time.monotonic() >= deadline:
                raise ConfigError(
                    f"{where}: the coordinator did not answer in {timeout:g} s "
                    f"({first_line(e)}); start process 0 first, at that address"
                ) from None
            time.sleep(0.1)
            continue
        if reply == "ok":
            return
        if reply.startswith("error "):
            raise ConfigError(f"{where}: process 0 refused this process: {reply[6:]}")
        raise ConfigError(
            f"{where}: {address} answered, but not as a numerix process 0 gathering the "
            f"others (it may have started without this process); start every process "
            f"anew, process 0 first"
        )
