"""``jit``, ``defn`` and ``compile``: trace once per signature, compile, cache."""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from numerix import plugins
from numerix._meeting import DEALLOCATED, meeting_backend
from numerix._tensor import Tensor
from numerix._tensor import _speedups as SPEEDUPS
from numerix.backend import Backend
from numerix.configuration import effective_settings, get_default_backend
from numerix.defn.compilers import (
    AUTO,
    DEFAULT_COMPILER,
    ArgSpec,
    Compiler,
    Executable,
    check_auto_options,
    compiler_of,
    default_compiler,
    resolve_compiler,
)
from numerix.defn.expr import (
    Graph,
    PlainTree,
    _active,
    active_trace,
    format_type,
    freeze,
    trace_flat,
    unflatten,
)
from numerix.defn.trace import (
    NUMBER_DTYPES,
    Template,
    flatten_args,
    flatten_plain,
    leaf_spec,
)
from numerix.errors import (
    ArgumentError,
    BackendMismatchError,
    DeallocatedError,
    TracingError,
)
from numerix.ops.transfer import Sharding, device_put

if TYPE_CHECKING:
    from numerix.defn.auto import Choice

__all__ = ["jit", "defn", "compile", "Jitted", "Compiled", "CacheInfo", "cache_size"]

#: ``[defn] cache_size`` when nothing configures numerix (the settings model's default)
DEFAULT_CACHE_SIZE = 64


class CacheInfo(NamedTuple):
    """What ``f.cache_info()`` returns for a jitted ``f``: functools' four figures, and
    the programs dropped to keep the cache within ``maxsize``."""

    hits: int
    misses: int
    maxsize: int
    currsize: int
    evictions: int


def cache_size() -> int:
    """``[defn] cache_size`` here (``with numerix.config(...)``, the environment, the
    files): the most signatures a jitted function keeps compiled."""
    s = effective_settings()
    return DEFAULT_CACHE_SIZE if s is None else int(s.defn.cache_size)


def _number_backend(leaves: Sequence[Any]) -> Backend:
    """Where Python-number arguments become tensors: where the tensor arguments meet,
    else the default backend (of this call: its thread and context)."""
    met = meeting_backend("jit", [x for x in leaves if type(x) is Tensor], noun="argument")
    if met is not None:
        return met
    return get_default_backend()


def _specs(leaves: Sequence[Any], nb: Backend | None) -> list[ArgSpec]:
    out = []
    for x in leaves:
        if type(x) is Tensor:
            out.append(ArgSpec(x.shape, x.dtype, x.backend))
        else:
            assert nb is not None
            out.append(ArgSpec((), NUMBER_DTYPES[type(x)], nb))
    return out


def _to_tensors(
    leaves: list[Any], specs: Sequence[ArgSpec], keep: Backend | None = None
) -> list[Any]:
    """Numbers as 0-d tensors, tensors moved to their spec's backend (those already on
    ``keep``, the program's, stay: the program takes them as they are)."""
    from numerix.ops._core import check_scalar_fits, on_backend, scalar

    out = list(leaves)
    for i, x in enumerate(out):
        s = specs[i]
        if type(x) is not Tensor:
            check_scalar_fits("jit", x, s.dtype)
            out[i] = scalar(x, s.dtype, s.backend)
        elif x.backend is not s.backend and x.backend is not keep:
            out[i] = on_backend(x, s.backend)
    return out


def _names(what: str, names: Any) -> list[str]:
    if isinstance(names, str):
        return [names]
    names = list(names)
    if not all(isinstance(n, str) for n in names):
        raise ArgumentError(f"jit: {what} must be parameter names (strings), got {names!r}")
    return names


