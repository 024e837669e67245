"""Quarry's Python SDK: what a connector at quarry:connector@0.5.0 needs besides its own logic.

A connector subclasses `Connector` and implements `list_docs`, `fetch_content` and `read_file`
(and `validate_config`); the other calls of 0.5.0 have answers here that are right for most
connectors, which it overrides when it can do better:

- `fetch_contents`: the texts of several small documents in one call, each `fetch_content`
  on its own (one failing fails alone);
- `list_changes`: the host's change hints; none (a full listing) unless overridden, and
  `changed_files` helps answer them;
- `read_scans`: no images;
- `watch`: unsupported (a folder's changes come as hints; other sources sync on schedule).

Helpers: `settings`, `fail`, `log`, `progress`, `stable_id`; `walk` lists a granted folder with
one host call per folder (`host.read-folder`: names, kinds, sizes and times together, instead
of a `stat` per file); `read_start` reads a file's start in one call, `read_range` a part of
it; `changed_files` reads the host's change hints; `recognize_text` reads a
gray image with the host's OCR; `batch` and `changes` build listings.

Build: componentize-py -d wit/connector@0.5.0 -w connector componentize app -o connector.wasm
(this file beside app.py; `make plugins` passes plugins/python/sdk with -p).
"""

import hashlib
import os

from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.imports import host, types

_ERRORS = {
    "not-found": types.ConnectorError_NotFound,
    "unavailable": types.ConnectorError_Unavailable,
    "invalid-config": types.ConnectorError_InvalidConfig,
    "other": types.ConnectorError_Other,
}


def settings():
    """The connector's settings, as the host checked them against the manifest."""
    return dict(host.config())


def fail(kind, message):
    """Raises a connector error the host shows to the user. `kind`: "not-found",
    "unavailable" (tried again later), "invalid-config" or "other"."""
    raise Err(_ERRORS[kind](message))


def log(message, level=types.LogLevel.INFO):
    """A line in Quarry's log, under the plugin's id."""
    host.log(level, message)


def progress(message, done, total=None):
    """Tells the user how far a long listing is ("reading Archive.mbox", 120, 4000)."""
    host.progress(message, done, total)


def stable_id(prefix, key):
    """A document id that stays the same for the same `key`: `prefix` + 32 hex digits."""
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:32]}"


class Entry:
    """A file found by `walk`: its path inside the walked folder, size and modification time."""

    __slots__ = ("rel", "path", "size", "modified_ms")

    def __init__(self, rel, path, size, modified_ms):
        self.rel, self.path, self.size, self.modified_ms = rel, path, size, modified_ms


def _entries(path):
    """A folder's entries in one host call, or, where the host cannot tell (a link to
    follow), from the WASI filesystem; none when it is gone."""
    try:
        return [
            (e.name, e.kind == types.EntryKind.FOLDER, e.kind == types.EntryKind.FILE,
             e.size_bytes, (e.modified_ns or 0) // 1_000_000)
            for e in host.read_folder(path)
        ]
    except Err as e:
        if e.value == types.ReadError.NOT_FOUND:
            return []
    found = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found.append((entry.name, entry.is_dir(follow_symlinks=False),
                              entry.is_file(follow_symlinks=False), st.st_size,
                              st.st_mtime_ns // 1_000_000))
    except OSError:
        return []
    return found


def walk(root, keep=lambda name: True, hidden=False):
    """The files under `root` whose names `keep` takes, as `Entry`s: folder by folder, each
    folder's files in name order before its subfolders'. Hidden files and folders (a leading
    dot) are left out unless `hidden`; links are not followed."""
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        subfolders = []
        for name, is_folder, is_file, size, modified_ms in sorted(_entries(folder)):
            if name.startswith(".") and not hidden:
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if is_folder:
                subfolders.append(rel)
            elif is_file and keep(name):
                yield Entry(rel, os.path.join(root, rel), size, modified_ms)
        stack.extend(reversed(subfolders))


def read_start(path, max_bytes):
    """The first `max_bytes` of a file and its whole size, in one host call (else through the
    WASI filesystem); a "not-found" error when it is gone."""
    try:
        data, size = host.read_file_start(path, max_bytes)
        return bytes(data), size
    except Err as e:
        if e.value == types.ReadError.NOT_FOUND:
            fail("not-found", f"{path} is gone")
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes)
            return data, os.fstat(f.fileno()).st_size
    except OSError as e:
        fail("not-found", f"{path}: {e}")


def read_range(path, offset, max_bytes):
    """At most `max_bytes` of a file from `offset`, and its whole size: what `read_file`
    answers. A "not-found" error when it is gone."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(max_bytes), os.fstat(f.fileno()).st_size
    except OSError as e:
        fail("not-found", f"{path}: {e}")


def changed_files(paths, root):
    """The host's change hints under `root` as (relative path, `Entry` or None when gone), or
    None when one names a folder (the paths alone cannot tell what left it: list again)."""
    found = []
    prefix = root.rstrip("/") + "/"
    for path in paths:
        if not path.startswith(prefix):
            continue
        rel = path[len(prefix):]
        try:
            st = os.stat(path)
        except FileNotFoundError:
            found.append((rel, None))
            continue
        except OSError:
            return None
        if os.path.isdir(path):
            return None
        found.append((rel, Entry(rel, path, st.st_size, st.st_mtime_ns // 1_000_000)))
    return found


def recognize_text(width, height, pixels):
    """The text the host's OCR reads in a gray image (`pixels`: one byte a pixel, rows top
    down), as lines of `types.Recognized`."""
    return host.recognize_text(types.GrayImage(width=width, height=height, pixels=pixels))


def batch(upserts, deletes=(), checkpoint="", more=False):
    """A listing batch: the documents listed, those gone, where the next batch starts."""
    return types.Batch(upserts=list(upserts), deletes=list(deletes), checkpoint=checkpoint,
                       more=more, coverage=types.Coverage.FULL)


def changes(upserts, deletes):
    """The answer to change hints: the documents at the paths, and those gone."""
    return types.Batch(upserts=list(upserts), deletes=list(deletes), checkpoint="",
                       more=False, coverage=types.Coverage.CHANGES)


class Connector(exports.Source):
    """A connector at 0.5.0 with the calls most connectors answer alike already answered."""

    def fetch_contents(self, docs):
        results = []
        for doc in docs:
            try:
                results.append(Ok(self.fetch_content(doc)))
            except Err as e:
                results.append(e)
        return results

    def list_changes(self, paths):
        return None

    def read_scans(self, doc, pages):
        fail("other", "this connector has no images to read")

    def watch(self, checkpoint, max_wait_ms):
        return types.WatchOutcome.UNSUPPORTED

    def validate_config(self, config):
        return None
