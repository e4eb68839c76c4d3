"""One registry per pluggable family (detector kinds, guards, probes, LLM backends).

A kind is registered by one call that gives its spec class (the ``kind``-tagged block it reads)
and its builder together; the family then finds every kind the modules of its package
register, so adding a kind is one module and one YAML::

    DETECTORS.add("sequence_classifier", ClassifierSpec, KIND)       # in classifiers.py

    @PLUGINS.register("toy", ToySpec)                                 # or as a decorator
    class Toy: ...

A builder named ``"module:attr"`` is imported only when a model is built from it (``vllm``
stays import-on-demand). A package whose every module is one kind may instead name what each
module declares (``declared="FORMAT"``: the guards); the declared object's ``kind`` is its key.
A kind registered by two modules, and a kind nobody registered, are errors that name the
modules or the known kinds. :meth:`Registry.union` is the tagged union of the registered specs,
the type a config field holds, so the block's tag (``kind``, ``backend``) picks its spec and an
unknown tag is refused with the known ones listed.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar, Union

from pydantic import Discriminator, Tag, create_model

from benevaudit.errors import ConfigError
from benevaudit.specs import Spec

B = TypeVar("B")
T = TypeVar("T")
SpecRef = Union[type[Spec], str, None]   # a spec class, or "module:Class" read when first needed


class RegistryError(ConfigError, TypeError):
    """A kind registered twice, or a module of a kinds package that declares none."""


class UnknownKind(ConfigError, KeyError):
    """A kind no module registered; the message lists the known ones."""

    __str__ = BaseException.__str__      # the message as written, not KeyError's repr of it


def resolve(ref: Any) -> Any:
    """A ``"module:attr"`` reference imported (only now); anything else as it is."""
    if isinstance(ref, str) and ":" in ref:
        module, _, attr = ref.partition(":")
        return getattr(importlib.import_module(module), attr)
    return ref


@dataclass(frozen=True)
class Entry(Generic[B]):
    """One registered kind: its tag value, its spec, its builder and the module that said so."""

    kind: str
    spec: SpecRef
    target: B | str              # the builder, or "module:attr" imported when first built
    origin: str

    def builder(self) -> B:
        built: B = resolve(self.target)
        return built

    def spec_class(self) -> type[Spec] | None:
        spec: type[Spec] | None = resolve(self.spec)
        return spec


@dataclass(frozen=True)
class Family:
    """Every kind of another registry, each built by ``build`` from its own spec (the member
    entry's) or, where it names none, from ``spec``: the guards as detector kinds."""

    members: Registry[Any]
    spec: SpecRef
    build: Any


def read_tag(tag: str) -> Callable[[Any], Any]:
    """The function that reads a block's ``tag`` (a mapping's key or a spec's attribute)."""
    def read(block: Any) -> Any:
        return block.get(tag) if isinstance(block, dict) else getattr(block, tag, None)
    return read


def tagged_union(specs: Mapping[str, type[Spec]], read: Callable[[Any], Any]) -> Any:
    """The union of ``specs`` told apart by ``read`` (a block -> its tag value)."""
    members = tuple(Annotated[spec, Tag(kind)] for kind, spec in specs.items())
    return Annotated[Union[members], Discriminator(read)]


def caller_module(depth: int) -> str:
    """The module of the frame ``depth`` levels up (the one that registers a kind)."""
    return str(sys._getframe(depth + 1).f_globals.get("__name__", "?"))


class Registry(Mapping[str, B]):
    """Kinds by name: each one's spec and builder, read from the modules of ``package`` (and
    of any package :meth:`include` adds). As a mapping it is kind -> builder."""

    def __init__(self, what: str, package: str | None = None, *, tag: str = "kind",
                 skip: tuple[str, ...] = (), declared: str | None = None) -> None:
        self.what = what                  # "detector kind", "guard", "LLM backend": for errors
        self.tag = tag                    # the block's key its kind is read from
        self.skip = skip                  # module names of the package that hold no kind
        self.declared = declared
        self.packages: list[str] = [package] if package else []
        self.families: list[Family] = []
        self._entries: dict[str, Entry[B]] = {}
        self._modules: set[str] | None = None   # the packages' modules, once imported
        self._walking = False
        self._unions: dict[Any, Any] = {}

    # ---- registering

    def add(self, kind: str, spec: SpecRef, build: B | str, origin: str | None = None
            ) -> Entry[B]:
        """Register ``kind``: the spec its block validates as, and its builder (an object, or
        ``"module:attr"`` imported when first asked for). The same module registering it
        again (a reload) replaces it; another module is refused."""
        origin = origin or caller_module(1)
        old = self._entries.get(kind)
        if old is not None and old.origin != origin:
            raise RegistryError(f"{self.what} {kind!r} is defined twice: in {old.origin} and "
                                f"{origin}")
        entry = Entry(kind, spec, build, origin)
        self._entries[kind] = entry
        return entry

    def register(self, kind: str, spec: SpecRef = None) -> Callable[[T], T]:
        """The decorator form of :meth:`add`: the decorated class or function is the builder."""
        def decorate(obj: T) -> T:
            origin = getattr(obj, "__module__", None)
            self.add(kind, spec, obj, origin)  # type: ignore[arg-type]
            return obj
        return decorate

    def family(self, members: Registry[Any], spec: SpecRef, build: Any) -> None:
        """Every kind of ``members`` is a kind here too, built by ``build``."""
        self.families.append(Family(members, spec, build))

    # ---- discovering

    def include(self, package: str) -> None:
        """Read the kinds of ``package``'s modules too (a plugin package on ``sys.path``)."""
        if package not in self.packages:
            self.packages.append(package)
        self.refresh()

    def exclude(self, package: str) -> None:
        """Forget ``package``, the kinds its modules registered and the modules themselves
        (including it again reads them afresh)."""
        self.packages = [p for p in self.packages if p != package]
        for kind, entry in list(self._entries.items()):
            if within(entry.origin, [package]):
                del self._entries[kind]
        for name in [m for m in sys.modules if within(m, [package])]:
            del sys.modules[name]
        self.refresh()

    def refresh(self) -> None:
        """List the packages' modules again when next asked (a module added or removed)."""
        self._modules = None
        for family in self.families:
            family.members.refresh()

    def modules(self) -> set[str]:
        """The packages' modules, each imported (which registers its kinds)."""
        if self._walking:       # a module read it while being imported: it would miss kinds
            raise RegistryError(f"the {self.what} registry was read while its modules were "
                                f"being imported; read it where it is used, not at import")
        if self._modules is None:
            self._walking = True
            try:
                self._modules = self._walk()
            finally:
                self._walking = False
        return self._modules

    def _walk(self) -> set[str]:
        """Import every module of the packages (the ``skip`` names aside)."""
        found: set[str] = set()
        for package in self.packages:
            path = importlib.import_module(package).__path__
            for info in pkgutil.walk_packages(path, f"{package}."):
                if info.name.rpartition(".")[2] in self.skip:
                    continue
                module = importlib.import_module(info.name)
                found.add(info.name)
                if self.declared and not info.ispkg:
                    self._declare(module)
        return found

    def _declare(self, module: Any) -> None:
        """Register what ``module`` declares under the registry's ``declared`` name."""
        obj = getattr(module, str(self.declared), None)
        kind = getattr(obj, "kind", None)
        if not isinstance(kind, str):
            raise RegistryError(
                f"{self.what} module {module.__name__} declares no {self.declared} (an object "
                f"with a kind); every module of {self.packages} but {list(self.skip)} is a "
                f"{self.what}")
        spec = getattr(obj, "spec", None)
        self.add(kind, spec, obj, origin=module.__name__)  # type: ignore[arg-type]

    # ---- reading

    def entries(self) -> dict[str, Entry[Any]]:
        """Every kind, in the order registered: those of modules the packages still hold (or
        registered from elsewhere), then each family's."""
        modules = self.modules()
        found: dict[str, Entry[Any]] = {
            kind: entry for kind, entry in self._entries.items()
            if entry.origin in modules or not within(entry.origin, self.packages)}
        for family in self.families:
            for kind, member in family.members.entries().items():
                if kind in found:
                    raise RegistryError(f"{self.what} {kind!r} is defined twice: in "
                                        f"{found[kind].origin} and {member.origin}")
                found[kind] = Entry(kind, member.spec or family.spec, family.build,
                                    member.origin)
        return found

    def entry(self, kind: str) -> Entry[Any]:
        """The entry of ``kind``; an unknown kind is an error naming the known ones."""
        entries = self.entries()
        if kind not in entries:
            raise UnknownKind(f"unknown {self.what} {kind!r}; known: {list(entries)}")
        return entries[kind]

    def specs(self) -> dict[str, type[Spec]]:
        """Each kind's spec class (kinds registered without one left out)."""
        specs = {kind: e.spec_class() for kind, e in self.entries().items()}
        return {kind: spec for kind, spec in specs.items() if spec is not None}

    def union(self, extra: Mapping[str, type[Spec]] | None = None,
              read: Callable[[Any], Any] | None = None) -> Any:
        """The tagged union of the registered specs (and ``extra`` tags beside them): the type
        a config field holding one of these blocks has."""
        specs = {**self.specs(), **(extra or {})}
        key = (tuple(specs.items()), read)      # the same kinds give the same type
        if key not in self._unions:
            self._unions[key] = tagged_union(specs, read or read_tag(self.tag))
        return self._unions[key]

    def validate(self, block: Any, key: str) -> Spec:
        """``block`` (found at dotted ``key``) validated as the spec its tag picks."""
        where, _, name = key.rpartition(".")
        fields: dict[str, Any] = {name: (self.union(), ...)}
        holder = create_model("Block", __base__=Spec, **fields)
        spec: Spec = getattr(holder.of({name: block}, where), name)
        return spec

    def __getitem__(self, kind: str) -> B:
        built: B = self.entry(kind).builder()
        return built

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and kind in self.entries()

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.entries())


def within(module: str, packages: list[str]) -> bool:
    """Whether ``module`` is one of ``packages`` or below one."""
    return any(module == p or module.startswith(f"{p}.") for p in packages)


__all__ = ["Entry", "Family", "Registry", "RegistryError", "UnknownKind", "read_tag", "resolve",
           "tagged_union"]
