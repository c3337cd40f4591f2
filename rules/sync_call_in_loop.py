"""TL108 sync-call-in-loop."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.grad import name_tokens
from torchlint.analysis.loops import LoopFacts, StepOwner
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_have_batch_loops
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_BACKENDS = ("torch.cuda", "torch.accelerator", "torch.xpu", "torch.mps")
_SYNCHRONIZE = frozenset(f"{backend}.synchronize" for backend in _BACKENDS)
_EMPTY_CACHE = frozenset(f"{backend}.empty_cache" for backend in _BACKENDS)
_STREAMS = frozenset(
    {"torch.cuda.current_stream", "torch.cuda.default_stream", "torch.accelerator.current_stream"}
)
# What a measurement reads: clocks, CUDA event timings, allocator statistics, the profiler.
_CLOCKS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.monotonic",
        "time.process_time",
        "time.time_ns",
        "time.perf_counter_ns",
        "time.monotonic_ns",
        "timeit.default_timer",
        "timeit.timeit",
        "timeit.repeat",
    }
)
_MEASURING_METHODS = frozenset(
    {
        "elapsed_time",
        "max_memory_allocated",
        "memory_allocated",
        "max_memory_reserved",
        "memory_reserved",
        "reset_peak_memory_stats",
        "reset_max_memory_allocated",
        "memory_stats",
        "memory_summary",
    }
)
_MEASURING_MODULES = ("torch.profiler.", "torch.autograd.profiler.", "torch.cuda.memory.")
# Words of a run's switch that trades speed for memory (`cfg.empty_cache`, `vllm_enable_sleep_mode`).
_MEMORY_WORDS = frozenset({"cache", "memory", "mem", "sleep", "offload", "oom"})
# Owners of the calls that mark ranges for Nsight Systems (`torch.cuda.nvtx.range_push`, `nsys.region(...)`).
_TRACE_MARKERS = frozenset({"nvtx", "nsys"})
# Owners of the calls that start and stop a timer of the project's own (`fw_timer.tic()`,
# `self.timer.toc()`, `profiler.tick("forward")`), which reads the clock inside its methods.
_TIMERS = frozenset({"timer", "timers", "stopwatch", "profiler"})
_MEASURING_WORDS = frozenset(
    {
        "bench",
        "benchmark",
        "benchmarks",
        "benchmarking",
        "profile",
        "profiling",
        "profiler",
        "timing",
        "timed",
        "measure",
        "latency",
        "throughput",
    }
)


class SyncCallInLoop(Rule):
    code = "TL108"
    name = "sync-call-in-loop"
    gpu_only = True  # synchronize and empty_cache do nothing on a CPU
    summary = "`torch.cuda.synchronize()` or `torch.cuda.empty_cache()` runs on every batch"
    default_enabled = False
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("synchronize", "empty_cache")
    text_tests = (may_have_batch_loops,)  # it looks only in per-batch loops
    docs = """
## What it does
Flags, in a per-batch loop (a loop over a DataLoader, or one whose body runs `backward()` or an
optimizer step, also through a function of the same file called from it):

- `torch.cuda.synchronize()` and `torch.cuda.current_stream().synchronize()` (also
  `default_stream()`), and the same calls of `torch.accelerator`, `torch.xpu` and `torch.mps`;
- `torch.cuda.empty_cache()` (and its `torch.accelerator`, `torch.xpu`, `torch.mps` twins).

Not flagged:
- calls under a periodic guard (`if step % 100 == 0:`; not one whose branch steps the optimizer,
  as in gradient accumulation: that branch runs with every update), once-only code (`if i == 0:`) and except
  handlers (freeing the cache after an out-of-memory error is what it is for);
- calls before or after the loop, and in per-epoch loops;
- `empty_cache()` behind a switch of the run named for memory (`if cfg.empty_cache:`,
  `if args.vllm_enable_sleep_mode:`): a trade-off of speed for memory the user turns on for
  the runs that need it (a switch for something else, `if args.batch_eval_metrics:`, does not
  count);
- measurements: a loop (or a helper called from it) that reads a clock (`time.perf_counter()`,
  `time.time()`, `timeit.default_timer()`), CUDA event timings (`elapsed_time`), allocator
  statistics (`max_memory_allocated()`, `reset_peak_memory_stats()`), drives the profiler or
  marks NVTX / Nsight Systems ranges (`torch.cuda.nvtx.range_push(...)`), calls a timer object
  (`fw_timer.tic()`, `self.timer.toc()`, `profiler.tick("forward")`: its methods read the
  clock), and functions named for
  benchmarking, profiling or timing: there the synchronization is what
  makes the numbers right;
- unit tests.

Stream or event waits other than these (`event.synchronize()`, `stream.wait_stream(...)`) are
not flagged: they wait for specific work and are how overlapping pipelines are written.

This rule is opt-in: enable it with `--extend-select TL108`. In production codebases these
calls are mostly deliberate: `empty_cache()` between the phases of a large RL or fine-tuning
step to avoid fragmentation or to share the GPU with a generation engine, `synchronize()`
in a loop that already waits every step. The rule cannot tell those from waste, and about
half its findings there are such trade-offs.

