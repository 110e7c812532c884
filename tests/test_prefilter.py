"""The pre-filter may only skip files that cannot have a finding."""

import pytest

from bcast_lint.prefilter import may_have_findings
from bcast_lint.codes import RULES
from bcast_lint.rules.base import EXAMPLE_PRELUDE
from tests.fixture_files import expected_findings, identifier, programs

_FLAGGED = [p for p in programs() if expected_findings(p)]


@pytest.mark.parametrize("program", _FLAGGED, ids=identifier)
def test_every_fixture_with_findings_passes(program):
    assert may_have_findings(program.read_bytes())


@pytest.mark.parametrize("code", [case.code for spec in RULES for case in spec.load().INVALID])
def test_every_invalid_case_passes(code):
    assert may_have_findings((EXAMPLE_PRELUDE + code).encode())


@pytest.mark.parametrize("source", [
    "from accelerate.utils import broadcast as bc\nbc(x)\n",
    "import torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.barrier()\n",
    "from torch.distributed import all_reduce as ar\nif rank == 0:\n    ar(t)\n",
    "@accelerator.on_main_process\ndef f():\n    accelerator.wait_for_everyone()\n",
    "import deepspeed.comm as comm\ncomm.broadcast(t, 0)\n",
    # A gather of a data-dependent length needs no rank word (BCL015).
    "from accelerate import Accelerator\naccelerator = Accelerator()\nout = accelerator.gather(model.generate(ids))\n",
    "import torch.distributed as dist\ndist.all_gather(out, x[x > 0])\n",
    "import torch.distributed as dist\ndist.gather(x[x > 0], gather_list, dst=0)\n",
    "from accelerate import Accelerator\nout = accelerator.gather(-logits)\n",
    # A script's own values part the ranks without a rank word (a break on its validation loss).
    "from accelerate import Accelerator\ndef main():\n    accelerator.backward(loss)\n    accelerator.wait_for_everyone()\n"
    "if __name__ == '__main__':\n    main()\n",
    # Gradients averaged by hand part the ranks without a rank word (a non-finite check before the all_reduce).
    "import torch.distributed as dist\ndef step(model, loss):\n    loss.backward()\n"
    "    if not all(p.grad.isfinite().all() for p in model.parameters()):\n        return\n"
    "    for p in model.parameters():\n        dist.all_reduce(p.grad)\n",
])
def test_aliases_and_methods_pass(source):
    assert may_have_findings(source.encode())


@pytest.mark.parametrize("source", [
    "import os\nprint(os.getcwd())\n",
    "import numpy as np\nb = np.broadcast_to(a, (3, 3))\n",
    "import torch\nout = torch.gather(x, 1, index)\n",
    # Indexing gathers in a file that names torch.distributed (a license header says "distributed").
    "# distributed under the License\nimport torch\nout = torch.gather(x, 1, index)\n",
    "# distributed under the License\nout = hidden.gather(-2, index).squeeze(-2)\n",
    "# distributed under the License\nout = logits.gather(dim=1, index=labels)\n",
    "# the mask is broadcastable over the batch\nimport torch\n",
    "from accelerate import Accelerator\nif __name__ == '__main__':\n    print(Accelerator().device)\n",
    # DDP averages the gradients inside the backward: a check of them is alike on every rank.
    "import torch.distributed as dist\ndef step(model, loss):\n    model = DDP(model)\n    loss.backward()\n"
    "    if not all(p.grad.isfinite().all() for p in model.parameters()):\n        return\n"
    "    dist.barrier()\n",
])
def test_files_without_a_collective_are_skipped(source):
    assert not may_have_findings(source.encode())


def _rank_spellings():
    """Every spelling ranks.py reads as a rank or a main-process test, as a condition."""
    from bcast_lint.analysis import ranks

    yield from (f"trainer.{name}" for name in ranks._MAIN_PROPERTIES)
    yield from (f"args.{name} == 0" for name in ranks._RANK_ATTRIBUTES)
    yield from (f"{name} == 0" for name in ranks._RANK_NAMES)
    yield from (f"dist.{name}() == 0" for name in ranks._RANK_METHODS)
    yield from (f"os.environ['{key}'] == '0'" for key in ranks._ENVIRONMENT_KEYS)


@pytest.mark.parametrize("condition", sorted(_rank_spellings()))
def test_every_rank_spelling_passes(condition):
    # Regression: `os.environ["RANK"]` and Lightning's `is_global_zero` were skipped.
    source = f"import os\nimport torch.distributed as dist\nif {condition}:\n    dist.barrier()\n"
    assert may_have_findings(source.encode())


@pytest.mark.parametrize("source", [
    "from lightning.fabric import Fabric\nfabric = Fabric()\nif fabric.global_rank == 0:\n    fabric.barrier()\n",
    "import lightning as L\nclass M(L.LightningModule):\n    def f(self, x):\n"
    "        if self.global_rank == 0:\n            self.log('x', x, sync_dist=True)\n",
    "import ignite.distributed as idist\nif idist.get_rank() == 0:\n    idist.barrier()\n",
    "from mmengine.dist import is_main_process, collect_results\nif is_main_process():\n    collect_results(p, 2)\n",
])
def test_files_of_mapped_frameworks_pass(source):
    assert may_have_findings(source.encode())


@pytest.mark.parametrize("source", [
    "import logging\nlog = logging.getLogger()\nif rank == 0:\n    log.info('x')\n",
    "def train(model):\n    if rank == 0:\n        model.fit(x)\n        logger.log(1)\n",
])
def test_framework_method_names_count_only_with_the_framework(source):
    assert not may_have_findings(source.encode())


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_frameworks_import_counts_whatever_ends_the_lines(newline):
    source = "import torch\nimport lightning as L\n\nclass M(L.LightningModule):\n    def step(self, x):\n" \
             "        if self.global_rank == 0:\n            self.log('x', x, sync_dist=True)\n"
    assert may_have_findings(source.replace("\n", newline).encode())
