"""Glue shared by every benchmark's ``utils.py``: template rendering, prompt-variant selection, visuals.

Prompt prose lives only in ``hanyi/tasks/<benchmark>/templates/*.jinja``; Python renders it and never builds it.
"""

from __future__ import annotations

import functools
import os
import re

from hanyi import TASKS_DIR
from hanyi.data.images import check_images, to_pil


@functools.cache
def _environment_class():
    import jinja2

    class Environment(jinja2.Environment):
        def make_globals(self, d):
            """A template's globals as one plain dict, not Jinja's ``ChainMap`` over the environment's: every render
            copies them into its context, which from a ``ChainMap`` is half the cost of rendering a CII prompt
            (21.7 -> 10.4 us). hanyi never changes globals after loading a template."""
            return {**self.globals, **(d or {})}

    return Environment


@functools.cache
def _environment(benchmark: str):
    import jinja2

    return _environment_class()(
        loader=jinja2.FileSystemLoader(os.path.join(TASKS_DIR, benchmark, "templates")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
        auto_reload=False,  # package files: no stat() per render (halves the prompt cost per doc)
    )


@functools.cache
def _template(benchmark: str, template: str):
    """The compiled template, looked up once: Jinja's own cache takes a lock and reorders an LRU queue on every
    ``get_template`` (0.6 us a render), and with ``auto_reload`` off it never reloads a template anyway."""
    return _environment(benchmark).get_template(template)


def render(benchmark: str, template: str, **variables) -> str:
    """Render ``tasks/<benchmark>/templates/<template>`` with ``variables``. Missing variables raise.

    A template that is plain substitution (:func:`_plain_parts`) is joined here, without Jinja's context and
    generator (a UNPIE grounding prompt: 3.0 -> 1.0 us); a variable it lacks goes to Jinja (its error, or a global),
    and a value whose ``str`` or truth test fails raises that error as Jinja's code would.
    ``tests/test_plain_render.py`` holds the two equal."""
    return _render(benchmark, template, variables, _plain_join(benchmark, template))


def _render(benchmark: str, template: str, variables: dict, join) -> str:
    try:
        return join(variables) if join is not None else _template(benchmark, template).render(**variables)
    except KeyError:  # a name not passed to a plain join (StrictUndefined's error, or a Jinja global): Jinja decides
        return _template(benchmark, template).render(**variables)


#: Names Jinja's compiled code may bind itself (``{{ self }}`` is the template), whatever the variables say.
_JINJA_OWN = frozenset({"self", "super", "loop", "caller", "varargs", "kwargs"})


@functools.cache
def _plain_parts(benchmark: str, template: str) -> tuple | None:
    """The template as literal strings, ``(name,)`` outputs and ``(name, then, else)`` ifs, when it is only that:
    text, ``{{ name }}`` / ``{{ "const" }}`` with no filter, and ``{% if name %}...{% else %}...{% endif %}``. None
    for anything else (includes, loops, filters, attributes, tests on expressions), which Jinja renders.

    Jinja's lexer has already applied whitespace control and dropped the one trailing newline
    (``keep_trailing_newline`` off) in the parsed text, and with autoescape off its compiled code yields ``str(value)``
    for each output and tests an ``if`` by Python truth: joining the same pieces is the same text."""
    from jinja2 import nodes

    env = _environment(benchmark)
    if env.autoescape is not False or env.finalize is not None:
        return None

    def parts(body) -> tuple:
        out = []
        for node in body:
            if isinstance(node, nodes.Output):
                for child in node.nodes:
                    if isinstance(child, nodes.TemplateData):
                        out.append(child.data)
                    elif isinstance(child, nodes.Const):
                        out.append(str(child.value))
                    elif isinstance(child, nodes.Name) and child.ctx == "load" and child.name not in _JINJA_OWN:
                        out.append((child.name,))
                    else:
                        raise LookupError(type(child).__name__)
            elif isinstance(node, nodes.If) and isinstance(node.test, nodes.Name) and not node.elif_:
                if node.test.name in _JINJA_OWN:
                    raise LookupError(node.test.name)
                out.append((node.test.name, parts(node.body), parts(node.else_)))
            else:
                raise LookupError(type(node).__name__)
        return tuple(out)

    try:
        return parts(env.parse(env.loader.get_source(env, template)[0]).body)
    except LookupError:
        return None


@functools.cache
def _plain_join(benchmark: str, template: str):
    """:func:`_plain_parts` as a function of the variables dict: literals as they are, ``str()`` of each output and
    the branch an ``if`` takes, left to right as Jinja's own code evaluates them, joined. None when the template is
    not plain. (Compiling the parts to one Python expression saved a further 0.2 us a prompt: not worth an ``eval``
    in code that ships upstream.)"""
    parts = _plain_parts(benchmark, template)
    if parts is None:
        return None

    def join(v: dict, parts: tuple = parts) -> str:
        out = []
        for part in parts:
            if type(part) is str:
                out.append(part)
            elif len(part) == 1:
                out.append(str(v[part[0]]))
            else:
                out.append(join(v, part[1] if v[part[0]] else part[2]))
        return "".join(out)

    return join


@functools.cache
def template_reads(benchmark: str, template: str) -> frozenset | None:
    """The variables ``template`` reads, those of the templates it includes too; None when it includes one by a
    computed name (then nothing can say which variables decide its text)."""
    import jinja2.meta

    env, names, seen, todo = _environment(benchmark), set(), set(), [template]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            ast = env.parse(env.loader.get_source(env, name)[0])
            names |= jinja2.meta.find_undeclared_variables(ast)
            included = list(jinja2.meta.find_referenced_templates(ast))
            if None in included:
                return None
            todo += included
    return frozenset(names)


def render_once(benchmark: str, template: str, **variables) -> str:
    """:func:`render`, each distinct text rendered once: the key is the values of the variables the template reads
    (text or None only; anything else renders every time). lmms-eval's chat path renders a doc's prompt twice (the
    request's context, then its messages, apart by the whole task), so the cache holds a task's prompts: the same
    string objects lmms-eval keeps as the requests' contexts, bounded at 32,768 (CVLUE-VQA's 21,507 questions fit).
    A plain-substitution template (:func:`_plain_parts`) is joined each time instead: joining costs what a cache hit
    does, and a miss (key, insert, eviction) cost twice that (UNPIE's ``doc_to_text`` on a new doc: 4.8 -> 1.9 us)."""
    if (join := _plain_join(benchmark, template)) is not None:
        return _render(benchmark, template, variables, join)
    names = _key_names(benchmark, template)
    if names is None:
        return render(benchmark, template, **variables)
    try:
        values = tuple([variables[n] for n in names])
    except KeyError:  # a missing one stops the render (StrictUndefined)
        return render(benchmark, template, **variables)
    for value in values:
        if value is not None and type(value) is not str:
            return render(benchmark, template, **variables)
    return _render_key(benchmark, template, values)


@functools.cache
def _key_names(benchmark: str, template: str) -> tuple | None:
    """:func:`template_reads` in a fixed order, so that a cache key is the values alone (the key is built twice per
    doc on a served model's path: sorting name-value pairs each time cost as much as the lookup it serves)."""
    names = template_reads(benchmark, template)
    return None if names is None else tuple(sorted(names))


@functools.lru_cache(maxsize=32768)
def _render_key(benchmark: str, template: str, values: tuple) -> str:
    return render(benchmark, template, **dict(zip(_key_names(benchmark, template), values, strict=True)))


def signature_once(hook):
    """``hook`` with its signature computed now, once: lmms-eval 0.7.3's ``doc_to_visual`` wrapper calls
    ``inspect.signature`` on the hook for every doc (to decide whether to pass the prompt kwargs), 10 us for a
    two-argument hook; ``inspect.signature`` returns a function's own ``__signature__`` as it is (2 us), the same
    parameters."""
    import inspect

    hook.__signature__ = inspect.signature(hook)
    return hook


def _plain(block) -> dict:
    """The scalar (non-dict) entries of a kwargs block: nested dicts are other models' blocks."""
    return {k: v for k, v in (block or {}).items() if not isinstance(v, dict)}


class IncompleteModelBlock(ValueError):
    """A per-model ``lmms_eval_specific_kwargs`` block leaves out a key the task's prompt reads."""


def prompt_kwargs(lmms_eval_specific_kwargs: dict | None, **defaults) -> dict:
    """The prompt settings of this run: the block lmms-eval resolved, over the benchmark's ``defaults``.

    lmms-eval 0.7.3 hands a task's prompt functions either its top-level ``lmms_eval_specific_kwargs`` with the
    ``default`` block merged in, or, when ``--model`` names a block of its own, that block *alone*: the task's
    ``default`` block is then not seen at all. A per-model block must therefore be complete: it repeats every key of
    ``defaults`` (every key the prompt reads). An incomplete one raises :class:`IncompleteModelBlock` naming the
    missing keys, never a prompt built from the benchmark-wide defaults (a VULCA persona task would silently lose its
    persona). ``tests/tasks/test_model_kwargs.py`` checks every shipped block. Nested dicts (other models' blocks) are
    ignored.

    >>> prompt_kwargs({"variant": "code_exact", "default": {"variant": "code_exact"}}, variant="paper", shots=0)
    {'variant': 'code_exact', 'shots': 0}
    >>> prompt_kwargs(None, variant="paper")
    {'variant': 'paper'}
    >>> prompt_kwargs({"shots": 3}, variant="paper", shots=0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    hanyi.tasks._common.IncompleteModelBlock: this model's lmms_eval_specific_kwargs block lacks variant; ...
    """
    block = _plain(lmms_eval_specific_kwargs)
    if lmms_eval_specific_kwargs is not None and "default" not in lmms_eval_specific_kwargs:
        missing = sorted(set(defaults) - set(block))
        if missing:
            raise IncompleteModelBlock(
                f"this model's lmms_eval_specific_kwargs block lacks {', '.join(missing)}; lmms-eval uses a model's "
                "block instead of the task's default block, so it must repeat every key of the default block "
                "(docs/dev/contributing.md, 'Per-model prompt settings')"
            )
    return {**defaults, **block}


def prompt_setting(lmms_eval_specific_kwargs: dict | None, name: str, default):
    """``prompt_kwargs(lmms_eval_specific_kwargs, **{name: default})[name]``, without building the whole dict when the
    block sets ``name`` plainly (a hook that reads one setting per doc: 0.6 -> 0.1 us); any other case is that call.

    >>> prompt_setting({"mode": "sm", "default": {"mode": "vlm"}}, "mode", "vlm"), prompt_setting(None, "mode", "vlm")
    ('sm', 'vlm')
    """
    if lmms_eval_specific_kwargs is None:
        return default
    value = lmms_eval_specific_kwargs.get(name, _UNSET)
    if value is _UNSET or isinstance(value, dict):
        return prompt_kwargs(lmms_eval_specific_kwargs, **{name: default})[name]
    return value


_UNSET = object()


def doc_label(doc: dict, *fields: str) -> str:
    """A short human label for error messages, from the first of ``fields`` present in ``doc``.

    >>> doc_label({"image_id": "a_1.jpg"}, "question_id", "image_id")
    'image_id=a_1.jpg'
    """
    for field in fields:
        if field in doc and doc[field] is not None:
            return f"{field}={doc[field]}"
    return "doc"


def visuals(doc: dict, *columns: str, id_fields: tuple[str, ...] = ()) -> list:
    """``[PIL.Image, ...]`` from the image ``columns`` of ``doc``; a missing image raises naming the doc."""
    hint = doc_label(doc, *id_fields)
    return [to_pil(doc.get(col), doc_hint=hint) for col in columns]


def _image_cells(table, column: str, id_field: str) -> tuple:
    """``(ids, images)`` of an Arrow table or batch; a list-of-images column (VULCA's slices) flattened, each image
    with its doc's id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, images = table.column(id_field).to_pylist(), table.column(column)
    images = images.combine_chunks() if isinstance(images, pa.ChunkedArray) else images
    if pa.types.is_list(images.type):
        ids, images = [ids[i] for i in pc.list_parent_indices(images).to_pylist()], pc.list_flatten(images)
    return ids, images


def missing_image_ids(dataset, column: str, id_field: str) -> list:
    """Ids of docs whose ``column`` holds no image (null, or neither bytes nor path), read without decoding."""
    import pyarrow.compute as pc

    ids, images = _image_cells(dataset.select_columns([column, id_field]).with_format("arrow")[:], column, id_field)
    missing = pc.is_null(images)
    if getattr(images.type, "num_fields", 0):
        missing = pc.or_(missing, pc.and_(pc.is_null(images.field("bytes")), pc.is_null(images.field("path"))))
    return [rid for rid, gone in zip(ids, missing.to_pylist()) if gone]


_check_cells = check_images  # the check every task's load runs (hanyi.data.images)


def undecodable_images(dataset, column: str, id_field: str, threads: int = 4, digests=None) -> list[tuple]:
    """``[(id, reason), ...]`` for the docs whose image is present but does not decode (truncated, corrupt, not an
    image), read from the Arrow table 1,024 rows at a time. Docs with no image are not listed here."""
    bad = []
    for batch in dataset.select_columns([column, id_field]).with_format("arrow")[:].to_batches(max_chunksize=1024):
        ids, images = _image_cells(batch, column, id_field)
        if getattr(images.type, "num_fields", 0):
            blobs, paths = (cells.to_pylist() for cells in images.flatten())  # datasets' struct<bytes, path>
            bad += _check_cells(
                [(rid, b or p) for rid, b, p in zip(ids, blobs, paths) if b is not None or p is not None],
                threads,
                digests,
            )
    return bad


def memory_mapped(dataset, like):
    """``dataset``, built in memory by a ``process_docs``, written beside ``like``'s file (the split it was built
    from) and returned memory-mapped, as ``Dataset.map`` leaves its results: kept in Arrow's pool, docs (images too)
    cost memory the whole run, and 2 MB a touched page on transparent huge pages (UNPIE grounding: 0.7 MB held 6 MB).
    The file is named by its sha256 (a ``cache-`` file, as datasets names its own): the same docs map the same file,
    other docs never a stale one. An in-memory source, an indices mapping or an unwritable folder leaves ``dataset``
    as it is."""
    import hashlib

    import datasets
    import pyarrow as pa

    if not like.cache_files or dataset._indices is not None or not len(dataset):
        return dataset
    tmp = None
    try:
        tmp = _write_arrow(dataset, like)
        digest = hashlib.sha256()
        with open(tmp, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        path = os.path.join(os.path.dirname(tmp), f"cache-hanyi-{digest.hexdigest()[:32]}.arrow")
        os.replace(tmp, path)  # atomic: a reader never maps half a file, and a racing writer wrote the same bytes
    except OSError:  # a read-only cache (a shared mount): kept in memory, as before
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
        return dataset
    info, split = dataset.info, dataset.split
    del dataset  # the last reference: the pool's pages go back to the OS below
    pa.default_memory_pool().release_unused()
    return datasets.Dataset.from_file(path, info=info, split=split)


def _write_arrow(dataset, like) -> str:
    """A new temporary file beside ``like``'s, holding ``dataset``'s table (an Arrow stream, as mapped): its path."""
    import uuid

    import pyarrow as pa

    folder, table = os.path.dirname(like.cache_files[0]["filename"]), dataset.data.table
    path = os.path.join(folder, f"tmp-hanyi-{uuid.uuid4().hex}.arrow")
    try:
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    except BaseException:
        if os.path.exists(path):
            os.remove(path)
        raise
    return path


def spill(part, like, temporary: list):
    """``part`` of a table built part by part, written to a temporary file beside ``like``'s (its path appended to
    ``temporary``, which the caller removes) and mapped from it: one part in memory at a time."""
    import datasets

    if not like.cache_files or part._indices is not None:
        return part
    try:
        temporary.append(_write_arrow(part, like))
    except OSError:
        return part
    return datasets.Dataset.from_file(temporary[-1], info=part.info, split=part.split)


def add_mapped_column(dataset, name: str, values: list):
    """``dataset.add_column(name, values)``, the new column alone :func:`memory_mapped` beside ``dataset``'s file."""
    import datasets

    column = memory_mapped(datasets.Dataset.from_dict({name: values}), like=dataset)
    if column.cache_files and dataset.cache_files:  # an indices mapping is flattened first, as add_column does
        return datasets.concatenate_datasets([dataset, column], axis=1)
    return dataset.add_column(name, values)