def _argnums_names(what: str, nums: Any, sig: inspect.Signature, fn: Any) -> list[str]:
    """The parameter names ``nums`` (an int or a sequence of ints, JAX's ``*_argnums``)
    stand for: positions among ``fn``'s positional parameters (negative from the last)."""
    seq = (nums,) if type(nums) is int else nums
    try:
        seq = tuple(seq)
    except TypeError:
        seq = (None,)
    if not all(type(i) is int for i in seq):
        raise ArgumentError(f"jit: {what} must be an int or a tuple of ints, got {nums!r}")
    positional = [
        p.name for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    out = []
    for i in seq:
        if not -len(positional) <= i < len(positional):
            raise ArgumentError(
                f"jit: {what} names position {i}, but {getattr(fn, '__name__', fn)!r} has "
                f"{len(positional)} positional parameter(s) ({', '.join(positional)}); give "
                f"the position of one, or its name with {what.replace('nums', 'names')}"
            )
        out.append(positional[i])
    return out


def _donated_leaves(tree: Any, leaves: list[Any], names: tuple[str, ...]) -> tuple[int, ...]:
    """The indices of the leaves that belong to the donated parameters ``names``."""
    import optree

    _, dyn = unflatten(tree, leaves)
    marks: dict[str, Any] = {
        n: optree.tree_map(lambda _, d=n in names: d, v) for n, v in dyn.items()
    }
    flat: list[Any] = optree.tree_leaves(((), marks))  # type: ignore[arg-type]
    return tuple(i for i, m in enumerate(flat) if m)


def _freeing(run: Any, donated: tuple[int, ...]) -> Any:
    """``run``, freeing the donated argument tensors after each call, so that a later use
    raises numerix's DeallocatedError rather than the library's deleted-buffer error."""

    def call(leaves: Sequence[Any]) -> Any:
        out = run(leaves)
        for i in donated:
            t = leaves[i]
            if type(t) is Tensor and t.backend is not DEALLOCATED:
                t.data = None
                t.backend = DEALLOCATED
        return out

    return call


class Jitted:
    """The state of a function compiled on first call for each signature (see :func:`jit`):
    its caches and the general call path. :func:`jit` and :func:`defn` return
    :attr:`function`, a plain function with a fast path for calls with positional
    tensors, which reaches this object as its ``jitted`` attribute."""

    def __init__(
        self,
        fn: Callable[..., Any],
        compiler: str | Compiler | None,
        static_argnames: Sequence[str],
        options: dict[str, Any],
        static_argnums: Any = (),
        donate_argnums: Any = (),
        donate_argnames: Sequence[str] = (),
    ) -> None:
        # updated=(): a jit of a jitted function must not take its __dict__ (its
        # is_cached and trace_count would answer for the inner function's cache)
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.compiler = compiler
        self.options = options
        static = _names("static_argnames", static_argnames)
        donated = _names("donate_argnames", donate_argnames)
        self._sig = None
        if static or donated or static_argnums != () or donate_argnums != ():
            self._sig = inspect.signature(fn)
            static += _argnums_names("static_argnums", static_argnums, self._sig, fn)
            donated += _argnums_names("donate_argnums", donate_argnums, self._sig, fn)
            for what, names in (("static_argnames", static), ("donate_argnames", donated)):
                missing = [n for n in names if n not in self._sig.parameters]
                if missing:
                    raise ArgumentError(
                        f"jit: {what} {missing} are not parameters of "
                        f"{getattr(fn, '__name__', fn)!r}; its parameters: "
                        f"{', '.join(self._sig.parameters)}"
                    )
            both = sorted(set(static) & set(donated))
            if both:
                raise ArgumentError(
                    f"jit: {both} are both static and donated; a static argument is a Python "
                    f"value, with no buffer to donate"
                )
        self.static_argnames = tuple(dict.fromkeys(static))
        #: the parameters whose tensors are donated to the program (see :func:`jit`)
        self.donate_argnames = tuple(dict.fromkeys(donated))
        # positional calls bind without inspect (its bind costs about 4 us): the
        # parameters' names, when every one is positional-or-keyword, and how many have
        # no default (fewer arguments than that: bind says what is missing)
        self._positional: tuple[str, ...] | None = None
        self._required = 0
        if self._sig is not None:
            params = list(self._sig.parameters.values())
            if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params):
                self._positional = tuple(p.name for p in params)
                self._required = sum(p.default is p.empty for p in params)
        try:
            self._options_key = freeze(options)
        except TypeError:
            raise ArgumentError(
                f"jit: compiler options must be hashable, got {options!r}"
            ) from None
        # signature -> (program, output tree, token); the tokens (ints: cheap to hash, where
        # a signature is a nested tuple hashed anew each time) least recently used first
        # in _order, an LRU of [defn] cache_size entries
        self._cache: dict[Any, tuple[Executable, Any, int]] = {}
        # signature -> which compiler runs it, and why (explain)
        # per signature, its Choice (a search's), or (compiler, how) for a compiler
        # named or defaulted, made a Choice when explain asks
        self._choices: dict[Any, Any] = {}
        self._order: OrderedDict[int, Any] = OrderedDict()
        self._tokens = itertools.count()
        # the common call (positional tensors only, no statics), keyed without flattening:
        # (program, output rebuilder or None, token, direct form or None)
        self._fast: dict[Any, tuple[Any, Any, int, Any]] = {}
        self._lock = threading.Lock()
        # [hits, misses, evictions]: a list the fast path updates in place
        self._stats = [0, 0, 0]
        #: how many times the function was traced (once per new signature)
        self.trace_count = 0
        #: what jit() returns: this object's calls behind a fast path (see _entry)
        self.function = _entry(self)

    # ------------------------------------------------------------ signature
    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """``(args, kwargs)`` of the dynamic arguments, and the static ones."""
        if self._sig is None:
            return (args, kwargs), ()
        bound: Any = None
        names = self._positional
        if names is not None and len(args) <= len(names):
            # what bind gives (the parameters' order), where bind accepts the call: no
            # keyword twice or unknown, every parameter with no default given
            rest = names[len(args) :]
            if all(k in rest for k in kwargs) and all(
                n in kwargs for n in names[len(args) : self._required]
            ):
                bound = [*zip(names, args), *((n, kwargs[n]) for n in rest if n in kwargs)]
        if bound is None:  # bind raises the call's error
            bound = self._sig.bind(*args, **kwargs).arguments.items()
        statics = []
        dyn = {}
        for name, v in bound:
            if name in self.static_argnames:
                try:
                    hash(v)
                except TypeError:
                    raise ArgumentError(
                        f"jit: static argument {name!r} must be hashable (it is part of the "
                        f"cache key), got {type(v).__name__}; pass a tuple instead of a list"
                    ) from None
                statics.append((name, type(v), v))
            else:
                dyn[name] = v
        return ((), dyn), tuple(statics)

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if self.compiler is None:
            cname, base = default_compiler()
            opts: Any = (cname, freeze({**base, **self.options}) if base else self._options_key)
        else:
            opts = (self.compiler, self._options_key)
        (dyn_args, dyn_kwargs), statics = self._split(args, kwargs)
        leaves, tree = flatten_args(dyn_args, dyn_kwargs, "jit")
        sig: list[Any] = []
        nb: Backend | None = None
        for x in leaves:
            t = type(x)
            if t is Tensor:
                sig.append(x.shape)
                sig.append(x.dtype)
                sig.append(x.backend)
            elif t in NUMBER_DTYPES:
                if nb is None:
                    nb = _number_backend(leaves)
                sig.append(t)
            elif t is Template:
                raise TracingError(
                    "jit: a template has no values to run on; compile ahead of time with "
                    "numerix.compile(fn, *templates), or pass tensors"
                )
            else:
                leaf_spec(x, "jit")  # raises, naming the type
        if nb is not None:
            # where the numbers go is part of the program: with no tensor argument, that
            # is the default backend of this call (its thread and context)
            sig.append(nb)
        return (tree, tuple(sig), statics, opts), leaves, tree, statics, nb

    def is_cached(self, *args: Any, **kwargs: Any) -> bool:
        """Whether a call with these arguments would reuse a compiled program
        (``EXLA.jit_cached?``); compiles nothing. False for arguments a call refuses
        (on backends that do not meet, deallocated)."""
        try:
            key = self._key(args, kwargs)[0]
        except (BackendMismatchError, DeallocatedError):
            return False
        return key in self._cache

    # ------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The general path: flatten the arguments, find or compile the program, run it."""
        if active_trace() is not None:  # inside another trace: inline
            return self.fn(*args, **kwargs)
        plain = None
        if not kwargs and self._sig is None:
            # tensors, and lists, tuples and dicts of tensors, one level deep (a list of
            # parameters): keyed without flattening, as the fast path keys positional
            # tensors; a key seen before replays the entry the full key found
            plain = _plain_key(args, self.compiler is None)
            if plain is not None:
                hit = self._fast.get(plain[0])
                if hit is not None:
                    run, rebuild, token, _ = hit
                    self._stats[0] += 1
                    try:
                        self._order.move_to_end(token)
                    except KeyError:  # dropped by another thread meanwhile
                        pass
                    return rebuild(run(plain[1]))
        key, leaves, tree, statics, nb = self._key(args, kwargs)
        cache = self._cache
        entry = cache.get(key)
        if entry is not None:
            self._stats[0] += 1
            try:
                self._order.move_to_end(entry[2])
            except KeyError:  # dropped by another thread meanwhile: the program still runs
                pass
        else:
            with self._lock:
                entry = cache.get(key)
                if entry is None:
                    run, out_tree, choice = self._compile(leaves, tree, statics, nb)
                    self._stats[1] += 1
                    token = next(self._tokens)
                    entry = cache[key] = (run, out_tree, token)
                    self._choices[key] = choice
                    self._order[token] = key
                    self._evict(cache_size())
                else:
                    self._stats[0] += 1
        run, out_tree, token = entry
        if not kwargs and self._sig is None and all(type(a) is Tensor for a in args):
            fast_key = _fast_key(args, self.compiler is None)
            fast: tuple[Any, Any, int, Any]
            if _single_leaf(out_tree):
                one = getattr(run, "one", None)
                # direct: what the compiled call runs in place of ``one`` (the program
                # on the payloads, see replay.runner); None where a runner does more
                direct = getattr(run, "direct", None)
                fast = (one or (lambda xs, run=run: run(xs)[0]), None, token, direct)
            else:
                fast = (run, _rebuilder(out_tree), token, None)
            with self._lock:
                if token in self._order:  # never a program the cache dropped
                    self._fast[fast_key] = fast
        elif plain is not None and nb is None:
            with self._lock:
                if token in self._order:
                    self._fast[plain[0]] = (run, _rebuilder(out_tree), token, None)
        if nb is not None:
            leaves = _to_tensors(leaves, _specs(leaves, nb))
        return unflatten(out_tree, run(leaves))

    def _evict(self, maxsize: int) -> None:
        """Drop the least recently used programs past ``maxsize`` (under the lock), and
        the fast path's entries for them: nothing holds a dropped program any more."""
        order = self._order
        while len(order) > maxsize:
            token, key = order.popitem(last=False)
            del self._cache[key]
            self._choices.pop(key, None)
            self._stats[2] += 1
            for fk in [fk for fk, v in self._fast.items() if v[2] == token]:
                del self._fast[fk]

    def cache_info(self) -> CacheInfo:
        """Hits, misses (compilations), ``maxsize`` (``[defn] cache_size`` here), the
        programs held and those dropped, as ``functools.lru_cache``'s ``cache_info``."""
        hits, misses, evictions = self._stats
        return CacheInfo(hits, misses, cache_size(), len(self._cache), evictions)

    def cache_clear(self) -> None:
        """Drop every compiled program and reset the counts; the next call of each
        signature traces and compiles again (``trace_count`` keeps counting)."""
        with self._lock:
            self._cache.clear()
            self._choices.clear()
            self._order.clear()
            self._fast.clear()
            self._stats[:] = [0, 0, 0]

    def _compile(
        self, leaves: list[Any], tree: Any, statics: Any, nb: Backend | None
    ) -> tuple[Executable, Any, Any]:
        specs = _specs(leaves, nb)
        met = meeting_backend("jit", specs, noun="argument")  # refused before tracing
        auto = self.compiler == AUTO
        if self.compiler is None:
            cname, base = default_compiler()
            if cname == AUTO:
                auto = True
                check_auto_options({**base, **self.options}, "jit", "the default_compiler setting")
        elif auto:
            check_auto_options(self.options, "jit", "compiler")
        if not auto:
            comp, options = resolve_compiler(self.compiler, self.options)
        self.trace_count += 1
        self.function.trace_count = self.trace_count  # type: ignore[attr-defined]
        fn = self.fn
        if self._sig is not None:
            sig = self._sig

            def fn(**dyn: Any) -> Any:
                arguments = {**dyn, **{n: v for n, _, v in statics}}
                ordered = {n: arguments[n] for n in sig.parameters if n in arguments}
                ba = inspect.BoundArguments(sig, ordered)  # type: ignore[arg-type, unused-ignore]
                return self.fn(*ba.args, **ba.kwargs)

        name = f"jit {getattr(self.fn, '__name__', 'fn')}"
        graph = trace_flat(fn, [(s.shape, s.dtype) for s in specs], tree, op=name, plain=True)
        run: Executable | None = None
        if auto:
            # the candidates run on this call's arguments (numbers as 0-d tensors), none
            # of them donated: the winner is compiled again below when it donates
            args = _to_tensors(leaves, specs) if nb is not None else leaves
            backend = met or nb or get_default_backend()

            def compile_with(cname: str) -> Executable:
                c = plugins.get_compiler(cname, "jit")
                return c.compile(graph, specs, c.validate_options({}))

            # imported here: the search's module (its dataclasses, a millisecond on a
            # process's first jitted call) serves compiler="auto" alone
            from numerix.defn.auto import choose

            run, found = choose(graph, specs, args, backend, compile_with)
            comp = plugins.get_compiler(found.compiler, "jit")
            options = comp.validate_options({})
            choice: Any = found
        else:
            choice = (comp.name, self._given())
        donated: tuple[int, ...] = ()
        if self.donate_argnames and getattr(comp, "donates", False):
            donated = _donated_leaves(tree, leaves, self.donate_argnames)
            options = {**options, "donate_leaves": donated}
            run = None
        if run is None:
            run = comp.compile(graph, specs, options)
        freed = getattr(run, "donated", ()) if donated else ()
        if freed:  # the program owns these buffers now: the tensors that held them are freed
            run = _freeing(run, freed)
        return run, graph.out_tree, choice

    def _given(self) -> str:
        """How the compiler of a function that does not search was chosen."""
        if self.compiler is None:
            s = effective_settings()
            return "the default compiler" if s is None else "the default_compiler setting"
        if isinstance(self.compiler, str):
            return f"jit(compiler={self.compiler!r}) names it"
        return "jit(compiler=...) gives it"

    def explain(self, *args: Any, **kwargs: Any) -> Choice:
        """Which compiler runs a call with these arguments, and why: with
        ``compiler="auto"``, the search's table (each candidate's compile time, first
        call and median) and its choice; otherwise the compiler named. A signature not
        compiled yet is compiled (and searched) first, by calling the function once."""
        key = self._key(args, kwargs)[0]
        choice = self._choices.get(key)
        if choice is None:
            if active_trace() is not None:
                raise TracingError(
                    f"explain: {self!r} is called inside a trace, where it is inlined, not "
                    f"compiled; call explain outside numerix.jit/grad/vmap"
                )
            self(*args, **kwargs)
            choice = self._choices[key]
        if type(choice) is tuple:  # a compiler named or defaulted: no search to show
            from numerix.defn.auto import given

            choice = self._choices[key] = given(*choice)
        return choice

    def __repr__(self) -> str:
        return f"<numerix.jit of {getattr(self.fn, '__qualname__', self.fn)!r}>"


