"""The in-process half of `torchlint verify`: runs one script under observation.

Started by the parent as `python -m torchlint.verify.runner SPEC.json`, in its own process
group. It seeds every generator, installs global hooks that need no change to the user's
code (optimizer step hooks, a wrapper around backward, a TorchFunctionMode counting host
syncs), executes the script as `python SCRIPT ARGS` would, and writes what it saw as JSON
to the path named in the spec. Nothing here syncs the device until the script has stopped.

Only this module ever executes user code; the linter never imports it.
"""

from __future__ import annotations

import builtins
import faulthandler
import functools
import gc
import json
import linecache
import os
import platform
import random
import resource
import signal
import sys
import time
import traceback
import types
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from torchlint.verify.reaper import die_with_parent

# Tensors up to this many elements are compared whole; larger ones by an even sample of it.
SAMPLE = 4096
# Name components that wrappers add (DataParallel, DDP, torch.compile): dropped from names
# so a wrapped and an unwrapped model match.
WRAPPER_COMPONENTS = ("module", "_orig_mod")
CUDA_SYNC_WARNING = "called a synchronizing CUDA operation"
# Python frames that only dispatch a tensor method to the mode; the caller is above them.
DISPATCH_FILES = (os.path.join("torch", "overrides.py"), os.path.join("torch", "_tensor.py"))


class StopRun(BaseException):
    """Raised from the step hook after the requested number of steps.

    A BaseException so that the script's own `except Exception` cannot swallow it.
    """


class Recorder:
    """Everything the hooks observe during one run."""

    def __init__(self, torch: Any, script: str, steps: int | None) -> None:
        self.torch = torch
        self.script = script
        self.limit = steps
        self.optimizers: list[Any] = []
        self.names: dict[int, str] = {}  # id(parameter) -> qualified name, taken at its first step
        self.primary: Any = None  # the first optimizer that stepped; its steps are the run's steps
        self.steps = 0
        self.on_cuda = False
        self.marks: list[Any] = []  # a CUDA event or a perf_counter value at the end of each step
        self.losses: list[tuple[int, Any]] = []  # (1-based step, detached loss tensor)
        # (kind, script line) -> syncs, kind "conversion" (the mode) or "cuda" (sync debug mode).
        # `steady` holds those between the first and the last step end, the per-step rate;
        # `pending` those since the last step end; `outside` setup before the first step and
        # whatever follows the last one.
        self.steady: Counter[tuple[str, int]] = Counter()
        self.pending: Counter[tuple[str, int]] = Counter()
        self.outside: Counter[tuple[str, int]] = Counter()
        self.in_backward = False

    # -- optimizer hooks -------------------------------------------------------------
    def pre_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if all(o is not optimizer for o in self.optimizers):
            self.optimizers.append(optimizer)
            self.names.update(parameter_names(self.torch, optimizer))
        if self.primary is None:
            self.primary = optimizer
            self.on_cuda = any(
                p.device.type == "cuda" for g in optimizer.param_groups for p in g["params"]
            )

    def post_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if optimizer is not self.primary:
            return
        self.steps += 1
        self.marks.append(self._mark())
        (self.outside if self.steps == 1 else self.steady).update(self.pending)
        self.pending.clear()
        if self.limit is not None and self.steps >= self.limit:
            raise StopRun

    def _mark(self) -> Any:
        if not self.on_cuda:
            return time.perf_counter()
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    # -- losses ------------------------------------------------------------------------
    def wrap_backward(self, original: Any) -> Any:
        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            if self.in_backward:  # Tensor.backward calls torch.autograd.backward: record once
                return original(tensors, *args, **kwargs)
            self._record_loss(tensors)
            self.in_backward = True
            try:
                return original(tensors, *args, **kwargs)
            finally:
                self.in_backward = False

        return functools.wraps(original)(backward)

    def _record_loss(self, tensors: Any) -> None:
        first = tensors[0] if isinstance(tensors, (list, tuple)) and tensors else tensors
        if not isinstance(first, self.torch.Tensor):
            return
        # Kept on its device, converted at the end: recording must not sync.
        value = first.detach().clone() if first.numel() == 1 else first.detach().float().sum()
        self.losses.append((self.steps + 1, value))

    # -- host syncs ----------------------------------------------------------------------
    def count(self, kind: str) -> None:
        self.pending[kind, self.script_line()] += 1

    def script_line(self) -> int:
        """The line of the innermost frame in the user's script; 0 when none is on the stack."""
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.script:
                return frame.f_lineno
            frame = frame.f_back
        return 0


