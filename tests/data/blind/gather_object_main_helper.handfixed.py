# verify: ok
"""Every process calls `gather_object`; only the main process prints the result."""
from accelerate import Accelerator
from accelerate.utils import gather_object as collect_objects


def main():
    accelerator = Accelerator()

    def on_main():
        return accelerator.process_index == 0

    prompts = ["a", "b", "c", "d"]
    with accelerator.split_between_processes(prompts) as mine:
        outputs = [p.upper() * 2 for p in mine]
    every_output = collect_objects(outputs)
    if on_main():
        print(f"{len(every_output)} outputs: {every_output}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
