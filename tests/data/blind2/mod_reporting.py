"""A small metrics reporter: values are computed lazily, only when the reporter is enabled."""


class Reporter:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.history = []

    def report(self, step, compute):
        if not self.enabled:
            return
        self.history.append((step, compute()))
        print(f"step {step}: {self.history[-1][1]}", flush=True)
