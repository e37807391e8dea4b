"""Reading the YAML files users and maintainers write: safe loading, and errors that point at a line.

Every data file (price sheets, GPU specs, scenarios, measurement records) goes through
:func:`load_model`, so a broken file always fails the same way: one line per problem,
``file:line: field.path: what is wrong``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from calculator.catalog import parse_cache
from calculator.errors import CalculatorError

__all__ = [
    "DATA_DIR",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_VALUES",
    "DataFileError",
    "ItemPlace",
    "ItemPlaces",
    "UnwritablePath",
    "check_writable",
    "item_id_lines",
    "key_line",
    "load_model",
    "load_model_text",
    "parse_yaml",
    "validation_lines",
    "write_atomically",
]

# The bundled catalogues (price sheets, GPU and model specs, published measurements, presets) ship
# inside the package, so an installed wheel finds them without the source checkout.
DATA_DIR = Path(__file__).resolve().parent.parent / "data"

M = TypeVar("M", bound=BaseModel)


class DataFileError(CalculatorError, ValueError):
    """A data file could not be read or failed validation.

    ``str()`` lists one ``file:line: field: message`` per problem, ready to print.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


MAX_YAML_DEPTH = 64
"""Deepest nesting of a data file: the schemas nest five levels; a deeper file is hostile or broken."""
MAX_YAML_VALUES = 1_000_000
"""Values a data file may hold once its aliases are expanded (a price sheet holds a few thousand)."""
MAX_YAML_CHARS = 1024 * 1024
"""Largest data file read: the bundled price sheets are a few tens of kilobytes, a measurements file of 700
records is about a megabyte. Users' files go through PyYAML's pure-Python parser (strict about duplicate keys
and aliases), about 1 MB/s, and a validation error composes the file again to name the line: a 16 MiB cap let
a 15 MB file take 16 s to be refused, this one answers in about a second."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (PyYAML would silently keep the last one, and a price
    typed twice must not win by position), nesting deeper than :data:`MAX_YAML_DEPTH`, and aliases
    that expand beyond :data:`MAX_YAML_VALUES` values or refer to themselves (a "billion laughs" file)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            _expanded_size(node, {}, set())
        return node


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Values under ``node`` with every alias expanded (each anchored node counted once per use)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    if id(node) in open_nodes:
        raise yaml.composer.ComposerError(None, None, "an alias refers to a node that contains it", node.start_mark)
    size = 1
    if isinstance(node, yaml.SequenceNode | yaml.MappingNode):
        open_nodes.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
        for child in children:
            size += _expanded_size(child, sizes, open_nodes)
            if size > MAX_YAML_VALUES:
                raise yaml.composer.ComposerError(
                    None, None, f"its aliases expand to more than {MAX_YAML_VALUES:,} values", node.start_mark
                )
        open_nodes.discard(id(node))
    sizes[id(node)] = size
    return size


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, "a key must be a plain value, not a list or mapping",
                key_node.start_mark,
            ) from None  # fmt: skip
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"found duplicate key {key!r} (first on line {seen[key] + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=deep))


def _checked(kind: str, construct: Any) -> Any:
    """A scalar constructor whose value errors (``2026-02-30``, a 5,000-digit integer) name the line."""

    def build(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{str(node.value)[:40]!r} is not a {kind} ({str(exc).split(';')[0]})", node.start_mark
            ) from None

    return build


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]  # absent without libyaml
    """libyaml's parser (C: the catalogues a command reads load several times faster) with the safe
    constructors of :class:`_UniqueKeyLoader`, for the files this package ships only (:func:`_libyaml`).

    On those the two loaders are checked to give the same data and lines (tests/test_cli_startup.py),
    which covers the nesting and alias limits this one does not check again. On other text libyaml
    accepts some that PyYAML refuses (a tab in a plain value, ``|#``) and reads a bare ``!`` as "" where
    PyYAML reads null, so a user's file is read by :class:`_UniqueKeyLoader` alone."""


for _loader in (_UniqueKeyLoader, _FastLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _loader.add_constructor(
        "tag:yaml.org,2002:timestamp", _checked("date that exists", yaml.SafeLoader.construct_yaml_timestamp)
    )
    _loader.add_constructor("tag:yaml.org,2002:int", _checked("usable integer", yaml.SafeLoader.construct_yaml_int))


def _libyaml(text: str, path: Path, compose: bool = False) -> Any:
    """A bundled file's data (with ``compose``, its node tree) read by :class:`_FastLoader`; None when it
    is not read so: another file, PyYAML without libyaml, or any failure, which the pure-Python loader
    then reports exactly as for a user's file. (An empty file gives None too, and the pure-Python
    loader then says it is empty.)"""
    if not (yaml.__with_libyaml__ and Path(path).resolve().is_relative_to(DATA_DIR)):
        return None
    loader = _FastLoader(text)
    try:
        return loader.get_single_node() if compose else loader.get_single_data()
    except Exception:
        return None
    finally:
        loader.dispose()


def parse_yaml(text: str, name: str) -> Any:
    """Parse YAML text safely; a syntax error becomes a DataFileError naming ``name`` and the line."""
    try:
        loader = _UniqueKeyLoader(text)  # a SafeLoader: only plain YAML types, never Python objects
    except yaml.reader.ReaderError as exc:  # a control character (NUL, BEL ...): checked before parsing
        where = text.count("\n", 0, exc.position) + 1
        raise DataFileError(
            [f"{name}:{where}: YAML syntax error: control character #x{exc.character:02x} is not allowed in YAML"]
        ) from None
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or str(exc)
        raise DataFileError([f"{name}{line}: YAML syntax error: {problem}"]) from exc
    except yaml.YAMLError as exc:
        raise DataFileError([f"{name}: YAML syntax error: {exc}"]) from exc
    finally:
        loader.dispose()


def _node_at(node: yaml.Node, loc: tuple[int | str, ...]) -> yaml.Node:
    """Walk pydantic's error location through the YAML node tree, as far as it goes."""
    for part in loc:
        match: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            match = node.value[part]
        if match is None:
            continue  # union tags such as 'serverless' are not YAML keys
        node = match
    return node


def _describe(loc: tuple[int | str, ...], data: Any) -> str:
    """A field path that names list items by their id where they have one (offers.3[h100-sxm])."""
    parts: list[str] = []
    cursor = data
    for part in loc:
        if isinstance(cursor, dict) and isinstance(part, str) and part not in cursor and cursor.get("kind") == part:
            continue  # the union tag pydantic adds ('serverless'), not a field the user wrote
        if isinstance(part, int) and isinstance(cursor, list) and part < len(cursor):
            item = cursor[part]
            label = ""
            if isinstance(item, dict):
                ident = item.get("id") or item.get("model") or item.get("effective")
                if ident is not None:
                    label = f"[{ident}]"
            parts.append(f"{part}{label}")
            cursor = item
        else:
            parts.append(str(part))
            cursor = cursor.get(part) if isinstance(cursor, dict) else None
    return ".".join(parts) or "the whole file"


_NOT_A_MAPPING = frozenset({"model_type", "model_attributes_type", "dict_type"})


def _kind(value: Any) -> str:
    """What a value that should have been a mapping is, in words."""
    if value is None:
        return "nothing"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        return "a line of text"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "a single value"


def validation_lines(exc: ValidationError, name: str, text: str | None = None, data: Any = None) -> list[str]:
    """Turn a pydantic ValidationError into ``name:line: field: message`` lines."""
    root: yaml.Node | None = None
    if text is not None:
        try:
            root = yaml.compose(text, Loader=_UniqueKeyLoader)
        except yaml.YAMLError:
            root = None
    lines = []
    errors = exc.errors(include_url=False)
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "too_short" and any(len(e["loc"]) > len(loc) and e["loc"][: len(loc)] == loc for e in errors):
            continue  # a list emptied by its own broken items: the items' errors say what is wrong
        where = name
        if root is not None:
            where = f"{name}:{_node_at(root, loc).start_mark.line + 1}"
        msg = err["msg"]
        if err["type"] in _NOT_A_MAPPING:  # pydantic's words name the model's class
            msg = f"should be a mapping of fields (name: value lines), not {_kind(err.get('input'))}"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see the schema in the README)"
        lines.append(f"{where}: {_describe(loc, data)}: {msg}")
    return lines


def load_model(path: Path, model: type[M], context: dict[str, Any] | None = None) -> M:
    """Read ``path`` as YAML and validate it as ``model``; every failure is a DataFileError."""
    from calculator.catalog.textfile import read_text  # it raises this module's DataFileError

    name = str(path)
    text = read_text(path, name, MAX_YAML_CHARS)
    data = _bundled_data(text, path)
    return _validated(parse_yaml(text, name) if data is None else data, text, name, model, context)


def _bundled_data(text: str, path: Path) -> Any:
    """A bundled file's data as :func:`_libyaml` reads it, from the parse cache when it holds this very text
    (:mod:`calculator.catalog.parse_cache`; the data is validated by the caller either way); None as there."""
    resolved = Path(path).resolve()
    if not (yaml.__with_libyaml__ and resolved.is_relative_to(DATA_DIR)):
        return None
    hit, data = parse_cache.cached(resolved, text)
    if hit:
        return data
    data = _libyaml(text, resolved)
    if data is not None:
        parse_cache.store(resolved, text, data)
    return data


def load_model_text(text: str, name: str, model: type[M], context: dict[str, Any] | None = None) -> M:
    """Like :func:`load_model` for text that did not come from a file (an upload, a URL), with its size rule."""
    if len(text) > MAX_YAML_CHARS:
        raise DataFileError([f"{name}: larger than {MAX_YAML_CHARS:,} characters; data files are small text files"])
    return _validated(parse_yaml(text, name), text, name, model, context)


def _validated(data: Any, text: str, name: str, model: type[M], context: dict[str, Any] | None) -> M:
    if data is None:
        raise DataFileError([f"{name}: the file is empty"])
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise DataFileError(validation_lines(exc, name, text, data)) from exc


def _compose(path: Path) -> yaml.Node | None:
    from calculator.catalog.textfile import read_text

    try:
        text = read_text(path, str(path), MAX_YAML_CHARS)
    except DataFileError:
        return None
    node: yaml.Node | None = _libyaml(text, path, compose=True)  # every bundled GPU and model file is read so
    if node is not None:
        return node
    try:
        return yaml.compose(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError:
        return None


def key_line(path: Path, key: str) -> int:
    """1-based line of a top-level key's value (1 when it cannot be found), for cross-file errors."""
    root = _compose(path)
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if getattr(k, "value", None) == key:
                return int(v.start_mark.line) + 1
    return 1


def item_id_lines(path: Path, list_key: str) -> dict[int, int]:
    """1-based line of each ``list_key[i].id`` value in the file, by index (duplicate-id errors)."""
    root = _compose(path)
    lines: dict[int, int] = {}
    if not isinstance(root, yaml.MappingNode):
        return lines
    items = next((v for k, v in root.value if getattr(k, "value", None) == list_key), None)
    if not isinstance(items, yaml.SequenceNode):
        return lines
    for index, item in enumerate(items.value):
        line = item.start_mark.line + 1
        if isinstance(item, yaml.MappingNode):
            line = next((v.start_mark.line + 1 for k, v in item.value if getattr(k, "value", None) == "id"), line)
        lines[index] = int(line)
    return lines


class ItemPlaces:
    """Where each ``list_key[i].id`` of one file is, looked up when an error first names one: composing the
    file again to find its lines is needed for a duplicate id, not on every load."""

    def __init__(self, path: Path, list_key: str) -> None:
        self.path = path
        self.list_key = list_key
        self._lines: dict[int, int] | None = None

    def line(self, index: int) -> int:
        """1-based line of item ``index``'s id, as :func:`item_id_lines` gives it (1 when not found)."""
        if self._lines is None:
            self._lines = item_id_lines(self.path, self.list_key)
        return self._lines.get(index, 1)

    def __getitem__(self, index: int) -> ItemPlace:
        return ItemPlace(self, index)


class ItemPlace:
    """``file:line`` of one item's id when printed (in an f-string or ``str``)."""

    def __init__(self, places: ItemPlaces, index: int) -> None:
        self.places = places
        self.index = index

    def __str__(self) -> str:
        return f"{self.places.path}:{self.places.line(self.index)}"


class UnwritablePath(CalculatorError, OSError):
    """A path :func:`write_atomically` refuses to write; ``str()`` says why, after ``cannot write PATH:``."""


_TEMP_ATTEMPTS = 100


def _existing_file(path: Path) -> os.stat_result | None:
    """What is at ``path`` now (never following a link): a regular file's status, or None when nothing is.

    Anything else is refused: a link is never followed (its target may be anywhere) nor replaced, and a
    folder, device, pipe or socket is never replaced by a file.
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(found.st_mode):
        return found
    if stat.S_ISLNK(found.st_mode):
        raise UnwritablePath("it is a symbolic link, never followed or replaced; give the path of a regular file")
    if stat.S_ISDIR(found.st_mode):
        raise UnwritablePath("it is a folder; give a file name in it")
    raise UnwritablePath("it is not a regular file (a device, pipe or socket) and is never replaced")


def _no_folder_links(path: Path) -> None:
    """Refuse a path any of whose folders, as written, is a symbolic link: a planted link to a folder
    elsewhere (``out/`` -> ``/etc``) would put the file there. The folders above a relative path's start
    (the working folder's own) are the user's and are not checked."""
    folder = Path(path.parts[0]) if path.is_absolute() else Path()
    for part in path.parent.parts[1:] if path.is_absolute() else path.parent.parts:
        folder = folder / part
        if part in (".", ".."):
            continue
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                raise UnwritablePath(
                    f"folder {folder} in the path is a symbolic link, never followed; give the real path"
                )
        except FileNotFoundError:
            return


def _temporary_beside(path: Path, mode: int) -> tuple[int, Path]:
    """Create a new, uniquely named file in ``path``'s folder; never opens an existing name or a link there.

    ``mode`` is the permission asked for (the umask applies); a name planted in advance cannot be guessed.
    """
    folder = path.parent
    stem = path.name.encode("utf-8", "surrogateescape")[:100].decode("utf-8", "ignore")  # names stay under 255 bytes
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TEMP_ATTEMPTS):
        tmp = folder / f".{stem}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise UnwritablePath(f"no free temporary name in {folder}")


def check_writable(path: Path) -> None:
    """Refuse, before any work is done, a path :func:`write_atomically` would fail on or must not replace.

    The folder must exist and take a new file (checked by creating and removing one, so a read-only
    folder or file system is found now, not after a long run); anything already at ``path`` must be a
    regular file. Raises :class:`OSError` saying why, for the caller to name the flag or field.
    """
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise UnwritablePath("give a file name")
    _no_folder_links(path)
    _existing_file(path)
    if not path.parent.is_dir():
        raise UnwritablePath(f"folder {path.parent} does not exist")
    fd, tmp = _temporary_beside(path, 0o600)
    os.close(fd)
    os.unlink(tmp)


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write ``text`` through a new temporary file beside ``path``, then rename it into place.

    An interrupted or failed write leaves the old file (or none), never half a file; the temporary
    file is removed. The temporary name is unique and created afresh (a link planted in the folder is
    never followed); a file already at ``path`` keeps its permissions (and owner, where allowed), a new
    one gets the usual ones (the umask applies); a link, folder or device at ``path`` is refused, not
    replaced. Raises :class:`OSError` for the caller to name the flag or field.
    """
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise UnwritablePath("give a file name")
    _no_folder_links(path)
    existing = _existing_file(path)
    fd, tmp = _temporary_beside(path, 0o600 if existing else 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            if existing is not None:
                if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):  # only a privileged writer may give a file away
                        os.fchown(fh.fileno(), existing.st_uid, existing.st_gid)
                os.fchmod(fh.fileno(), stat.S_IMODE(existing.st_mode))  # after fchown, which clears set-id bits
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)  # a PDF is written as its bytes
            fh.flush()
            os.fsync(fh.fileno())
        _existing_file(path)  # something else put there while writing is still never replaced
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