def require_images(dataset, column: str, id_field: str, fix: str, fallback=None):
    """Fail at load time, before any model call, if docs of ``dataset`` have no image in ``column`` or one that does
    not decode.

    A bad image found during generation would stop lmms-eval's run at that doc and lose everything computed so far;
    found here, the error costs little and lists the docs. Nulls are read in Arrow format; every present image is
    then checked cheaply (:func:`undecodable_images`: PNG chunks and CRCs read without PIL, JPEG decoded at 1/8
    scale in threads).
    ``fallback(row_id) -> path or None`` says where a doc without an embedded image is served from (e.g. a local
    clone); that file is checked the same way. Raises :class:`hanyi.data.images.ImageUnavailableError` naming up to 10 doc ids and ``fix``.
    Returns ``dataset`` with ``<column>_sha256``, the sha256 of each doc's image bytes read here (logged per doc: reports pair runs on it).
    """
    from hanyi.data.images import ImageUnavailableError

    served = {rid: fallback and fallback(rid) for rid in missing_image_ids(dataset, column, id_field)}
    ids = [rid for rid, path in served.items() if not path]
    if ids:
        shown = ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise ImageUnavailableError(f"{len(ids)} doc(s) have no image ({id_field}: {shown}). {fix}")
    bad = undecodable_images(dataset, column, id_field, 4, digests := {}) + _check_cells(
        [(r, p) for r, p in served.items() if p], 4, digests
    )
    if bad:
        shown = "; ".join(f"{rid}: {why}" for rid, why in bad[:10]) + (
            f"; and {len(bad) - 10} more" if len(bad) > 10 else ""
        )
        raise ImageUnavailableError(f"{len(bad)} doc(s) have an image that does not decode ({id_field} {shown}). {fix}")
    kept = dataset.remove_columns(f"{column}_sha256") if f"{column}_sha256" in dataset.column_names else dataset
    # the ids through Arrow: iterating datasets' own column object formats each row alone (6 us a doc, 0.3 here)
    ids = dataset.select_columns([id_field]).with_format("arrow")[id_field].to_pylist()
    return add_mapped_column(kept, f"{column}_sha256", [digests.get(rid) for rid in ids])  # a 2nd load: replaced


