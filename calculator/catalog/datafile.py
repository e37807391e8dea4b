"""Reading the YAML files users and maintainers write: safe loading, and errors that point at a line.

Every data file (price sheets, GPU specs, scenarios, measurement records) goes through
:func:`load_model`, so a broken file always fails the same way: one line per problem,
``file:line: field.path: what is wrong``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = [
    "DATA_DIR",
    "DataFileError",
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


class DataFileError(ValueError):
    """A data file could not be read or failed validation.

    ``str()`` lists one ``file:line: field: message`` per problem, ready to print.
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys: PyYAML would silently keep the last one,
    and a price typed twice must not win by position."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
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


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_yaml(text: str, name: str) -> Any:
    """Parse YAML text safely; a syntax error becomes a DataFileError naming ``name`` and the line."""
    loader = _UniqueKeyLoader(text)  # a SafeLoader: only plain YAML types, never Python objects
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
    return ".".join(parts) or "<top level>"


def validation_lines(exc: ValidationError, name: str, text: str | None = None, data: Any = None) -> list[str]:
    """Turn a pydantic ValidationError into ``name:line: field: message`` lines."""
    root: yaml.Node | None = None
    if text is not None:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
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
        if err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see the schema in the README)"
        lines.append(f"{where}: {_describe(loc, data)}: {msg}")
    return lines


def load_model(path: Path, model: type[M], context: dict[str, Any] | None = None) -> M:
    """Read ``path`` as YAML and validate it as ``model``; every failure is a DataFileError."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataFileError([f"{name}: cannot read file: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise DataFileError([f"{name}: not a UTF-8 text file"]) from exc
    return load_model_text(text, name, model, context)


def load_model_text(text: str, name: str, model: type[M], context: dict[str, Any] | None = None) -> M:
    """Like :func:`load_model` for text that did not come from a file (an upload, a URL)."""
    data = parse_yaml(text, name)
    if data is None:
        raise DataFileError([f"{name}: the file is empty"])
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise DataFileError(validation_lines(exc, name, text, data)) from exc


def _compose(path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
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


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` through a temporary file beside ``path``, then rename it into place.

    An interrupted or failed write leaves the old file (or none), never half a file; the temporary
    file is removed. Raises :class:`OSError` for the caller to name the flag or field.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