def jit(
    fn: Callable[..., Any] | None = None,
    compiler: str | Compiler | None = None,
    static_argnames: Sequence[str] = (),
    *,
    static_argnums: int | Sequence[int] = (),
    donate_argnums: int | Sequence[int] = (),
    donate_argnames: Sequence[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
    **compiler_options: Any,
) -> Any:
    """``fn`` compiled on its first call for each signature, and cached (``jax.jit``,
    ``Nx.Defn.jit``).

    The signature is: the tree structure of the arguments (tuples, lists, dicts of
    tensors and Python numbers), each tensor's shape, dtype and backend, the values of
    the static arguments, the compiler and its options. Python numbers are *dynamic*
    0-d tensors of the default dtype (int64, float32; bool, complex64), as in Nx: a new
    value does not recompile, but they are not weakly typed inside the function.

    :param compiler: a compiler name (``"evaluator"``) or instance, or ``"auto"``: time
        every installed compiler serving the arguments' backend on a new signature's
        first call and keep the fastest (``f.explain(*args)`` says why; see
        docs/defn.md); default: the ``default_compiler`` setting (``with
        numerix.config(default_compiler=...)``).
    :param static_argnames: parameters passed as Python values (hashable), part of the
        cache key: a new value retraces.
    :param static_argnums: the same, by position among the positional parameters
        (``jax.jit``'s; negative counts from the last).
    :param donate_argnums: positional parameters whose tensors the program may reuse
        for its outputs (``jax.jit``'s donation; ``donate_argnames`` by name). The xla
        compiler donates their device buffers, and the tensors passed are freed after
        the call (using one raises ``DeallocatedError``); the evaluator and torch
        compilers keep them (a no-op).
    :param in_shardings: where the arguments go before the call: a
        :func:`numerix.sharding` for them all, or one entry per positional argument (a
        sharding, None to leave it as it is, or a tuple, list or dict of them matching
        the argument). Tensors spread over several devices make the program run over
        them (the computation follows the data; see docs/scaling.md).
    :param out_shardings: the same for the result.
    :param compiler_options: options for the compiler.

    >>> import numerix as nx
    >>> f = nx.jit(lambda x, y: x * y + 1)
    >>> f(nx.tensor([1.0, 2.0]), 3.0).tolist()
    [4.0, 7.0]
    >>> f.is_cached(nx.tensor([5.0, 6.0]), 0.5)
    True

    An unknown compiler is refused, listing the installed ones:

    >>> nx.jit(abs, compiler="nope")(1)
    Traceback (most recent call last):
    ...
    numerix.errors.ArgumentError: jit: no compiler named 'nope'; compilers: evaluator...
    """
    extra = (static_argnums, donate_argnums, donate_argnames)

    def make(f: Callable[..., Any]) -> Any:
        function = Jitted(f, compiler, static_argnames, compiler_options, *extra).function
        if in_shardings is None and out_shardings is None:
            return function
        return _placing(function, in_shardings, out_shardings)

    return make if fn is None else make(fn)


def _place(value: Any, spec: Any, where: str) -> Any:
    """``value`` placed as ``spec`` says: a :class:`~numerix.ops.transfer.Sharding` (for
    every tensor below), None (as it is), or a tuple, list or dict of specs matching
    ``value``'s (a prefix of its tree, as ``jax.jit``'s in_shardings)."""
    if spec is None:
        return value
    if type(spec) is Sharding:
        if type(value) is Tensor or isinstance(value, (tuple, list, dict)):
            return _device_put_tensors(value, spec)
        return value  # a Python number: a 0-d argument, placed where the others meet
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)):
        if len(spec) == len(value):
            return type(value)(_place(v, s, f"{where}[{i}]") for i, (v, s) in
                               enumerate(zip(value, spec)))  # fmt: skip
    elif isinstance(spec, dict) and isinstance(value, dict) and spec.keys() <= value.keys():
        return {k: _place(v, spec.get(k), f"{where}[{k!r}]") for k, v in value.items()}
    raise ArgumentError(
        f"jit: the shardings of {where} are {spec!r:.80}, which does not match its value "
        f"({type(value).__name__}); give a numerix.sharding(...), None, or a tuple, list or "
        f"dict of them shaped as the value"
    )