def require_string_lists(dataset, fields: tuple[str, ...], fix: str):
    """Fail at load time unless each of ``fields`` is a list of strings in ``dataset``'s schema.

    A gold-label column stored as one string (``"A,B"``) would be read letter by letter (``['A', ',', 'B']``) and
    score every answer against nonsense; a wrong type is refused here, naming the column, its type and ``fix``.
    """
    import pyarrow as pa

    for name in fields:
        kind = dataset.data.schema.field(name).type if name in dataset.column_names else None
        is_list = kind is not None and (pa.types.is_list(kind) or pa.types.is_large_list(kind))
        if not (is_list and (pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type))):
            raise ValueError(f"column {name!r} must be a list of strings, got {dataset.features.get(name)}. {fix}")
    return dataset


#: Half of a UTF-16 surrogate pair: JSON and Python strings can hold one, UTF-8 cannot.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ValidUtf8Responses:
    """lmms-eval filter: every text response made valid UTF-8 *in place*, before it is scored and logged.

    A reply cut at ``max_new_tokens`` can end in half a UTF-16 surrogate pair (``"A\\ud800"``). No UTF-8 file can
    hold it, so lmms-eval wrote a 0-byte sample log for such a task and exited 0. Each lone surrogate becomes U+FFFD
    (what a UTF-8 decoder shows for a broken sequence), in the instance's own ``resps`` list, so the logged ``resps``
    and ``filtered_resps`` and every per-doc result are valid; the count is logged once per task. Declared first in
    each benchmark's ``filter_list`` (named ``none``, so metric keys keep lmms-eval's ``,none``), then ``take_first``.
    """

    def __init__(self, **kwargs) -> None:
        pass

    def apply(self, resps, docs):
        surrogate = _LONE_SURROGATE
        repaired = 0
        for group in resps:
            for i, value in enumerate(group):
                if isinstance(value, str) and surrogate.search(value):
                    group[i] = surrogate.sub("\ufffd", value)  # in place: inst.resps is what lmms-eval logs
                    repaired += 1
        if repaired:
            from hanyi.logs import get_logger

            get_logger("hanyi").warning(
                "hanyi: %d response(s) held a lone surrogate (half a UTF-16 pair, e.g. cut at max_new_tokens); each "
                "was replaced by U+FFFD before scoring and logging",
                repaired,
            )
        return resps