def parameter_names(torch: Any, optimizer: Any) -> dict[int, str]:
    """Names of the optimizer's parameters from the root modules alive now, wrappers dropped.

    A parameter found under several roots takes its shortest name; a clash between
    different parameters is resolved in the optimizer's order with a `#N` suffix.
    """
    modules = [o for o in gc.get_objects() if issubclass(type(o), torch.nn.Module)]
    children = {id(child) for m in modules for child in m.children()}
    candidates: dict[int, list[str]] = {}
    for root in (m for m in modules if id(m) not in children):
        for name, parameter in root.named_parameters():
            parts = [p for p in name.split(".") if p not in WRAPPER_COMPONENTS]
            candidates.setdefault(id(parameter), []).append(".".join(parts))
    names: dict[int, str] = {}
    taken: set[str] = set()
    for g, group in enumerate(optimizer.param_groups):
        for i, parameter in enumerate(group["params"]):
            found = sorted(candidates.get(id(parameter), []), key=lambda n: (len(n), n))
            name = found[0] if found else f"group{g}.param{i}"
            unique, k = name, 2
            while unique in taken:
                unique, k = f"{name}#{k}", k + 1
            taken.add(unique)
            names[id(parameter)] = unique
    return names


def make_sync_mode(torch: Any, recorder: Recorder, cpu_run: bool) -> Any:
    """A TorchFunctionMode counting conversions of tensors to Python values or host memory.

    On an accelerator these wait for the device. On a CPU-only run nothing waits, so what
    is counted is what would sync on a GPU: conversions made by code outside torch itself
    (torch's own CPU-side bookkeeping, such as an optimizer's step counter, is left out).
    """
    from torch.overrides import TorchFunctionMode

    tensor = torch.Tensor
    conversions = {
        getattr(tensor, name)
        for name in (
            "item",
            "tolist",
            "numpy",
            "__bool__",
            "__float__",
            "__int__",
            "__index__",
            "__format__",
            "__repr__",
            "__array__",
        )
    }
    copies = {tensor.cpu, tensor.to}
    torch_dir = os.path.dirname(torch.__file__) + os.sep

    def called_from_torch() -> bool:
        frame: types.FrameType | None = sys._getframe(3)
        while frame is not None and frame.f_code.co_filename.endswith(DISPATCH_FILES):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_filename.startswith(torch_dir)

    is_compiling = getattr(
        getattr(torch, "compiler", None), "is_compiling", lambda: False
    )  # torch < 2.1 has none

    class SyncCounter(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if is_compiling():  # torch.compile traces through modes: stay out of its graphs
                return func(*args, **(kwargs or {}))
            result = func(*args, **(kwargs or {}))
            if (func in conversions or func in copies) and args and isinstance(args[0], tensor):
                if counts(func, args[0], result):
                    recorder.count("conversion")
            return result

    def counts(func: Any, value: Any, result: Any) -> bool:
        on_device = value.device.type not in ("cpu", "meta")
        if func in copies:
            return on_device and isinstance(result, tensor) and result.device.type == "cpu"
        if on_device:
            return True
        return cpu_run and not called_from_torch()

    return SyncCounter()


def watch_cuda_syncs(torch: Any, recorder: Recorder) -> None:
    """Count the warnings of torch.cuda.set_sync_debug_mode, attributing each to a script line."""
    warnings.filterwarnings("always", message=CUDA_SYNC_WARNING)
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if CUDA_SYNC_WARNING in str(message):
            recorder.count("cuda")
            return
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    torch.cuda.set_sync_debug_mode("warn")


def seed_everything(torch: Any, seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # seeds every CUDA device too
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


def execute(script: str, argv0: str, source: str, args: list[str]) -> None:
    """Run `source` as `python argv0 args` would run the script at `script`.

    The source is compiled under the script's own file name, so `__file__`, tracebacks and
    sync attribution point at the user's file even when the text is the fixed version.
    """
    code = compile(source, script, "exec", dont_inherit=True)
    linecache.cache[script] = (len(source), None, source.splitlines(True), script)
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": script, "__builtins__": builtins, "__cached__": None})
    sys.modules["__main__"] = main
    sys.argv = [argv0, *args]
    exec(code, main.__dict__)


def run(spec: dict[str, Any], write: Any) -> dict[str, Any]:
    """Run the script described by `spec`; `write(results)` saves results (also early, for a timeout)."""
    results: dict[str, Any] = {"status": "crashed", "steps": 0, "environment": environment()}
    try:
        import torch
    except ImportError:
        return {
            **results,
            "status": "no-torch",
            "error": f"torch is not installed in this Python ({sys.executable}): "
            "install torchlint's verify extra there (`pip install 'torchlint[verify]'`)",
        }
    cuda = torch.cuda.is_available()
    results["environment"].update(
        torch=torch.__version__,
        threads=torch.get_num_threads(),
        gpu=torch.cuda.get_device_name() if cuda else None,
    )
    if spec["device"] == "cuda" and not cuda:
        return {**results, "status": "no-cuda", "error": "no CUDA device is available"}
    write({**results, "status": "running"})
    recorder = Recorder(torch, spec["script"], spec["steps"])
    seed_everything(torch, spec["seed"])
    undo = install(torch, recorder, cuda)
    try:
        with make_sync_mode(torch, recorder, cpu_run=not cuda):
            execute(
                spec["script"],
                spec["argv0"],
                Path(spec["source"]).read_text(encoding="utf-8"),
                spec["args"],
            )
        results["status"] = "completed"
    except StopRun:
        results["status"] = "stopped"
    except SystemExit as exit:
        code = exit.code
        results["status"] = "completed" if code in (None, 0) else "exited"
        results["exit_code"] = code if isinstance(code, int) else 1
    except BaseException as error:  # the script's own failure: report it, never re-raise
        print_script_traceback(error)
        results["error"] = describe(error, spec["script"])
    finally:
        undo()
    try:
        results.update(summarise(torch, recorder, cuda))
    except Exception as error:  # e.g. a CUDA error the script left behind
        results.update(
            status="crashed",
            error=results.get("error")
            or f"cannot read the results: {describe(error, spec['script'])}",
        )
    return results


def print_script_traceback(error: BaseException) -> None:
    """The traceback as `python SCRIPT` would print it: the runner's own frames left out."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb)


def install(torch: Any, recorder: Recorder, cuda: bool):
    """Install the global hooks; returns the function that removes them."""
    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    handles = [
        register_optimizer_step_pre_hook(recorder.pre_step),
        register_optimizer_step_post_hook(recorder.post_step),
    ]
    tensor_backward, autograd_backward = torch.Tensor.backward, torch.autograd.backward
    torch.Tensor.backward = recorder.wrap_backward(tensor_backward)
    torch.autograd.backward = recorder.wrap_backward(autograd_backward)
    if cuda:
        watch_cuda_syncs(torch, recorder)

    def undo() -> None:
        for handle in handles:
            handle.remove()
        torch.Tensor.backward, torch.autograd.backward = tensor_backward, autograd_backward
        if cuda:
            torch.cuda.set_sync_debug_mode(0)

    return undo


def describe(error: BaseException, script: str) -> str:
    """`Type: message`, and the script line it came from when it did."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == script]
    return f"{text} (line {lines[-1]})" if lines else text


def summarise(torch: Any, recorder: Recorder, cuda: bool) -> dict[str, Any]:
    """Convert what the hooks kept into plain values: the first (and only) device sync."""
    if cuda:
        torch.cuda.synchronize()
    return {
        "steps": recorder.steps,
        "optimizers": len(recorder.optimizers),
        "device": "cuda" if recorder.on_cuda else "cpu",
        "step_times_ms": step_times(recorder),
        "losses": [[step, float(value.double().item())] for step, value in recorder.losses],
        **sync_counts(recorder, cuda),
        "peak_memory": peak_memory(torch, recorder.on_cuda),
        "parameters": fingerprints(torch, recorder),
    }


def sync_counts(recorder: Recorder, cuda: bool) -> dict[str, Any]:
    """Syncs over the steady steps (between the first and the last step end), and in all."""
    steady = recorder.steady
    everything = steady + recorder.outside + recorder.pending

    def total(counter: Counter[tuple[str, int]], kind: str) -> int:
        return sum(n for (k, _), n in counter.items() if k == kind)

    lines: Counter[int] = Counter()
    for (_, line), n in steady.items():
        lines[line] = max(lines[line], n)  # item() on CUDA is seen by both counters
    return {
        "steady_steps": max(recorder.steps - 1, 0),
        "syncs": total(steady, "conversion"),
        "cuda_syncs": total(steady, "cuda") if cuda else None,
        "syncs_in_all": total(everything, "conversion"),
        "cuda_syncs_in_all": total(everything, "cuda") if cuda else None,
        "sync_lines": {str(line): n for line, n in lines.items()},
    }


def step_times(recorder: Recorder) -> list[float]:
    """Milliseconds between consecutive step ends (the first step, with its warm-up, has none)."""
    marks = recorder.marks
    if recorder.on_cuda:
        return [before.elapsed_time(after) for before, after in zip(marks, marks[1:])]
    return [(after - before) * 1000 for before, after in zip(marks, marks[1:])]


def peak_memory(torch: Any, on_cuda: bool) -> dict[str, Any]:
    if on_cuda:
        return {"kind": "cuda", "bytes": int(torch.cuda.max_memory_allocated())}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"kind": "rss", "bytes": int(rss if sys.platform == "darwin" else rss * 1024)}


def fingerprints(torch: Any, recorder: Recorder) -> list[dict[str, Any]]:
    """Final parameters of every optimizer seen: shape, float64 sum and norm, and values."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()
    for o, optimizer in enumerate(recorder.optimizers):
        for g, group in enumerate(optimizer.param_groups):
            for i, parameter in enumerate(group["params"]):
                if id(parameter) in seen:
                    continue
                seen.add(id(parameter))
                name = recorder.names.get(id(parameter), f"optimizer{o}.group{g}.param{i}")
                found.append({"name": name, **fingerprint(torch, parameter)})
    return found


def fingerprint(torch: Any, parameter: Any) -> dict[str, Any]:
    flat = parameter.detach().reshape(-1)
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    sampled = flat.numel() > SAMPLE
    values = (
        flat[torch.linspace(0, flat.numel() - 1, SAMPLE, device=flat.device).long()]
        if sampled
        else flat
    )
    return {
        "shape": list(parameter.shape),
        "dtype": str(parameter.dtype).removeprefix("torch."),
        "sum": float(flat.sum(dtype=torch.float64).item()),
        "norm": float(torch.linalg.vector_norm(flat, dtype=torch.float64).item()),
        "sampled": sampled,
        "values": values.double().cpu().tolist(),
    }


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpu": cpu_name(),
        "threads": None,
        "gpu": None,
        "torch": None,
    }


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str]) -> int:
    die_with_parent()
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    # On a timeout the parent sends SIGTERM first: print where every thread was, then die.
    faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    sys.path[0] = os.path.dirname(spec["script"])

    def write(results: dict[str, Any]) -> None:
        Path(spec["results"]).write_text(json.dumps(results), encoding="utf-8")

    write(run(spec, write))
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