def _device_put_tensors(value: Any, spec: Sharding) -> Any:
    if type(value) is Tensor:
        return device_put(value, spec)
    if isinstance(value, dict):
        return {k: _device_put_tensors(v, spec) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_device_put_tensors(v, spec) for v in value)
    return value


def _placing(function: Any, in_shardings: Any, out_shardings: Any) -> Any:
    """``function`` with its arguments placed by ``in_shardings`` (one spec for them all,
    or one per positional argument) and its result by ``out_shardings``."""
    inner = function

    def call(*args: Any, **kwargs: Any) -> Any:
        if active_trace() is not None:  # inside a trace: the values are traced
            return inner(*args, **kwargs)
        if in_shardings is not None:
            if type(in_shardings) is Sharding:
                args = _place(args, in_shardings, "the arguments")
                kwargs = _place(kwargs, in_shardings, "the keyword arguments")
            else:
                spec = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
                if not isinstance(spec, tuple) or len(spec) != len(args):
                    raise ArgumentError(
                        f"jit: in_shardings must be one numerix.sharding(...) or one entry "
                        f"per positional argument ({len(args)} here), got {in_shardings!r:.80}"
                    )
                args = _place(args, spec, "the arguments")
        return _place(inner(*args, **kwargs), out_shardings, "the result")

    functools.update_wrapper(call, inner)
    return call


