"""Metrics a LightningModule logs without `sync_dist`: each rank reads its own value back.

`self.log("val_loss", loss)` keeps the value on the process that logged it: with the default
`sync_dist=False` Lightning reduces it over the epoch's steps, never over the processes, so
`trainer.callback_metrics["val_loss"]` holds each rank's own mean (Lightning's logging docs; a
checkpoint decision taken on it is pytorch-lightning#6345's hang). A metric logged with
`sync_dist=True` (any value but a literal False), or handed over as an object (`self.log("acc",
self.accuracy)`, a torchmetrics Metric that syncs its states when computed), is the same on every
rank.

Read from the module's whole text with CPython's `ast`, and only where it reads a trainer's
metrics dictionary.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

# The trainer's dictionaries a logged value is read back from.
METRICS_DICTIONARIES = frozenset({"callback_metrics", "logged_metrics", "progress_bar_metrics"})
_LOGGING = frozenset({"log", "log_dict"})


def unsynced_metrics(text: str) -> frozenset[str]:
    """The keys every `self.log`/`self.log_dict` of the module logs without syncing them."""
    if not any(name in text for name in METRICS_DICTIONARIES) or "self.log" not in text:
        return frozenset()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    unsynced: set[str] = set()
    synced: set[str] = set()
    for call in _self_log_calls(tree):
        kept = synced if _syncs(call) else unsynced
        kept.update(key for key, value in _logged(call) if not _metric_object(value))
        synced.update(key for key, value in _logged(call) if _metric_object(value))
    return frozenset(unsynced - synced)


def _self_log_calls(tree: ast.Module) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LOGGING \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            yield node


def _syncs(call: ast.Call) -> bool:
    sync = next((keyword.value for keyword in call.keywords if keyword.arg == "sync_dist"), None)
    return sync is not None and not (isinstance(sync, ast.Constant) and sync.value is False)


def _logged(call: ast.Call) -> Iterator[tuple[str, Optional[ast.expr]]]:
    """(key, value) for each literal key the call logs."""
    arguments = {keyword.arg: keyword.value for keyword in call.keywords}
    if call.func.attr == "log":
        name = call.args[0] if call.args else arguments.get("name")
        value = call.args[1] if len(call.args) > 1 else arguments.get("value")
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            yield name.value, value
        return
    logged = call.args[0] if call.args else arguments.get("dictionary")
    if isinstance(logged, ast.Dict):
        for key, value in zip(logged.keys, logged.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.value, value


def _metric_object(value: Optional[ast.expr]) -> bool:
    """`self.accuracy`: an attribute handed over as it is, as a torchmetrics Metric is logged."""
    return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self"