def require_image_files(root: str, rel_paths, fix: str) -> dict:
    """Fail at load time unless every image file ``root/<rel>`` exists and decodes (:func:`_undecodable`),
    naming up to 10 of them and ``fix``: a bad file found during generation would stop the run at its doc. Returns
    ``{rel: sha256}`` of the bytes read (logged per doc: reports pair runs on it)."""
    from hanyi.data.images import ImageUnavailableError

    rel_paths = sorted(set(rel_paths))
    # a path out of the root: refused before anything is read
    out = [p for p in rel_paths if os.path.isabs(p) or ".." in re.split(r"[\\/]+", p)]
    if out:
        raise ImageUnavailableError(f"{len(out)} image path(s) leave {root} (absolute or '..'): {out[:5]}. {fix}")
    gone = [p for p in rel_paths if not os.path.isfile(os.path.join(root, p))]
    if gone:
        raise ImageUnavailableError(f"{len(gone)} image file(s) missing under {root}: {', '.join(gone[:10])}. {fix}")
    bad = _check_cells([(p, os.path.join(root, p)) for p in rel_paths], 4, digests := {})
    if bad:  # e.g. a CVLUE gallery image that ITR stage 1 skipped: repair or remove it before stage 2
        shown = "; ".join(f"{p}: {why}" for p, why in bad[:10])
        raise ImageUnavailableError(f"{len(bad)} image file(s) under {root} do not decode ({shown}). {fix}")
    return digests