def defn(
    fn: Callable[..., Any] | None = None,
    *,
    static_argnames: Sequence[str] = (),
    compiler: str | Compiler | None = None,
    **compiler_options: Any,
) -> Any:
    """Mark ``fn`` as a numerical definition (Nx's ``defn``).

    Called eagerly it runs through :func:`jit` with the default compiler (traced and
    compiled once per signature); called from inside another trace (a defn, a jitted
    function, a branch of :func:`cond`) it inlines: the Python function runs on the
    traced tensors.

    >>> import numerix as nx
    >>> @nx.defn
    ... def softmax(x):
    ...     e = nx.exp(x - nx.max(x))
    ...     return e / nx.sum(e)
    >>> [round(v, 4) for v in softmax(nx.tensor([1.0, 2.0, 3.0])).tolist()]
    [0.09, 0.2447, 0.6652]

    A Python ``if`` on a traced value is refused:

    >>> @nx.defn
    ... def relu(x):
    ...     return x if x > 0 else -x
    >>> relu(nx.tensor(1.0))
    Traceback (most recent call last):
    ...
    numerix.errors.TracingError: bool: pred expr(trace) is a traced tensor ...numerix.cond...
    """
    if fn is None:
        return lambda f: defn(
            f, static_argnames=static_argnames, compiler=compiler, **compiler_options
        )
    return Jitted(fn, compiler, static_argnames, compiler_options).function


