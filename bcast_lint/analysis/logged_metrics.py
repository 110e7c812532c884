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

from bcast_lint.analysis.syntax import called_name, parsed

# The trainer's dictionaries a logged value is read back from.
METRICS_DICTIONARIES = frozenset({"callback_metrics", "logged_metrics", "progress_bar_metrics"})
_LOGGING = frozenset({"log", "log_dict"})
# Lightning's callbacks that read a logged key back on every rank (`monitor=`).
_MONITORS = frozenset({"ModelCheckpoint", "EarlyStopping"})


def unsynced_metrics(text: str) -> frozenset[str]:
    """The keys every `self.log`/`self.log_dict` of the module logs without syncing them."""
    tree = _parsed_if_it_reads_metrics(text, "self.log")
    if tree is None:
        return frozenset()
    unsynced: set[str] = set()
    synced: set[str] = set()
    for call in _self_log_calls(tree):
        kept = synced if _syncs(call) else unsynced
        kept.update(key for key, value in _logged(call) if not _metric_object(value))
        synced.update(key for key, value in _logged(call) if _metric_object(value))
    return frozenset(unsynced - synced)


def synced_epoch_metrics(text: str) -> frozenset[str]:
    """The keys the module logs with `sync_dist=True` for the epoch (`on_epoch=True`, or in a hook
    where that is Lightning's default: a validation or test step, an epoch's end). Lightning
    computes such a value, an all_reduce, at the first read of the trainer's metrics after the
    epoch logged it (lightning 2.6.6, trainer/connectors/logger_connector/result.py:439 and :248)."""
    tree = _parsed_if_it_reads_metrics(text, "sync_dist")
    if tree is None:
        return frozenset()
    return frozenset(key for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for call in _self_log_calls(function) if _syncs(call) and _for_the_epoch(call, function.name)
                     for key, _ in _logged(call))


def monitoring_callbacks(text: str) -> dict[str, tuple[str, int]]:
    """The key each `ModelCheckpoint(monitor="val_auc")` or `EarlyStopping("val_loss")` of the
    module watches -> (the callback's class, the line that makes it). After each validation both
    look the key up on every rank and raise where it was never logged (MisconfigurationException,
    or RuntimeError for a strict EarlyStopping), while the ranks that logged it go on to
    `reduce_boolean_decision()` (lightning 2.6.6, callbacks/model_checkpoint.py:587 and :750,
    callbacks/early_stopping.py:175 and :238; pytorch-lightning#15852)."""
    if "monitor" not in text or not any(name in text for name in _MONITORS):
        return {}
    tree = parsed(text)
    if tree is None:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        name = called_name(call)
        if name not in _MONITORS:
            continue
        monitor = next((keyword.value for keyword in call.keywords if keyword.arg == "monitor"), None)
        if monitor is None and name == "EarlyStopping" and call.args:
            monitor = call.args[0]  # EarlyStopping(monitor, ...); ModelCheckpoint's first is dirpath
        if isinstance(monitor, ast.Constant) and isinstance(monitor.value, str):
            found.setdefault(monitor.value, (name, call.lineno))
    return found


def plateau_monitors(text: str) -> dict[str, tuple[str, int]]:
    """Each class whose `configure_optimizers` makes a ReduceLROnPlateau and returns it with a
    `"monitor": "val_loss"` -> (the key, the line naming it). Lightning steps such a scheduler with
    each process's own value of the key (lightning 2.6.6, loops/training_epoch_loop.py:491)."""
    if "ReduceLROnPlateau" not in text or "monitor" not in text:
        return {}
    tree = parsed(text)
    if tree is None:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for klass in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for method in klass.body:
            if not isinstance(method, ast.FunctionDef) or method.name != "configure_optimizers" or not any(
                    isinstance(call, ast.Call) and called_name(call) == "ReduceLROnPlateau" for call in ast.walk(method)):
                continue
            for key, value in ((k, v) for node in ast.walk(method) if isinstance(node, ast.Dict)
                               for k, v in zip(node.keys, node.values)):
                if isinstance(key, ast.Constant) and key.value == "monitor" \
                        and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.setdefault(klass.name, (value.value, key.lineno))
    return found


def _parsed_if_it_reads_metrics(text: str, word: str) -> Optional[ast.Module]:
    """The module's tree where its text reads a trainer's metrics and names `word`, else None."""
    if not any(name in text for name in METRICS_DICTIONARIES) or word not in text:
        return None
    return parsed(text)


# Hooks where `self.log` defaults to on_epoch=True (lightning 2.6.6,
# trainer/connectors/logger_connector/fx_validator.py:60-135, `default_on_epoch=True`).
_EPOCH_HOOKS = frozenset({
    "on_train_start", "on_validation_start", "on_test_start", "on_train_epoch_start", "on_train_epoch_end",
    "on_validation_epoch_start", "on_validation_epoch_end", "on_test_epoch_start", "on_test_epoch_end",
    "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start", "on_test_batch_end",
    "validation_step", "test_step"})


def _for_the_epoch(call: ast.Call, hook: str) -> bool:
    on_epoch = next((keyword.value for keyword in call.keywords if keyword.arg == "on_epoch"), None)
    if on_epoch is not None:
        return not (isinstance(on_epoch, ast.Constant) and on_epoch.value is False)
    return hook in _EPOCH_HOOKS


def _self_log_calls(tree: ast.AST) -> Iterator[ast.Call]:
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
