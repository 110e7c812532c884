"""Gradients that no wrapper averages: each rank's own until a collective of the user's syncs them.

A module that runs `loss.backward()` on a model it never hands to a wrapper that averages the
gradients inside the backward (DDP, FSDP, DeepSpeed, Accelerate, Lightning, Horovod) averages them
by hand, if at all (`for p in model.parameters(): dist.all_reduce(p.grad)`). Until then what the
gradients say is each rank's own: a non-finite check (`torch.isfinite(p.grad)`), a norm
(`clip_grad_norm_`), an overflow test of a hand-written loss scaler, drawn from the rank's own batch
(pytorch#76282, dialogue-generation#10). So are DDP's gradients after a backward under
`no_sync()`, until a backward outside it. Read from the module's whole text, once per module.
"""

from __future__ import annotations

from bcast_lint.analysis.words import Text, encoded

# Calls of a wrapper, or a framework, that averages gradients inside the backward (a file that
# only imports one, as a launcher does, still averages by hand).
_SYNCING_CALLS = ("DDP(", "DistributedDataParallel(", "FSDP(", "FullyShardedDataParallel(", "fully_shard(",
                  "replicate(", "prepare(", "setup(", "setup_module(", "initialize(", "DistributedOptimizer(",
                  "register_comm_hook(", "no_sync(", "LightningModule", "Trainer(")

# Attributes that hold a parameter's gradient.
GRADIENT_ATTRIBUTES = frozenset({"grad", "main_grad"})
# Functions whose result is computed from the gradients of the parameters they are handed.
GRADIENT_READERS = frozenset({"clip_grad_norm_", "clip_grad_norm", "get_total_norm", "clip_grads_with_norm_"})


def gradients_unsynced(text: Text) -> bool:
    """Whether the module runs a backward and calls no wrapper that averages gradients (its text,
    or its bytes as the pre-filter reads them)."""
    kind = type(text)
    return _BACKWARD[kind] in text and not any(call in text for call in _SYNCING[kind])


def reads_gradients(text: Text) -> bool:
    """Whether a text may read a gradient (a test of its words, before any parse)."""
    kind = type(text)
    return _GRAD[kind] in text or any(reader in text for reader in _READERS[kind])


# The words above, as text and as bytes.
_BACKWARD = {str: ".backward(", bytes: b".backward("}
_GRAD = {str: ".grad", bytes: b".grad"}
_SYNCING = {str: _SYNCING_CALLS, bytes: encoded(_SYNCING_CALLS)}
_READERS = {str: tuple(GRADIENT_READERS), bytes: encoded(GRADIENT_READERS)}


def gradients_kept_apart(text: str) -> bool:
    """Whether a backward of the module can leave each rank its own gradients: it averages them by
    hand, if at all, or accumulates them under DDP's `no_sync()` until the backward outside it."""
    return gradients_unsynced(text) or ("no_sync(" in text and ".backward(" in text)