class Compiled:
    """A program compiled ahead of time by :func:`compile`."""

    #: the operation errors name
    _op = "compile"
    #: how an error says the program was made, and how to make one for other arguments
    _made = "compiled"
    _again = "compile again for these shapes and dtypes, or use numerix.jit"

    def __init__(
        self, fn: Callable[..., Any], run: Executable, graph: Graph, specs: Any, tree: Any
    ) -> None:
        functools.update_wrapper(self, fn, updated=())
        self.run = run
        self.graph = graph
        self.specs = specs
        self.tree = tree
        self.out_tree = graph.out_tree

    def __call__(self, *args: Any) -> Any:
        op = self._op
        leaves, tree = flatten_plain((args, {}), op)
        got = [leaf_spec(x, op) for x in leaves]
        want = [(s.shape, s.dtype) for s in self.specs]
        if tree != self.tree or got != want:
            w = ", ".join(format_type(*p) for p in want)
            g = ", ".join(format_type(*p) for p in got)
            raise TracingError(
                f"{op}: the program was {self._made} for arguments ({w}), got ({g}); {self._again}"
            )
        specs = self.specs
        # the arguments meet the program's backend (the meeting rule): host tensors move
        # to it, tensors of another backend or device are refused, as eagerly
        target = getattr(self.run, "backend", None) or meeting_backend(op, specs)
        meeting_backend(
            op,
            [x if type(x) is Tensor else specs[i] for i, x in enumerate(leaves)],
            target,
            noun="argument",
        )
        leaves = _to_tensors(leaves, specs, keep=target)
        return unflatten(self.out_tree, self.run(leaves))


