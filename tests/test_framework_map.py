"""The shipped framework map (bcast_lint/data/framework_map.json) is what its generator computes
from the pinned sources, and the rules read it."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from bcast_lint.analysis import apis, frameworks
from bcast_lint.analysis.project import Project
from bcast_lint.engine import lint_source

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


def _lint(root: Path, files: dict[str, str], name: str):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    target = root / name
    return lint_source(target.read_bytes(), str(target), project=Project())


# ignite.distributed.utils in miniature: its helpers dispatch to a module variable rebound at run
# time, and one_rank_first takes turns through two barriers around its `yield`.
IGNITE_UTILS = """
    from contextlib import contextmanager
    from ignite.distributed.comp_models import _SerialModel

    _model = _SerialModel()

    def get_rank():
        return _model.get_rank()

    def all_reduce(tensor):
        return _model.all_reduce(tensor)

    def barrier():
        _model.barrier()

    @contextmanager
    def one_rank_first(rank=0):
        current_rank = get_rank()
        if current_rank != rank:
            barrier()
        yield
        if current_rank == rank:
            barrier()

    def report(x):
        if get_rank() == 0:
            all_reduce(x)
"""


def test_a_mapped_framework_s_own_calls_resolve_through_the_map(tmp_path):
    result = _lint(tmp_path, {"ignite/__init__.py": "", "ignite/distributed/__init__.py": "",
                              "ignite/distributed/utils.py": IGNITE_UTILS}, "ignite/distributed/utils.py")
    assert result.unresolved == ()
    # _model.all_reduce, _model.barrier, and all_reduce() under the rank test; not the turns' barriers
    assert result.analysed == 3
    assert [(f.line, f.code) for f in result.findings] == [(27, "BCL005")]


def test_a_staggered_context_manager_that_never_closes_the_turn_still_hangs(tmp_path):
    text = """
        from contextlib import contextmanager
        import torch.distributed as dist

        @contextmanager
        def rank_zero_first():
            if dist.get_rank() != 0:
                dist.barrier()
            yield
    """
    result = _lint(tmp_path, {"train.py": text}, "train.py")
    assert [(f.line, f.code) for f in result.findings] == [(8, "BCL005")]


def test_framework_method_names_on_unknown_receivers_are_not_unresolved(tmp_path):
    # mmengine's hooks call its own runner's save_checkpoint (@master_only, no collective): a name
    # DeepSpeed's engine has too, on a receiver that is no framework object.
    text = """
        import torch.distributed as dist

        class CheckpointHook:
            def after_train_epoch(self, runner):
                if dist.get_rank() == 0:
                    runner.save_checkpoint('out')
                    self.strategy.prepare(runner.model)

        class Runner:
            def load_checkpoint(self, path):
                return path

            def resume(self, path):
                if dist.get_rank() == 0:
                    self.load_checkpoint(path)
                dist.all_reduce(path)
                scores.all_reduce()
    """
    result = _lint(tmp_path, {"hooks.py": text}, "hooks.py")
    assert result.findings == () and result.analysed == 1
    assert result.unresolved == ((18, "scores.all_reduce"),)


def test_indexing_gathers_are_not_unresolved(tmp_path):
    # torch's indexing gather takes a dimension first; a collective takes what it gathers.
    text = """
        import torch.distributed as dist

        def pick(logits, labels, hidden, index, rank):
            if rank == 0:
                dist.barrier()
            chosen = logits.gather(-1, labels)
            pooled = hidden.gather(dim=1, index=index)
            return chosen, pooled, outputs.gather(chosen)
    """
    result = _lint(tmp_path, {"pick.py": text}, "pick.py")
    assert result.unresolved == ((9, "outputs.gather"),)


def test_save_and_load_on_other_objects_are_not_unresolved_where_lightning_is_imported(tmp_path):
    # Fabric has save and load, so the names are calls in a file that imports Lightning.
    text = """
        import lightning as L

        def checkpoint(logger, fabric: L.Fabric, rank):
            if rank == 0:
                logger.save()
                logger.experiment.load('run')
            fabric.save('ckpt', {})
    """
    result = _lint(tmp_path, {"loop.py": text}, "loop.py")
    assert result.unresolved == () and result.analysed == 1


def test_the_coverage_counts_each_framework_s_calls(tmp_path):
    text = """
        import torch.distributed as dist
        import lightning as L

        class M(L.LightningModule):
            def on_validation_epoch_end(self):
                self.all_gather(self.preds)
                self.trainer.strategy.barrier()
                dist.barrier()
                helper.broadcast(self.preds)
    """
    result = _lint(tmp_path, {"module.py": text}, "module.py")
    # trainer.strategy is a Strategy (the map's attributes): barrier() resolves. `helper` is unknown:
    # its broadcast counts for Lightning, whose strategies have one, before torch.
    assert result.frameworks == (("lightning", 2, 1), ("torch", 1, 0))
    assert result.unresolved == ((10, "helper.broadcast"),)


def test_a_subclass_that_keeps_the_mapped_methods_is_read_as_its_mapped_class():
    framework_map = frameworks.load()
    assert framework_map.canonical("torchmetrics.classification.MulticlassAccuracy") == "torchmetrics.metric.Metric"
    assert framework_map.method(framework_map.canonical("torchmetrics.MeanMetric"), "compute") is not None


def test_a_subclass_that_overrides_a_mapped_method_is_not_read_as_its_mapped_class():
    # SingleDeviceStrategy overrides barrier() with one that runs no collective.
    name = "lightning.pytorch.strategies.single_device.SingleDeviceStrategy"
    assert frameworks.load().canonical(name) == name


def test_a_hook_class_s_subclass_is_read_as_its_hook_class():
    # Lightning calls a BasePredictionWriter's hooks with a Callback's parameters (trainer, pl_module).
    framework_map = frameworks.load()
    writer = framework_map.canonical("lightning.pytorch.callbacks.BasePredictionWriter")
    assert writer == "lightning.pytorch.callbacks.callback.Callback"
    assert framework_map.hook_parameters[writer]["pl_module"] == "lightning.pytorch.core.module.LightningModule"