## Why is this bad?
CUDA work is queued asynchronously, so Python normally prepares step N+1 while the GPU still
runs step N. `torch.cuda.synchronize()` blocks the CPU until every queued kernel has finished:
once per batch it empties the queue, the GPU idles while Python launches the next step, and the
data loader's overlap is lost.

`torch.cuda.empty_cache()` returns the caching allocator's unused blocks to the driver. The next
batch needs the same memory again and gets it through `cudaMalloc`/`cudaFree`, which are slow
and synchronize the device. It does not give the program itself more memory (cached blocks are
reused anyway); it only helps other processes sharing the GPU, and fragmentation is better
handled with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.

## Example
```python
for x, y in loader:
    loss = loss_fn(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
```

## Use instead
```python
for step, (x, y) in enumerate(loader):
    loss = loss_fn(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
torch.cuda.empty_cache()  # once, between training and evaluation, if another process needs it
```
To time steps, use CUDA events (`torch.cuda.Event(enable_timing=True)`) read every N steps,
or the PyTorch profiler.

## Fix safety
Display-only. Removing a synchronize can change what a later host-side read or timer sees, and
removing `empty_cache()` can change how much memory other processes on the same GPU can get;
only the author knows whether the call is still wanted.

## References
- [torch.cuda.synchronize](https://pytorch.org/docs/stable/generated/torch.cuda.synchronize.html)
- [torch.cuda.empty_cache](https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html)
- [CUDA semantics: asynchronous execution and memory management](https://pytorch.org/docs/stable/notes/cuda.html#memory-management)
- [PyTorch Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): avoid unnecessary synchronizations](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        # A profiler object of the project's own times each phase: the synchronize makes it right.
        Valid(
            """
            import torch
            from utils.profiler import Profiler

            def sync(device):
                if device.type == "cuda":
                    torch.cuda.synchronize(device)

            profiler = Profiler(summarize_every=10)
            for x, y in loader:
                out = model(x.to(device))
                sync(device)
                profiler.tick("Forward pass")
                loss_fn(out, y.to(device)).backward()
                optimizer.step()
            """
        ),
        # Periodic, once-only and out-of-memory paths.
        Valid(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                if i % 500 == 0:
                    torch.cuda.empty_cache()
            """
        ),
        Valid(
            """
            import torch
            for x, y in loader:
                try:
                    loss = loss_fn(model(x.cuda()), y.cuda())
                    loss.backward()
                except torch.cuda.OutOfMemoryError:
                    torch.cuda.empty_cache()
                    continue
                optimizer.step()
            """
        ),
        # After the loop, and per epoch.
        Valid(
            """
            import torch
            for x, y in loader:
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            torch.cuda.synchronize()
            """
        ),
        Valid(
            """
            import torch
            for epoch in range(10):
                train_one_epoch(model, loader)
                torch.cuda.empty_cache()
            """
        ),
        # A timing loop: the synchronize makes the clock reads right.
        Valid(
            """
            import time
            import torch
            for x, y in loader:
                start = time.perf_counter()
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                times.append(time.perf_counter() - start)
            """
        ),
        Valid(
            """
            import torch
            def benchmark_training(model, loader):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    torch.cuda.synchronize()
            """
        ),
        # A timer object of the project's own (`Timer.tic()`/`toc()` read the clock inside it).
        Valid(
            """
            import torch
            def compute_time_train(model, loss_fun, inputs, labels):
                fw_timer, bw_timer = Timer(), Timer()
                for cur_iter in range(100):
                    fw_timer.tic()
                    loss = loss_fun(model(inputs), labels)
                    torch.cuda.synchronize()
                    fw_timer.toc()
                    bw_timer.tic()
                    loss.backward()
                    torch.cuda.synchronize()
                    bw_timer.toc()
            """
        ),
        # A loop marked with NVTX ranges for Nsight Systems: the synchronize keeps the ranges aligned with the GPU work.
        Valid(
            """
            import torch
            for x, y in loader:
                torch.cuda.nvtx.range_push('step')
                model(x.cuda()).sum().backward()
                optimizer.step()
                torch.cuda.nvtx.range_pop()
                torch.cuda.synchronize()
            """
        ),
        # Not a per-batch loop; another stream's event.
        Valid(
            """
            import torch
            for module in model.modules():
                torch.cuda.empty_cache()
            """
        ),
        Valid(
            """
            import torch
            for x, y in loader:
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                done.synchronize()
            """
        ),
        Valid(
            """
            import pytest
            import torch
            def test_step():
                for x, y in loader:
                    model(x.cuda()).sum().backward()
                    torch.cuda.synchronize()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            for x, y in loader:
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            """,
            count=2,
            line=6,
            column=5,
            message="`torch.cuda.synchronize()` on every batch blocks the CPU until the GPU is idle",
        ),
        # Aliases, a device check that is no periodic guard, and the stream form.
        Invalid(
            """
            import torch as T
            from torch.cuda import empty_cache
            for step, batch in enumerate(train_loader):
                out = model(batch.to(device))
                out.loss.backward()
                if device.type == 'cuda':
                    T.cuda.current_stream().synchronize()
                empty_cache()
            """,
            count=2,
            line=7,
            column=9,
            message="`T.cuda.current_stream().synchronize()` on every batch blocks the CPU until the GPU is idle",
        ),
        # A helper called on every batch.
        Invalid(
            """
            import torch
            def free_memory():
                torch.cuda.empty_cache()
            def train(model, loader, optimizer):
                for x, y in loader:
                    model(x).sum().backward()
                    optimizer.step()
                    free_memory()
            """,
            line=3,
            column=5,
            message="`torch.cuda.empty_cache()` on every batch empties the cache, so each batch calls cudaMalloc again",
        ),
        # A clock read once per epoch does not make the per-batch synchronize a measurement.
        Invalid(
            """
            import time
            import torch
            start = time.time()
            for x, y in loader:
                loss = loss_fn(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                torch.accelerator.synchronize()
            print(time.time() - start)
            """,
            line=8,
            column=5,
            message="`torch.accelerator.synchronize()` on every batch blocks the CPU until the GPU is idle",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.candidates: list[tuple[cst.Call, str]] = []
        self.measurements: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        what = self._sync_kind(node)
        if what is not None:
            self.candidates.append((node, what))
        elif self._measures(node):
            self.measurements.append(node)

    def _sync_kind(self, call: cst.Call) -> str | None:
        func = call.func
        qualname = self.ctx.symbols.qualname(func) or ""
        if qualname in _SYNCHRONIZE or qualname in _EMPTY_CACHE:
            return qualname.rsplit(".", 1)[-1]
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "synchronize"
            and isinstance(func.value, cst.Call)
        ):
            if (self.ctx.symbols.qualname(func.value.func) or "") in _STREAMS:
                return "synchronize"
        return None

    def _measures(self, call: cst.Call) -> bool:
        qualname = self.ctx.symbols.qualname(call.func) or ""
        if qualname in _CLOCKS or qualname.startswith(_MEASURING_MODULES):
            return True
        if not isinstance(call.func, cst.Attribute):
            return False
        method = call.func.attr.value
        if method in _MEASURING_METHODS:
            return True
        owner = set(name_tokens((dotted(call.func.value) or "").rsplit(".", 1)[-1]))
        if owner & _TRACE_MARKERS:
            return True  # NVTX ranges or Nsight Systems marks: the loop is being profiled
        if owner & _TIMERS:
            return True  # a timer object reads the clock in its methods
        return method == "step" and "prof" in owner

    def finish(self) -> None:
        if not self.candidates:
            return
        loops = self.ctx.fact(LoopFacts)
        for call, what in self.candidates:
            loop = loops.per_batch_loop(call, every_update=True)
            if loop is None or self._measuring(call, loop):
                continue
            if what == "empty_cache" and self._memory_switch(call, loops):
                continue
            shown = self.ctx.code(call)
            if what == "synchronize":
                message = f"`{shown}` on every batch blocks the CPU until the GPU is idle"
                fix = self.make_fix(
                    "Remove it, or synchronize only when a value is read (every N steps, after the loop)",
                    Applicability.DISPLAY_ONLY,
                )
            else:
                message = f"`{shown}` on every batch empties the cache, so each batch calls cudaMalloc again"
                fix = self.make_fix(
                    "Remove it, or call it once between phases (after training, before evaluation)",
                    Applicability.DISPLAY_ONLY,
                )
            self.report(call, message, fix)

    @staticmethod
    def _memory_switch(call: cst.Call, loops: LoopFacts) -> bool:
        """`if self.cfg.empty_cache:`, `if args.vllm_enable_sleep_mode:`: a switch of the run
        named for memory holds the call, a trade-off of speed for memory that the user turns
        on for the runs that need it (Pointcept's large pretraining configs, TRL's colocated
        vLLM before its wake-up: judged debatable and FP). A switch for something else
        (`if args.batch_eval_metrics:`) frees the cache as a side effect: still a finding."""
        switch = loops.setting_switch(call)
        return switch is not None and bool(
            set(name_tokens((dotted(switch) or "").rsplit(".", 1)[-1])) & _MEMORY_WORDS
        )

    def _measuring(self, call: cst.Call, loop: StepOwner) -> bool:
        """Whether the loop, or the function of the call inside it, measures time or memory."""
        scopes = self.ctx.fact(SemanticModel)
        regions: set[cst.CSTNode] = {loop}
        function = scopes.function_of(call)
        if function is not None and not any(
            parent is function for parent in scopes.ancestors(loop)
        ):
            regions.add(function)  # a helper called from the loop
        for node in (call, loop):
            for parent in scopes.ancestors(node):
                if (
                    isinstance(parent, cst.FunctionDef)
                    and set(name_tokens(parent.name.value)) & _MEASURING_WORDS
                ):
                    return True
        return any(
            any(parent in regions for parent in scopes.ancestors(m)) for m in self.measurements
        )