def compile(
    fn: Callable[..., Any],
    *templates: Any,
    compiler: str | Compiler | None = None,
    **compiler_options: Any,
) -> Compiled:
    """Compile ``fn`` now, for arguments shaped as ``templates``, and return the program
    (``Nx.Defn.compile``, ``jax.jit(f).lower(...).compile()``).

    ``templates`` are :func:`numerix.template` s (or tensors, of which only the shape,
    dtype and backend count), in tuples, lists and dicts as ``fn`` takes them. The
    program accepts exactly those shapes and dtypes.

    >>> import numerix as nx
    >>> f = nx.compile(lambda x: x.sum(), nx.template((3,), nx.int32))
    >>> f(nx.tensor([1, 2, 3], dtype=nx.int32)).item()
    6

    Other shapes are refused:

    >>> f(nx.tensor([1, 2], dtype=nx.int32))
    Traceback (most recent call last):
    ...
    numerix.errors.TracingError: compile: the program was compiled for arguments (s32[3]), got (s32[2]); ...
    """
    leaves, tree = flatten_plain((templates, {}), "compile")
    specs = []
    for x in leaves:
        shape, dtype = leaf_spec(x, "compile")
        b = getattr(x, "backend", None) or get_default_backend()
        specs.append(ArgSpec(shape, dtype, b))
    met = meeting_backend("compile", specs, noun="argument")  # refused before tracing
    comp, options = resolve_compiler(
        compiler, compiler_options, met or get_default_backend(), "compile"
    )
    graph = trace_flat(fn, [(s.shape, s.dtype) for s in specs], tree, op="compile")
    return Compiled(fn, comp.compile(graph, specs, options), graph, specs, tree)


def _tuple_signature(a: Any) -> Any:
    """One argument's part of the fast path's key: ``(type, shape, dtype, backend)``."""
    return (type(a), a.shape, a.dtype, a.backend)


#: the key's part for one argument; with the compiled module, that tuple as a Signature
#: (equal as the tuple is, its hash computed once and kept on the tensor: a cached call
#: with the same tensors hashes nothing anew)
_signature: Callable[[Any], Any] = _tuple_signature if SPEEDUPS is None else SPEEDUPS.signature


def _plain_key(args: Sequence[Any], default: bool) -> tuple[Any, list[Any]] | None:
    """For positional arguments that are tensors or lists, tuples or dicts (keys all str)
    of tensors, at least one of them a container: a key naming each argument's
    container, keys and tensors' signatures (as :func:`_fast_key`), and the leaves in
    the order :func:`~numerix.defn.trace.flatten_args` gives them (a dict's by sorted
    key); None for other arguments (the general path flattens them)."""
    parts: list[Any] = []
    leaves: list[Any] = []
    container = False
    try:
        for a in args:
            t = type(a)
            if t is Tensor:
                parts.append(_signature(a))
                leaves.append(a)
                continue
            if t is dict:
                keys = tuple(a)
                if not all(type(k) is str for k in keys):
                    return None
                items = [a[k] for k in sorted(keys)]
            elif t is list or t is tuple:
                keys, items = (), a
            else:
                return None
            sigs = []
            for x in items:
                if type(x) is not Tensor:
                    return None
                sigs.append(_signature(x))
            parts.append((t, keys, tuple(sigs)))
            leaves += items
            container = True
    except AttributeError:  # a deleted field: the general path names it
        return None
    if not container:
        return None  # positional tensors alone: the fast path's own key
    key: Any = ("plain", tuple(parts))
    if default:
        key = (key, _default_key())
    return key, leaves


