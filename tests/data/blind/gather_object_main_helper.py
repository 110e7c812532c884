# verify: hang
"""Generated texts are collected with accelerate's `gather_object` (imported under another name)
inside `if on_main():`, a small local helper that compares the process index with 0, so only the
main process calls the gather.

Modelled on huggingface/accelerate#2733 "gather_object does work with if
distributed_state.is_main_process:" (https://github.com/huggingface/accelerate/issues/2733):
`gather_object` called under `is_main_process` hung; the maintainer's answer was to call it on
every process.
"""
from accelerate import Accelerator
from accelerate.utils import gather_object as collect_objects


def main():
    accelerator = Accelerator()

    def on_main():
        return accelerator.process_index == 0

    prompts = ["a", "b", "c", "d"]
    with accelerator.split_between_processes(prompts) as mine:
        outputs = [p.upper() * 2 for p in mine]
    if on_main():
        every_output = collect_objects(outputs)  # expect: BCL005
        print(f"{len(every_output)} outputs: {every_output}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
