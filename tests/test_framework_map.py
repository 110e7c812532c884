"""The shipped framework map (bcast_lint/data/framework_map.json) is what its generator computes
from the pinned sources, and the rules read it."""

import importlib.util
import sys
from pathlib import Path

import pytest

from bcast_lint.analysis import apis, frameworks

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("generate_framework_map",
                                                  ROOT / "scripts" / "generate_framework_map.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.mark.network
@pytest.mark.slow
def test_shipped_map_matches_the_generator_on_the_pinned_versions(corpus_dir):
    generator = _generator()
    checked = generator.main(["--check", "--corpus-dir", str(corpus_dir)])
    assert checked == 0, "run python scripts/generate_framework_map.py"


def test_map_records_the_pinned_versions():
    generator = _generator()
    assert frameworks.load().versions == {f.name: f.version for f in generator.FRAMEWORKS}


def test_every_entry_has_evidence():
    for entry in frameworks.load().entries.values():
        assert entry.chain, entry.name
        assert all(":" in hop for hop in entry.chain), entry.name


@pytest.mark.parametrize("name", [
    "lightning.pytorch.core.module.LightningModule.log", "lightning.pytorch.core.module.LightningModule.all_gather",
    "lightning.pytorch.trainer.trainer.Trainer.save_checkpoint", "lightning.pytorch.trainer.trainer.Trainer.log_dir",
    "lightning.fabric.fabric.Fabric.barrier", "lightning.fabric.fabric.Fabric.broadcast",
    "lightning.fabric.fabric.Fabric.all_reduce", "lightning.fabric.fabric.Fabric.save",
    "lightning.fabric.fabric.Fabric.load", "transformers.trainer.Trainer.evaluate",
    "transformers.trainer.Trainer.predict", "transformers.trainer.Trainer.save_model",
    "accelerate.accelerator.Accelerator.save_state", "deepspeed.runtime.engine.DeepSpeedEngine.save_checkpoint",
    "deepspeed.runtime.engine.DeepSpeedEngine.load_checkpoint", "torchmetrics.metric.Metric.compute",
    "torchmetrics.metric.Metric.sync", "ignite.distributed.utils.all_reduce", "ignite.distributed.utils.barrier",
    "mmengine.dist.dist.broadcast", "mmengine.dist.utils.barrier", "mmengine.dist.dist.collect_results",
    "torch.distributed.checkpoint.state_dict.get_model_state_dict", "torch.distributed.tensor._api.DTensor.full_tensor",
])
def test_the_calls_measured_to_hang_are_mapped(name):
    assert name in frameworks.load().entries


@pytest.mark.parametrize("name", ["accelerate.accelerator.Accelerator.print", "accelerate.accelerator.Accelerator.save",
                                  "accelerate.accelerator.Accelerator.unwrap_model",
                                  "lightning.fabric.fabric.Fabric.print"])
def test_calls_without_a_collective_are_not_mapped(name):
    assert name not in frameworks.load().entries


def test_public_names_resolve():
    framework_map = frameworks.load()
    assert framework_map.canonical("pytorch_lightning.Trainer") == "lightning.pytorch.trainer.trainer.Trainer"
    assert framework_map.function("ignite.distributed.all_reduce") is not None
    assert apis.CATALOG["mmengine.dist.barrier"].payload == apis.OTHER
    assert apis.CATALOG["mmengine.dist.collect_results"].payload == apis.HIDDEN