def _fast_key(args: Sequence[Any], default: bool) -> Any:
    """The fast path's cache key: the signature (:func:`_signature`) of the one argument,
    or a tuple of one per argument, and the default compiler's name and options when the
    function names none. Raises AttributeError for an argument that is not tensor-like
    (a number). ``_entry``'s call computes the same key inline, and so does the compiled
    one (``signature_of`` in ``numerix/_speedups.c``): keep the three alike."""
    if len(args) == 1:
        key: Any = _signature(args[0])
    else:
        key = tuple([_signature(a) for a in args])
    if default:
        key = (key, _default_key())
    return key


_UNCONFIGURED_KEY = (DEFAULT_COMPILER, ())


def _default_key() -> Any:
    """The default compiler's part of a cache key here: its name and options."""
    s = effective_settings()
    if s is None:  # nothing configures numerix: no options to freeze
        return _UNCONFIGURED_KEY
    cname, base = compiler_of(s)
    return (cname, freeze(base) if base else ())


def _entry(jitted: Jitted) -> Callable[..., Any]:
    """The function :func:`jit` returns for ``jitted``.

    A call with positional tensors of a signature seen before runs the cached program
    directly: one key built, one dict lookup, the program (a plain function, not an
    object's ``__call__``: the call itself costs less). Anything else goes through
    ``Jitted.__call__``.
    """
    slow = jitted.__call__
    fast = jitted._fast
    touch = jitted._order.move_to_end
    stats = jitted._stats
    default = jitted.compiler is None
    active = _active.get

    call: Any
    if jitted._sig is not None:  # static arguments: always the general path

        def call(*args: Any, **kwargs: Any) -> Any:
            return slow(*args, **kwargs)

    elif SPEEDUPS is not None:  # the same call, in C (numerix._speedups.JitCall)
        call = SPEEDUPS.JitCall(slow, fast, touch, stats, _active,
                                _default_key if default else None)  # fmt: skip
    else:

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs or active() is not None:  # inside a trace: Jitted.__call__ inlines
                return slow(*args, **kwargs)
            try:  # _fast_key, inline: this is the one place a cached call pays for it
                if len(args) == 1:
                    a = args[0]
                    key: Any = (type(a), a.shape, a.dtype, a.backend)
                else:
                    key = tuple([(type(a), a.shape, a.dtype, a.backend) for a in args])
                if default:
                    key = (key, _default_key())
                hit = fast.get(key)
            except (AttributeError, TypeError):  # a number, an unhashable leaf
                hit = None
            if hit is None:
                return slow(*args)
            run, rebuild, token, _ = hit
            stats[0] += 1
            try:
                touch(token)  # the least recently used is what the bound drops
            except KeyError:  # dropped by another thread meanwhile
                pass
            if rebuild is None:  # one tensor out: run returns it
                return run(args)
            return rebuild(run(args))

    fn = jitted.fn
    functools.update_wrapper(call, fn, updated=())
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    call.__qualname__ = f"jit({name})"
    call.fn = fn  # the Python function, undecorated
    call.jitted = jitted
    call.is_cached = jitted.is_cached
    call.cache_info = jitted.cache_info
    call.cache_clear = jitted.cache_clear
    call.explain = jitted.explain
    call.trace_count = jitted.trace_count
    return call


def _single_leaf(tree: Any) -> bool:
    """Whether ``tree`` is one bare leaf (the function returned a tensor, not a tuple)."""
    if type(tree) is PlainTree:
        return tree.kind == "leaf"
    import optree

    return bool(optree.treespec_is_leaf(tree))


def _rebuilder(tree: Any) -> Callable[[list[Any]], Any]:
    """What the fast path calls on a program's outputs to return them as ``tree``."""
    if type(tree) is PlainTree:
        if tree.kind == "tuple":
            return tuple
        if tree.kind == "nested":
            return tree.rebuild
    return functools.partial(unflatten, tree)
