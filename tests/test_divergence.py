"""The divergence pass (analysis/divergence.py) on its own: which tests, loops and `try`
statements it finds can differ between ranks, and why. The rules' cases test what is reported."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bcast_lint.analysis.divergence import (CLOCK, CONTROL, DATA, DEALT, LOCAL_DATA, RACE, RAISES, RANK, UNEVEN_PIECE,
                                            setup_truth, written_by_some)
from bcast_lint.analysis.module import ModuleAnalysis

PRELUDE = "import os\nimport time\nimport torch\nimport torch.distributed as dist\n"


def _analysis(body: str) -> ModuleAnalysis:
    code = PRELUDE + textwrap.dedent(body)
    return ModuleAnalysis(cst.parse_module(code), "case.py")


def _tests(body: str) -> dict:
    analysis = _analysis(body)
    return {analysis.code(test): why for test, why in analysis.divergence.tests.items()}


def _loops(body: str) -> dict:
    analysis = _analysis(body)
    return {analysis.code(decider): why for decider, why in analysis.divergence.loops.values()}


def test_a_file_check_on_a_path_one_rank_writes_varies():
    assert _tests("""
        def f(ckpt):
            if dist.get_rank() == 0:
                torch.save({}, ckpt)
            if os.path.exists(ckpt):
                dist.barrier()
    """) == {"os.path.exists(ckpt)": written_by_some("ckpt")}


def test_a_file_check_every_rank_makes_alike_does_not():
    assert _tests("""
        def f(ckpt):
            if os.path.exists(ckpt):
                dist.barrier()
    """) == {}


def test_what_a_loader_hands_a_rank_varies_through_any_computation_but_not_its_step_count():
    assert _tests("""
        def f(model, train_loader, criterion, accumulate):
            for step, (inputs, labels) in enumerate(train_loader):
                loss = criterion(model(inputs), labels)
                if step % accumulate == 0:
                    dist.barrier()
                if loss.item() > 10:
                    dist.barrier()
                if len(inputs) < 8:
                    dist.barrier()
    """) == {"loss.item() > 10": DATA}


def test_a_batch_made_equal_by_a_collective_no_longer_varies():
    assert _tests("""
        def f(model, batches):
            for batch in zip(batches, range(3)):
                loss = model(batch)
                dist.all_reduce(loss)
                if loss > 0:
                    dist.barrier()
            first = next(iter(batches))
            if first.sum() > 0:
                dist.barrier()
    """) == {"first.sum() > 0": DATA}


def test_the_clock_varies_and_a_collective_makes_it_equal_again():
    assert _tests("""
        def f(limit):
            start = time.time()
            late = time.time() - start > limit
            if late:
                dist.barrier()
            flag = torch.tensor([float(late)])
            dist.all_reduce(flag)
            if flag.item() > 0:
                dist.barrier()
    """) == {"late": CLOCK}


def test_a_length_from_the_rank_varies_but_one_item_per_rank_does_not():
    assert _loops("""
        def f(items, per_rank):
            rank = dist.get_rank()
            mine = items[rank::dist.get_world_size()]
            for x in mine:
                dist.all_reduce(x)
            for y in per_rank[rank]:
                dist.all_reduce(y)
    """) == {"mine": DEALT}


def test_batches_of_a_dealt_share_are_as_many_on_every_rank_but_the_share_s_items_are_not():
    # Shares dealt round-robin differ by one item at most: counted in batches of 8, alike.
    assert _loops("""
        def f(items):
            mine = items[dist.get_rank()::dist.get_world_size()]
            for start in range(0, len(mine), 8):
                dist.all_reduce(mine[start])
            for batch in mine.split(8):
                dist.all_reduce(batch)
            for one in range(0, len(mine), 1):
                dist.all_reduce(mine[one])
            piece = items.tensor_split(dist.get_world_size())[dist.get_rank()]
            for batch in piece.split(8):
                dist.all_reduce(batch)
            last = items.chunk(dist.get_world_size())[dist.get_rank()]  # (a short last piece)
            for batch in last.split(8):
                dist.all_reduce(batch)
    """) == {"range(0, len(mine), 1)": DEALT, "last.split(8)": UNEVEN_PIECE}


def test_a_list_filled_under_a_varying_test_varies_in_length():
    assert _loops("""
        def f(items, limit):
            kept = []
            for item in items:
                if time.time() > limit:
                    kept.append(item)
            for x in kept:
                dist.all_reduce(x)
    """) == {"kept": CONTROL}


@pytest.mark.parametrize("fill, recorded", [("if batch.any():\n                    self.kept.append(batch)", CONTROL),
                                            ("self.kept.append(batch)", None)])
def test_an_attribute_tested_for_items_varies_with_its_length(fill, recorded):
    assert _tests(f"""
        import lightning as L
        class Epoch(L.LightningModule):
            def __init__(self):
                self.kept = []
            def validation_step(self, batch, index):
                {fill}
            def on_validation_epoch_end(self):
                if not self.kept:
                    return
                dist.all_reduce(torch.ones(1))
    """).get("self.kept") == recorded


def test_the_worlds_decide_a_rank_test_so_nothing_is_recorded_for_it():
    assert _tests("""
        def f(x):
            if dist.get_rank() == 0:
                dist.all_reduce(x)
    """) == {}


def test_a_rank_test_or_a_flag_records_the_flag():
    assert _tests("""
        def f(x, args):
            if dist.get_rank() == 0 or args.save_all:
                dist.all_reduce(x)
    """) == {"args.save_all": RANK}


@pytest.mark.parametrize("guard", ["not dist.is_initialized()", "dist.get_world_size() == 1",
                                   "not args.distributed"])
def test_a_setup_check_or_the_rank_is_no_split(guard):
    assert _tests(f"""
        def f(x, args):
            if {guard} or dist.get_rank() == 0:
                dist.all_reduce(x)
    """) == {}


def test_setup_checks_have_their_value_in_a_distributed_job():
    truth = {text: setup_truth(cst.parse_expression(text)) for text in
             ("dist.is_initialized()", "world_size > 1", "world_size == 1", "args.distributed",
              "state.distributed_type != DistributedType.NO", "loss > 1")}
    assert truth == {"dist.is_initialized()": True, "world_size > 1": True, "world_size == 1": False,
                     "args.distributed": True, "state.distributed_type != DistributedType.NO": True,
                     "loss > 1": None}


def test_a_read_of_a_rank_own_file_in_a_try_can_fail_on_some_ranks():
    analysis = _analysis("""
        def f(paths):
            for step in range(3):
                try:
                    data = torch.load(paths[dist.get_rank()])
                except FileNotFoundError:
                    continue
                dist.all_reduce(data)
    """)
    assert list(analysis.divergence.raising.values()) == [RAISES]


def test_an_unknown_function_given_a_varying_value_returns_nothing_known():
    assert _tests("""
        def f(loader):
            it = iter(loader) if dist.get_rank() == 0 else None
            done = fetch(it)
            if done:
                dist.barrier()
    """) == {}


def test_an_unknown_function_given_the_rank_itself_returns_that_rank_own_data():
    assert _tests("""
        def f():
            for batch in load_batches(dist.get_rank()):
                if batch.sum() > 0:
                    dist.all_reduce(batch)
    """) == {"batch.sum() > 0": LOCAL_DATA}


def test_a_comprehension_target_named_rank_holds_an_item_not_the_rank():
    assert _tests("""
        def f(place):
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, place)
            if [rank for rank, main in everyone if main] == [0, 2]:
                dist.barrier()
    """) == {}


def test_an_assert_on_a_rank_own_data_is_a_test_that_differs_between_ranks():
    assert _tests("""
        def f():
            for batch in load_shard(dist.get_rank()):
                assert torch.isfinite(batch).all()
                dist.all_reduce(batch)
    """) == {"torch.isfinite(batch).all()": LOCAL_DATA}


def test_an_assert_on_arithmetic_of_the_rank_checks_the_layout_and_makes_no_class():
    assert _tests("""
        def f(items):
            mine = items[dist.get_rank()::2]
            assert len(mine) > 0
            dist.barrier()
    """) == {}


@pytest.mark.parametrize("guard", ["dist.get_rank() == 0 and x is None", "x is None"])
def test_a_raise_on_one_rank_or_on_uniform_data_makes_no_class_of_ranks(guard):
    assert _tests(f"""
        def f(x):
            if {guard}:
                raise ValueError("no data")
            dist.barrier()
    """) == {}


def test_a_loop_over_a_set_of_names_runs_in_an_order_salted_per_process():
    analysis = _analysis("""
        def f(params):
            names = set(params)
            for name in names:
                dist.all_reduce(params[name])
            for name in sorted(names):
                dist.all_reduce(params[name])
            for i in {0, 1}:
                dist.all_reduce(params[i])
    """)
    assert [analysis.code(iterable) for iterable, _ in analysis.divergence.orders.values()] == ["names"]


def test_what_an_unknown_function_computes_from_a_rank_own_data_is_that_data_too():
    assert _tests("""
        def f(model):
            for batch in load_shard(dist.get_rank()):
                loss = model(batch).mean()
                if not torch.isfinite(loss):
                    raise FloatingPointError("non-finite loss")
                dist.all_reduce(loss)
    """) == {"torch.isfinite(loss)": LOCAL_DATA}


def test_a_rank_s_piece_of_a_split_held_in_a_name_varies_in_length():
    assert _loops("""
        def f(items, world, x):
            parts = items.chunk(world)
            mine = parts[dist.get_rank()]
            for item in mine:
                dist.all_reduce(x)
    """) == {"mine": UNEVEN_PIECE}


def test_a_piece_of_a_split_taken_by_a_fixed_index_does_not_vary():
    assert _loops("""
        def f(items, world, x):
            parts = items.chunk(world)
            for item in parts[0]:
                dist.all_reduce(x)
    """) == {}


def test_a_piece_padded_to_a_length_every_rank_shares_does_not_vary():
    assert _loops("""
        def f(items, world, x, n):
            mine = items.chunk(world)[dist.get_rank()]
            while len(mine) < n:
                mine = torch.cat([mine, mine[:1]])
            for item in mine:
                dist.all_reduce(x)
    """) == {"len(mine) < n": UNEVEN_PIECE}  # the padding loop's own count, not the loop after it


def test_a_window_both_of_whose_ends_move_with_the_rank_does_not_vary_in_length():
    assert _loops("""
        def f(items, n, x):
            rank = dist.get_rank()
            for item in items[rank * n:(rank + 1) * n]:
                dist.all_reduce(x)
    """) == {}


def test_a_slice_bounded_by_a_rank_s_own_count_varies_in_length():
    assert _loops("""
        def f(items, x):
            n_local = len(items[dist.get_rank()::2])
            for item in items[:n_local]:
                dist.all_reduce(x)
    """) == {"items[:n_local]": RANK}


@pytest.mark.parametrize("creation, raced", [
    ("os.makedirs(run_dir)", True),
    ("os.mkdir(run_dir)", True),
    ("os.remove(run_dir)", True),
    ("open(run_dir, 'x')", True),
    ("Path(run_dir).mkdir(parents=True)", True),
    ("os.makedirs(run_dir, exist_ok=True)", False),  # no race: every rank succeeds
    ("os.makedirs(f'{run_dir}/{dist.get_rank()}')", False),  # a path of its own
    ("open(run_dir, 'w')", False),
    ("items.remove(run_dir)", False),  # a list's, not a file's
])
def test_every_rank_creating_or_removing_one_path_races(creation, raced):
    analysis = _analysis(f"""
        from pathlib import Path
        def f(run_dir, items):
            try:
                {creation}
                made = True
            except OSError:
                made = False
            if made:
                dist.barrier()
    """)
    assert list(analysis.divergence.raising.values()) == ([RACE] if raced else [])


def test_appending_under_a_key_that_varies_adds_keys_that_vary():
    tests = _tests("""
        from collections import defaultdict
        def f(items, flag):
            groups = defaultdict(list)
            for label in items[dist.get_rank()::2]:
                groups[label].append(1)
            fixed = defaultdict(list)
            for label in ("a", "b"):
                fixed[label].append(1)
            if len(groups) > 2:
                dist.barrier()
            if len(fixed) > 2:
                dist.barrier()
    """)
    assert list(tests) == ["len(groups) > 2"]
